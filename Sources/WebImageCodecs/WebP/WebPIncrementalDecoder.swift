import CWebP
import Foundation
import WebImageCore

/// Decodes a still WebP as it arrives, through libwebp's incremental decoder (`WebPIDecode` +
/// `WebPIUpdate`): each chunk decodes only the macroblock rows it completes, and nothing is
/// decoded twice.
///
/// - The decoder writes into one canvas-sized buffer (or thumbnail-sized: libwebp's scaler works
///   incrementally too) allocated once the header has arrived and the limits have been checked.
///   libwebp reads the compressed bytes from the buffer this object accumulates (its "map" mode),
///   so they are held once.
/// - A preview holds the rows decoded so far, from the top; rows not yet decoded are transparent
///   black (0, 0, 0, 0), so whatever is behind the image shows there. A preview is offered only
///   when more rows have arrived since the last one.
/// - Previews must be oriented like the final image. When a `VP8X` header announces an `EXIF`
///   chunk, which the WebP layout places after the image data, there is no preview until that
///   chunk has arrived (in practice, none before the end of the file).
/// - Animated WebP: libwebp has no incremental animation decoder, so no previews; the bytes are
///   gathered and ``finish()`` decodes every frame at once.
/// - ``finish()`` returns exactly what ``WebPDecoder/decode(_:options:)`` followed by
///   ``CoderRegistry/finish(_:options:)`` returns. It copies the finished buffer into the bitmap
///   once; a file that ends early fails with ``ImageError/corruptData(_:)``.
final class WebPIncrementalDecoder: IncrementalImageDecoder {
    private enum Phase {
        /// Waiting for enough bytes to read the header.
        case header
        /// A still image, decoding as bytes arrive.
        case decoding
        /// An animation: gathering bytes for ``finish()``.
        case gathering
    }

    private let options: ImageDecodingOptions
    private var bytes: [UInt8] = []
    private var phase = Phase.header
    private var failure: ImageError?

    // Set once decoding starts.
    private var decoder: OpaquePointer?
    private var config: UnsafeMutablePointer<WebPDecoderConfig>?
    private var output = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private var outputWidth = 0, outputHeight = 0
    private var canvasWidth = 0, canvasHeight = 0
    /// Whether the header flags an `EXIF` or `ICCP` chunk not read yet.
    private var pendingEXIF = false, pendingICC = false
    private var orientation = ImageOrientation.up
    private var iccProfile: Data?
    private var complete = false
    private var rowsShown = 0

    init(options: ImageDecodingOptions) {
        self.options = options
    }

    deinit {
        if let decoder { WebPIDelete(decoder) }
        config?.deallocate()
        output.deallocate()
    }

    func append(_ chunk: Data) throws {
        if let failure { throw failure }
        bytes.append(contentsOf: chunk)
        do {
            if phase == .header { try start() }
            if phase == .decoding, !complete { try update() }
        } catch let error as ImageError {
            failure = error
            throw error
        }
    }

    func preview() throws -> ImageContainer? {
        if let failure { throw failure }
        guard phase == .decoding, let decoder else { return nil }
        resolveMetadata()
        guard !pendingEXIF else { return nil }
        var rows: Int32 = 0, width: Int32 = 0, height: Int32 = 0, stride: Int32 = 0
        guard WebPIDecGetRGB(decoder, &rows, &width, &height, &stride) != nil, Int(rows) > rowsShown else { return nil }
        let decodedBytes = Int(rows) * outputWidth * 4
        let image = try Bitmap(width: outputWidth, height: outputHeight, pixelFormat: .rgba8) { pixels in
            pixels.baseAddress!.copyMemory(from: output.baseAddress!, byteCount: decodedBytes)
            UnsafeMutableRawBufferPointer(rebasing: pixels[decodedBytes...]).initializeMemory(as: UInt8.self, repeating: 0)
        }
        rowsShown = Int(rows)
        let container = ImageContainer(
            image: image, format: .webp, isPreview: true, orientation: orientation, iccProfile: iccProfile)
        return try CoderRegistry.finishInColorSpace(container, options: options)
    }

    func finish() throws -> ImageContainer {
        if let failure { throw failure }
        switch phase {
        case .header:
            throw ImageError.corruptData("WebP: the file ends before its header is complete")
        case .gathering:
            return try CoderRegistry.finishInColorSpace(bytes.withUnsafeBytes { try WebPDecoder.decode($0, options: options) }, options: options)
        case .decoding:
            guard complete else {
                var rows: Int32 = 0
                _ = WebPIDecGetRGB(decoder, &rows, nil, nil, nil)
                throw ImageError.corruptData("WebP: the file ends early, \(rows) of \(outputHeight) rows decoded")
            }
            // The whole file is here: read its metadata as the one-shot decoder does.
            let file = try bytes.withUnsafeBytes { try WebPFile($0, options: options) }
            let size = WebPFile.decodeSize(width: canvasWidth, height: canvasHeight, orientation: file.orientation, options: options)
            if (size?.width ?? canvasWidth) != outputWidth || (size?.height ?? canvasHeight) != outputHeight {
                // The orientation arrived after decoding began and turns a thumbnail box the
                // other way: the one-shot decode scales differently, so use it.
                return try CoderRegistry.finishInColorSpace(bytes.withUnsafeBytes { try WebPDecoder.decode($0, options: options) }, options: options)
            }
            let image = try Bitmap(width: outputWidth, height: outputHeight, pixelFormat: .rgba8) { pixels in
                pixels.copyMemory(from: UnsafeRawBufferPointer(output))
            }
            let container = ImageContainer(image: image, format: .webp, orientation: file.orientation, iccProfile: file.iccProfile)
            return try CoderRegistry.finishInColorSpace(container, options: options)
        }
    }

