import CCodecShims
import Foundation
import WebImageCore

/// Decodes a PNG as it arrives, through libpng's progressive reader: each appended chunk is
/// pushed to libpng once, and the rows it completes land in a canvas that starts transparent.
///
/// A preview of a plain PNG shows the rows decoded so far, the rest transparent. An
/// interlaced (Adam7) PNG gives a coarse full image early: every pixel is copied from the
/// top-left pixel of its Adam7 block at the finest pass completed (8×8 blocks after the first
/// pass, 4×8 after the second, … single pixels after the seventh). ``preview()`` returns `nil`
/// until something new has been decoded since the last preview.
///
/// An APNG previews its default image while it arrives when that image is the animation's
/// first frame (and shows nothing early otherwise); ``finish()`` then decodes the animation
/// from the bytes kept. For a plain PNG ``finish()`` returns the progressive result itself,
/// without decoding again.
///
/// ```swift
/// let incremental = PNGDecoder().makeIncrementalDecoder(options: .init())!
/// try incremental.append(bytes.prefix(bytes.count / 2))
/// let preview = try incremental.preview()   // the top rows
/// try incremental.append(bytes.dropFirst(bytes.count / 2))
/// let image = try incremental.finish()
/// ```
package final class PNGIncrementalDecoder: IncrementalImageDecoder {
    private let options: ImageDecodingOptions
    private let stream: OpaquePointer?
    /// Every byte appended: the chunk walk for metadata and APNG needs the file, and the
    /// canvas, not these bytes, is what dominates memory.
    private var data = Data()
    private var failure: ImageError?
    private var rowsAtLastPreview: UInt64 = 0
    /// Whether a preview may show the default image, and the metadata previews carry: `nil`
    /// until the chunks before the image data have arrived.
    private var previewPlan: (showsDefaultImage: Bool, metadata: PNGDecoder.Metadata)?

    package init(options: ImageDecodingOptions) {
        self.options = options
        stream = wi_png_stream_create(UInt64(max(0, options.maximumPixelCount)))
    }

    deinit {
        wi_png_stream_destroy(stream)
    }

    package func append(_ chunk: Data) throws {
        let hadHeader = data.count >= 33
        data.append(chunk)
        if let failure { throw failure }
        if !hadHeader, data.count >= 33 {
            // Signature, IHDR and the pixel limit as soon as they are in, before libpng (which
            // reports the header only when the image data starts) allocates anything.
            do {
                try data.withUnsafeBytes { try PNGDecoder.checkLimits(try PNGFile($0), $0, options: options) }
            } catch let error as ImageError {
                failure = error
                throw error
            }
        }
        guard let stream else {
            failure = .tooLarge("PNG: out of memory for the progressive decoder")
            throw failure!
        }
        let status = chunk.withUnsafeBytes { bytes in
            wi_png_stream_feed(stream, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
        if status != WI_PNG_OK {
            failure = LibPNG.error(status, "PNG: \(String(cString: wi_png_stream_message(stream)))")
            throw failure!
        }
    }

    package func preview() throws -> ImageContainer? {
        if let failure { throw failure }
        guard let stream else { return nil }
        var state = wi_png_stream_state()
        wi_png_stream_get_state(stream, &state)
        guard state.has_header != 0, state.rows_delivered > rowsAtLastPreview,
              let plan = try planPreviews(), plan.showsDefaultImage else { return nil }
        rowsAtLastPreview = state.rows_delivered
        let width = Int(state.width), height = Int(state.height)
        let image = try Bitmap(width: width, height: height, pixelFormat: .rgba8) { pixels in
            wi_png_stream_render(stream, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), width * 4)
        }
        let preview = ImageContainer(image: image, format: .png, isPreview: true,
                                     orientation: plan.metadata.orientation, iccProfile: plan.metadata.iccProfile)
        return try CoderRegistry.finishInColorSpace(preview, options: options)
    }

    package func finish() throws -> ImageContainer {
        var state = wi_png_stream_state()
        if let stream { wi_png_stream_get_state(stream, &state) }
        let container: ImageContainer = try data.withUnsafeBytes { bytes in
            let file = try PNGFile(bytes)
            guard failure == nil, let stream, state.done != 0,
                  file.animation == nil || file.animation?.declaredFrameCount == 0 else {
                // APNG, or the progressive decode failed or did not finish: decode the bytes
                // whole, which animates, or reports the precise error.
                return try PNGDecoder.decode(bytes, options: options)
            }
            try PNGDecoder.checkLimits(file, bytes, options: options)
            let metadata = PNGDecoder.Metadata(file, bytes)
            let width = Int(state.width), height = Int(state.height)
            let image = try Bitmap(width: width, height: height, pixelFormat: .rgba8) { pixels in
                wi_png_stream_render(stream, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), width * 4)
            }
            return ImageContainer(image: image, format: .png, orientation: metadata.orientation, iccProfile: metadata.iccProfile)
        }
        return try CoderRegistry.finishInColorSpace(container, options: options)
    }

    /// A preview shows the default image unless the file is an APNG whose default image is
    /// not part of the animation. Decided once the first `IDAT` has arrived, when the chunks
    /// that decide it (and the metadata) are all in.
    private func planPreviews() throws -> (showsDefaultImage: Bool, metadata: PNGDecoder.Metadata)? {
        if let previewPlan { return previewPlan }
        previewPlan = try data.withUnsafeBytes { bytes in
            let file = try PNGFile(bytes)
            guard file.firstIDAT != nil else { return nil }
            // With acTL, the default image is shown only when an fcTL before IDAT made it the
            // first frame.
            let shows = !file.declaresAnimation || file.animation?.frames.first?.usesDefaultImage == true
            return (shows, PNGDecoder.Metadata(file, bytes))
        }
        return previewPlan
    }
}
