import Foundation
import WebImageCore

/// Decodes a JPEG as it arrives, without ever starting over: libjpeg's source suspends when
/// the bytes run out and resumes where it stopped when the next chunk is appended.
///
/// - Progressive (and other multi-scan) files use libjpeg's buffered-image mode: each chunk is
///   read into the coefficient buffer, and a preview is an output pass over it, offered each
///   time another scan has completed and changed the picture (a coarse whole image first,
///   sharper with each scan).
/// - Single-scan (baseline) files decode row by row into the final bitmap; a preview shows the
///   rows decoded so far, the rest opaque mid-grey (128, 128, 128), the same grey libjpeg
///   gives the missing part of a truncated file.
///
/// Previews and the final image are finished like a registry decode (orientation applied
/// unless ``ImageDecodingOptions/appliesOrientation`` is off, then the exact thumbnail size),
/// and ``finish()`` returns the same pixels a full ``JPEGDecoder`` decode of the same bytes
/// returns, on intact data. On damaged data (libjpeg warns, and both mark the result
/// ``ImageContainer/isComplete`` `false`) the rows after the damage can differ with the way the
/// bytes were split: libjpeg-turbo's fast and slow Huffman decoders, chosen by how much input is
/// buffered, treat corrupt codes differently. Limits are checked as soon as the header has arrived: ``append(_:)`` throws
/// ``ImageError/tooLarge(_:)`` before any pixel buffer exists.
///
/// ```swift
/// let incremental = JPEGDecoder().makeIncrementalDecoder(options: .init())!
/// for chunk in chunks {
///     try incremental.append(chunk)
///     if let preview = try incremental.preview() { show(preview.image) }
/// }
/// show(try incremental.finish().image)
/// ```
package final class JPEGIncrementalDecoder: IncrementalImageDecoder {
    private let options: ImageDecodingOptions
    private let convertsToSRGB: Bool
    private let decompressor: LibJPEGDecompressor?
    private var failure: ImageError?

    private var header: JPEGHeader?
    private var buffered = false
    private var started = false
    private var width = 0
    private var height = 0
    /// The output bitmap being filled (row by row) or overwritten (by each output pass).
    private var pixels: [UInt8] = []

    private var rowsDecoded = 0
    private var rowsShown = 0
    private var completeScans = 0
    private var scansShown = 0
    private var inputFinished = false
    private var ended = false
    /// The pixels of the last progressive preview (shared with it, not copied).
    private var lastShown: [UInt8]?
    private var result: ImageContainer?
    /// The conversion through a CMYK file's profile (see ``JPEGDecoder``), once the header is read.
    private var cmyk: SRGBTransform?

    package init(options: ImageDecodingOptions, convertsToSRGB: Bool = false) {
        self.options = options
        self.convertsToSRGB = convertsToSRGB
        do {
            decompressor = try LibJPEGDecompressor()
        } catch {
            decompressor = nil
            failure = error as? ImageError ?? .corruptData("JPEG: \(error)")
        }
    }

    /// Input bytes held until libjpeg consumes them (tests check it stays small: the decoder
    /// keeps no copy of the whole file).
    var bufferedInputBytes: Int { decompressor?.bufferedInputBytes ?? 0 }

    package func append(_ chunk: Data) throws {
        try guarded { decompressor in
            guard result == nil, !ended else {
                throw ImageError.corruptData("JPEG: bytes appended after finish()")
            }
            // Once the image is complete, whatever follows (trailing data) is not kept.
            guard !imageComplete else { return }
            try decompressor.append(chunk)
            try advance(decompressor)
        }
    }

    package func preview() throws -> ImageContainer? {
        try guarded { decompressor in
            guard result == nil, let header, started else { return nil }
            if buffered {
                guard completeScans > scansShown else { return nil }
                try pixels.withUnsafeMutableBytes { buffer in
                    try decompressor.output(scan: completeScans, into: buffer, bytesPerRow: width * 4)
                }
                scansShown = completeScans
                // A scan can leave the output unchanged (at a DCT scale of 1/8 only the DC
                // coefficients show, so the AC scans add nothing): not more than last time.
                if let lastShown, Self.equal(lastShown, pixels) { return nil }
                lastShown = pixels
            } else {
                guard rowsDecoded > rowsShown else { return nil }
                rowsShown = rowsDecoded
            }
            return try container(header: header, isPreview: true)
        }
    }

    package func finish() throws -> ImageContainer {
        if let result { return result }
        return try guarded { decompressor in
            ended = true
            decompressor.endInput()
            try advance(decompressor)
            guard let header, started else {
                throw ImageError.corruptData("JPEG: the header is incomplete")
            }
            guard decompressor.scanBytes > 2 else {
                throw ImageError.corruptData("JPEG: the file ends before any image data")
            }
            if buffered {
                guard inputFinished else { throw ImageError.corruptData("JPEG: the input did not reach its end") }
                try pixels.withUnsafeMutableBytes { buffer in
                    try decompressor.output(scan: completeScans, into: buffer, bytesPerRow: width * 4)
                }
            } else {
                guard rowsDecoded == height else { throw ImageError.corruptData("JPEG: decompression stopped early") }
            }
            var container = try container(header: header, isPreview: false)
            // libjpeg warns when it decodes past the end of the data or past damage.
            container.isComplete = decompressor.warnings == 0
            result = container
            pixels = []
            lastShown = nil
            return container
        }
    }

    /// Runs `body` unless an earlier call failed; a failure sticks, as libjpeg's state is gone.
    private func guarded<T>(_ body: (LibJPEGDecompressor) throws -> T) throws -> T {
        if let failure { throw failure }
        guard let decompressor else { throw ImageError.corruptData("JPEG: no decompressor") }
        do {
            return try body(decompressor)
        } catch {
            let imageError = error as? ImageError ?? .corruptData("JPEG: \(error)")
            failure = imageError
            throw imageError
        }
    }

    /// Takes the decode as far as the bytes so far allow.
    private func advance(_ decompressor: LibJPEGDecompressor) throws {
        if header == nil {
            guard let info = try decompressor.readHeader() else { return }
            header = try JPEGHeader(info, decompressor: decompressor, options: options)
            buffered = info.multiple_scans != 0
            cmyk = JPEGDecoder.cmykTransform(header!, options: options, always: convertsToSRGB)
            if cmyk != nil { decompressor.keepCMYK() }
        }
        guard let header else { return }
        if !started {
            guard let size = try decompressor.start(eighths: header.eighths, buffered: buffered) else { return }
            (width, height) = size
            // Mid-grey where nothing has been decoded yet (see the type's documentation); kept
            // CMYK samples get libjpeg's own filler, 128 in every channel.
            let filler: UInt32 = cmyk == nil ? 0xFF80_8080 : 0x8080_8080
            pixels = [UInt8](unsafeUninitializedCapacity: width * height * 4) { buffer, count in
                UnsafeMutableRawBufferPointer(buffer).bindMemory(to: UInt32.self)
                    .initialize(repeating: filler.littleEndian)
                count = width * height * 4
            }
            started = true
        }
        if buffered {
            guard !inputFinished else { return }
            let (scans, finished) = try decompressor.consume()
            completeScans = scans
            inputFinished = finished
        } else if rowsDecoded < height {
            let rows = try pixels.withUnsafeMutableBytes { buffer in
                try decompressor.readRows(into: buffer, bytesPerRow: width * 4).rows
            }
            rowsDecoded = rows
        }
    }

    /// Every pixel has its final value (the last row decoded, or the end of the last scan read).
    private var imageComplete: Bool {
        started && (buffered ? inputFinished : rowsDecoded == height)
    }

    private static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && a.withUnsafeBytes { a in b.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
    }

    private func container(header: JPEGHeader, isPreview: Bool) throws -> ImageContainer {
        var bitmap = try Bitmap(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)
        if let cmyk { bitmap = cmyk.apply(bitmap) }
        let container = ImageContainer(
            image: bitmap,
            format: .jpeg,
            isPreview: isPreview,
            orientation: header.orientation,
            iccProfile: header.iccProfile
        )
        return try CoderRegistry.finishInColorSpace(container, options: options, always: convertsToSRGB)
    }
}