    /// Reads the header once enough bytes are here, checks the limits, and sets up libwebp's
    /// incremental decoder writing into a buffer of the output size.
    private func start() throws {
        var features = WebPBitstreamFeatures()
        let status = bytes.withUnsafeBufferPointer { WebPGetFeatures($0.baseAddress, $0.count, &features) }
        if status == VP8_STATUS_NOT_ENOUGH_DATA { return }
        guard status == VP8_STATUS_OK else { throw WebPStatus.error(status, "reading the header") }
        canvasWidth = Int(features.width)
        canvasHeight = Int(features.height)
        try WebPFile.checkPixelCount(width: canvasWidth, height: canvasHeight, options)
        if features.has_animation != 0 {
            phase = .gathering
            return
        }
        let extended = bytes.withUnsafeBytes { WebPFile.isExtended($0) }
        // VP8X flags: ICC profile 0x20, EXIF 0x08.
        pendingICC = extended && bytes[20] & 0x20 != 0
        pendingEXIF = extended && bytes[20] & 0x08 != 0
        resolveMetadata()

        var size = WebPFile.decodeSize(width: canvasWidth, height: canvasHeight, orientation: orientation, options: options)
        if pendingEXIF, options.appliesOrientation, options.thumbnail != nil {
            // The orientation is not known yet: decode at the larger of the sizes the two
            // possible turns ask for, so the result is never smaller than the thumbnail.
            let turned = WebPFile.decodeSize(width: canvasWidth, height: canvasHeight, orientation: .right, options: options)
            let widest = max(size?.width ?? canvasWidth, turned?.width ?? canvasWidth)
            let tallest = max(size?.height ?? canvasHeight, turned?.height ?? canvasHeight)
            size = widest == canvasWidth && tallest == canvasHeight ? nil : (widest, tallest)
        }
        outputWidth = size?.width ?? canvasWidth
        outputHeight = size?.height ?? canvasHeight

        output = .allocate(byteCount: outputWidth * 4 * outputHeight, alignment: 16)
        let config = UnsafeMutablePointer<WebPDecoderConfig>.allocate(capacity: 1)
        self.config = config
        config.initialize(to: try WebPDecoder.makeConfig(output: output, width: outputWidth, height: outputHeight, scaled: size != nil))
        // libwebp keeps `config` for the decoder's lifetime; it is ours until deinit.
        guard let decoder = WebPIDecode(nil, 0, config) else {
            throw ImageError.tooLarge("WebP: libwebp could not create an incremental decoder")
        }
        self.decoder = decoder
        phase = .decoding
    }

    /// Lets libwebp decode what the new bytes complete. In map mode libwebp remembers where
    /// the bytes were only to re-base its readers on the next call; it reads them only inside
    /// `WebPIUpdate`, which is always given the array's current address (growth may move it).
    private func update() throws {
        let status = bytes.withUnsafeBufferPointer { WebPIUpdate(decoder, $0.baseAddress, $0.count) }
        switch status {
        case VP8_STATUS_OK: complete = true
        case VP8_STATUS_SUSPENDED: break
        default: throw WebPStatus.error(status, "decoding incrementally")
        }
    }

    /// Picks up the `ICCP` and `EXIF` chunks the header announced, once they are complete.
    private func resolveMetadata() {
        guard pendingICC || pendingEXIF else { return }
        bytes.withUnsafeBufferPointer { buffer in
            var data = WebPData(bytes: buffer.baseAddress, size: buffer.count)
            var state = WEBP_DEMUX_PARSING_HEADER
            guard let demuxer = WebPDemuxPartial(&data, &state) else { return }
            defer { WebPDemuxDelete(demuxer) }
            if pendingICC, let chunk = WebPFile.chunk("ICCP", in: demuxer) {
                iccProfile = Data(chunk)
                pendingICC = false
            }
            if pendingEXIF, let chunk = WebPFile.chunk("EXIF", in: demuxer) {
                orientation = Exif.orientation(inExifChunk: chunk) ?? .up
                pendingEXIF = false
            }
            // Everything parsed and the chunk still missing: the header's flag was wrong.
            if state == WEBP_DEMUX_DONE {
                pendingICC = false
                pendingEXIF = false
            }
        }
    }
}
