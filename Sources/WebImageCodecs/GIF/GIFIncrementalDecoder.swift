import Foundation
import WebImageCore

/// Decodes a GIF as it arrives: nothing to show until the first frame's data is complete, then
/// that frame, once; ``finish()`` decodes the whole file.
///
/// GIF frames are LZW streams without restart points, so a partial frame could only be shown
/// by decoding it again from its start for every chunk; waiting for the first whole frame
/// costs no repeated work: the walk over the arriving blocks skips sub-blocks without decoding
/// them, and the first frame is decoded exactly once for its preview.
///
/// ```swift
/// let incremental = GIFDecoder().makeIncrementalDecoder(options: .init())!
/// try incremental.append(chunk)
/// if let first = try incremental.preview() { show(first) }   // once the first frame is in
/// let animation = try incremental.finish()
/// ```
public final class GIFIncrementalDecoder: IncrementalImageDecoder {
    private let options: ImageDecodingOptions
    private var data = Data()
    private var previewShown = false

    public init(options: ImageDecodingOptions) {
        self.options = options
    }

    /// Adds bytes; fails early once the header shows the file is not a usable GIF or its
    /// screen is over the pixel limit.
    public func append(_ chunk: Data) throws {
        let hadHeader = data.count >= 13
        data.append(chunk)
        if !hadHeader, data.count >= 13 {
            _ = try data.withUnsafeBytes { try GIFRenderer($0, options: options) }
        }
    }

    public func preview() throws -> ImageContainer? {
        guard !previewShown, data.count >= 13 else { return nil }
        let container: ImageContainer? = try data.withUnsafeBytes { bytes in
            var stream = try GIFStream(bytes)
            guard let first = stream.nextFrame(), first.isComplete else { return nil }
            var options = options
            options.firstFrameOnly = true
            var renderer = try GIFRenderer(bytes, options: options)
            return try renderer.render()
        }
        guard var container else { return nil }
        previewShown = true
        container.isPreview = true
        return try CoderRegistry.finish(container, options: options)
    }

    public func finish() throws -> ImageContainer {
        let container = try data.withUnsafeBytes { bytes in
            var renderer = try GIFRenderer(bytes, options: options)
            return try renderer.render()
        }
        return try CoderRegistry.finish(container, options: options)
    }
}
