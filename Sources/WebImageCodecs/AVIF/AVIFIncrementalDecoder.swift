import CAvif
import Foundation
import WebImageCore

/// Decodes AVIF as it arrives: libavif reads the file through an `avifIO` over the bytes so
/// far, which answers "waiting" for what lies past them (`allowIncremental`), and resumes
/// where it stopped when more has come.
///
/// - **Limits** are checked as soon as the container's boxes are in, before any pixel is
///   decoded, as ``AVIFDecoder`` checks them (a grid's tiles included).
/// - **Previews**: a grid image (tiled, as cameras and large encodes make them) shows the rows
///   of tiles decoded so far, the rest black (transparent when it has alpha), with the final
///   image's transforms, size and colour conversion. An image of one tile has nothing to show
///   before it is complete, and a sequence nothing: libavif decodes those only whole.
/// - ``finish()`` of a still image converts the image the appends decoded, so the AV1 work is
///   not repeated; the result equals ``AVIFDecoder``'s through the registry. A sequence is
///   decoded whole by ``AVIFDecoder`` from the gathered bytes. A file that ends early fails
///   with ``ImageError/corruptData(_:)``.
final class AVIFIncrementalDecoder: IncrementalImageDecoder {
    private let options: ImageDecodingOptions
    private let source = Source()
    private var decoder: UnsafeMutablePointer<avifDecoder>?
    private var failure: ImageError?
    private var isParsed = false
    private var isSequence = false
    private var isDecoded = false
    private var tilesChecked = false
    private var rowsShown = 0

    init(options: ImageDecodingOptions) {
        self.options = options
    }

    deinit {
        if let decoder { avifDecoderDestroy(decoder) }
    }

    func append(_ chunk: Data) throws {
        if let failure { throw failure }
        source.append(chunk)
        do {
            try advance()
        } catch let error as ImageError {
            failure = error
            throw error
        }
    }

    func preview() throws -> ImageContainer? {
        if let failure { throw failure }
        guard let decoder, isParsed, !isSequence, !isDecoded else { return nil }
        let rows = Int(avifDecoderDecodedRowCount(decoder))
        guard rows > rowsShown, rows < Int(decoder.pointee.image.pointee.height) else { return nil }
        rowsShown = rows
        return try container(of: decoder, decodedRows: rows)
    }

    func finish() throws -> ImageContainer {
        if let failure { throw failure }
        source.isComplete = true
        if isSequence || !isParsed {
            let container = try source.bytes.withUnsafeBytes { try AVIFDecoder.decode($0, options: options) }
            return try CoderRegistry.finishInColorSpace(container, options: options)
        }
        try advance()
        guard let decoder, isDecoded else { throw ImageError.corruptData("AVIF: the file ends early") }
        return try container(of: decoder, decodedRows: nil)
    }

    /// Parses the container once its boxes are in, then decodes a still image's tiles as far
    /// as the bytes go.
    private func advance() throws {
        if decoder == nil {
            // With the first frame only, a long sequence is not refused, as in AVIFDecoder.
            let decoder = try AVIFDecoder.configuredDecoder(options: options, imageCountLimit: options.firstFrameOnly ? 0 : nil)
            self.decoder = decoder
            decoder.pointee.allowIncremental = 1
            avifDecoderSetIO(decoder, source.makeIO())
        }
        guard let decoder, !isDecoded else { return }
        if !isParsed {
            guard try itemLengthsAreBounded() else { return }
            let result = avifDecoderParse(decoder)
            guard result != AVIF_RESULT_WAITING_ON_IO || source.isComplete else { return }
            try AVIFDecoder.check(result, decoder, "parsing the container")
            try AVIFDecoder.checkParsed(decoder, options: options)
            isParsed = true
            isSequence = decoder.pointee.imageCount > 1
            // The file's size is not known while it arrives, and libavif allocates an item's
            // whole claimed size (the sum of its extents) before reading it when the size is
            // unknown: fuzz finding #15 was a 3 KB file whose item claimed 3.8 GB. So a file may
            // be no larger than its image can code.
            let image = decoder.pointee.image.pointee
            decoder.pointee.io.pointee.sizeHint = UInt64(Self.codedBytesLimit(pixels: Int(image.width) * Int(image.height)))
        }
        guard !isSequence else { return }
        if !tilesChecked {
            // As in AVIFDecoder, before any tile is decoded. The census needs every box up to
            // `meta` whole: a file whose `mdat` comes first is checked once it is complete.
            guard ISOBMFFItems.tileCensus(source.bytes) != nil || source.isComplete else { return }
            try ISOBMFFItems.checkTiles(source.bytes, options: options, format: "AVIF")
            tilesChecked = true
        }
        let result = avifDecoderNextImage(decoder)
        guard result != AVIF_RESULT_WAITING_ON_IO || source.isComplete else { return }
        try AVIFDecoder.check(result, decoder, "decoding the image")
        isDecoded = true
    }

