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
package final class GIFIncrementalDecoder: IncrementalImageDecoder {
    private let options: ImageDecodingOptions
    private var data = Data()
    private var previewShown = false
    /// Once the first image descriptor has arrived: the next sub-block of its data to look
    /// at, so that each call resumes where the last one stopped.
    private var cursor: Int?

    package init(options: ImageDecodingOptions) {
        self.options = options
    }

    /// Adds bytes; fails as soon as the screen descriptor shows the file is not a usable GIF
    /// or its screen is over the pixel limit.
    package func append(_ chunk: Data) throws {
        let hadScreen = data.count >= 13
        data.append(chunk)
        if !hadScreen, data.count >= 13 {
            try data.withUnsafeBytes { try GIFStream.checkScreen($0, maximumPixelCount: options.maximumPixelCount) }
        }
    }

    package func preview() throws -> ImageContainer? {
        guard !previewShown, data.count >= 13, try firstFrameIsComplete() else { return nil }
        var container: ImageContainer = try data.withUnsafeBytes { bytes in
            var options = options
            options.firstFrameOnly = true
            var renderer = try GIFRenderer(bytes, options: options)
            return try renderer.render()
        }
        previewShown = true
        container.isPreview = true
        return try CoderRegistry.finish(container, options: options)
    }

    package func finish() throws -> ImageContainer {
        let container = try data.withUnsafeBytes { bytes in
            var renderer = try GIFRenderer(bytes, options: options)
            return try renderer.render()
        }
        return try CoderRegistry.finish(container, options: options)
    }

    /// Whether the first frame's data sub-blocks have all arrived, resuming the scan where
    /// the previous call left it.
    private func firstFrameIsComplete() throws -> Bool {
        try data.withUnsafeBytes { bytes in
            if cursor == nil {
                // The global colour table has not all arrived: nothing to look at yet.
                let flags = bytes[10]
                if flags & 0x80 != 0, bytes.count < 13 + 3 * (2 << Int(flags & 7)) { return false }
                var stream = try GIFStream(bytes)
                guard let first = stream.nextFrame() else { return false }
                if first.isComplete { return true }
                // Just past the LZW minimum code size, once it is there.
                guard first.data.lowerBound < bytes.count else { return false }
                cursor = first.data.lowerBound + 1
            }
            var position = cursor!
            while position < bytes.count {
                let size = Int(bytes[position])
                if size == 0 { return true }
                position += 1 + size
            }
            // Stop at the last sub-block boundary reached (it may lie beyond the bytes so far).
            cursor = position
            return false
        }
    }
}