    /// Whether libavif may parse the bytes so far: `false` while the `meta` box is still
    /// arriving (a file that ends before it is whole is decoded by ``AVIFDecoder`` in
    /// ``finish()``). Throws when an item claims more bytes than an image within the pixel limit
    /// can code (``codedBytesLimit(pixels:)``, as the size hint set after parsing): libavif reads an item's
    /// claimed length into one allocation when it does not know the file's size (see
    /// ``ISOBMFFItems/largestItemLength(_:)``).
    private func itemLengthsAreBounded() throws -> Bool {
        guard let claimed = ISOBMFFItems.largestItemLength(source.bytes) else { return false }
        let limit = Self.codedBytesLimit(pixels: options.maximumPixelCount)
        guard claimed <= limit else {
            throw ImageError.corruptData("AVIF: an item claims \(claimed) bytes, more than an image within the limits can code (\(limit))")
        }
        return true
    }

    /// The most bytes `pixels` pixels can code: 8 bytes a pixel (16-bit samples in four planes,
    /// uncompressed) and 4 MiB of headroom, saturating.
    static func codedBytesLimit(pixels: Int) -> Int {
        let (coded, overflow) = pixels.multipliedReportingOverflow(by: 8)
        return overflow || coded > Int.max - (4 << 20) ? Int.max : coded + (4 << 20)
    }

    /// The image as decoded so far, finished as ``AVIFDecoder`` finishes its one frame.
    private func container(of decoder: UnsafeMutablePointer<avifDecoder>, decodedRows: Int?) throws -> ImageContainer {
        let image = decoder.pointee.image!
        let bitmap = try AVIFDecoder.frameBitmap(image, options: options, decodedRows: decodedRows)
        let container = ImageContainer(image: bitmap, format: .avif, isPreview: decodedRows != nil, iccProfile: AVIFDecoder.colorProfile(of: image))
        return try CoderRegistry.finishInColorSpace(container, options: options)
    }
}

extension AVIFIncrementalDecoder {
    /// The bytes so far, read by libavif through an `avifIO`: a read past them waits for more
    /// (`AVIF_RESULT_WAITING_ON_IO`) until the file is complete, then is cut short, as a read
    /// past the end of a whole file is.
    ///
    /// The buffer is allocated by hand, not an array, because a read returns a pointer into it
    /// that libavif uses after the callback has returned (until its next read: the `avifIO` is
    /// not persistent, so libavif copies what it keeps longer); it grows by doubling, and
    /// only between libavif's calls.
    final class Source {
        private(set) var base: UnsafeMutableRawPointer?
        private(set) var count = 0
        private var capacity = 0
        var isComplete = false

        deinit { base?.deallocate() }

        var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

        func append(_ chunk: Data) {
            guard !chunk.isEmpty else { return }
            if count + chunk.count > capacity {
                let grown = max(capacity * 2, count + chunk.count)
                let larger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
                if let base {
                    larger.copyMemory(from: base, byteCount: count)
                    base.deallocate()
                }
                base = larger
                capacity = grown
            }
            chunk.withUnsafeBytes { (base! + count).copyMemory(from: $0.baseAddress!, byteCount: chunk.count) }
            count += chunk.count
        }

        /// An `avifIO` reading this source, for `avifDecoderSetIO` (which owns it and calls its
        /// `destroy`); it holds the source unretained, so the source must outlive the decoder.
        func makeIO() -> UnsafeMutablePointer<avifIO> {
            let io = UnsafeMutablePointer<avifIO>.allocate(capacity: 1)
            io.initialize(to: avifIO())
            io.pointee.destroy = { $0?.deallocate() }
            io.pointee.read = { io, _, offset, size, out in
                guard let io, let out, let data = io.pointee.data else { return AVIF_RESULT_IO_ERROR }
                return Unmanaged<Source>.fromOpaque(data).takeUnretainedValue().read(offset: offset, size: size, into: out)
            }
            io.pointee.sizeHint = 0
            io.pointee.persistent = 0
            io.pointee.data = Unmanaged.passUnretained(self).toOpaque()
            return io
        }

        private func read(offset: UInt64, size: Int, into out: UnsafeMutablePointer<avifROData>) -> avifResult {
            guard offset <= UInt64(count) else { return isComplete ? AVIF_RESULT_IO_ERROR : AVIF_RESULT_WAITING_ON_IO }
            let available = count - Int(offset)
            if size > available, !isComplete { return AVIF_RESULT_WAITING_ON_IO }
            out.pointee.data = UnsafePointer(base?.advanced(by: Int(offset)).assumingMemoryBound(to: UInt8.self))
            out.pointee.size = min(size, available)
            return AVIF_RESULT_OK
        }
    }
}
