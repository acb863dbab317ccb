import CJPEGReference
import CWebP
import Foundation
import FuzzSupport
import WebImageCodecs
import WebImageCore

/// Every incremental decoder, fed the input in chunks whose sizes come from the input, asking
/// for a preview after each chunk as the progressive pipeline does. When both the incremental
/// and the one-shot decode succeed, the final images must be identical: a difference is a
/// finding. The one exception is a JPEG that libjpeg reports damaged (`isComplete == false`):
/// there the pixels after the damage may differ and only the size must agree (finding #3 in
/// docs/reliability.md: libjpeg-turbo's fast and slow Huffman decoders treat corrupt codes
/// differently, and how much input is buffered decides which one runs). The other is a WebP
/// whose pixels libwebp's own incremental decoder, fed the same chunks, makes differ from its
/// one-shot decode (finding #6: a corrupt lossy bitstream, where libwebp's result depends on
/// where the input was split): there too only the size must agree. The same holds for a JPEG
/// whose pixels libjpeg's own suspending decode, shown the same chunks, makes differ from its
/// decode of the whole buffer without any warning (finding #7: the fast Huffman path needs
/// enough buffered input, and a corrupt code that the two paths read differently is not always
/// reported).
private let registry = CoderRegistry.system()

func fuzzIncremental(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = FuzzInput.data(bytes, count)
    let options = FuzzInput.decodingOptions
    guard let format = ImageHeader(sniffing: data)?.format,
          let incremental = registry.makeIncrementalDecoder(for: format, options: options) else { return 0 }

    var random = InputRandom(data)
    // At most about 32 chunks, so that previews (each a full-size image) stay cheap.
    let largest = max(1, data.count / 4)
    let smallest = max(1, data.count / 32)
    var offset = 0
    var appended = true
    var ends: [Int] = []
    while offset < data.count {
        let end = min(data.count, offset + smallest + random.next(below: max(1, largest - smallest + 1)))
        ends.append(end)
        // Sometimes a slice (indices not starting at 0), sometimes a copy.
        let chunk = random.next(below: 2) == 0 ? data[offset..<end] : Data(data[offset..<end])
        offset = end
        do {
            try incremental.append(chunk)
            if let preview = try incremental.preview() {
                ContainerSanity.check(preview, options: options)
                if !preview.isPreview { FuzzInput.finding("a preview without isPreview") }
            }
        } catch is ImageError {
            appended = false
            break
        } catch {
            FuzzInput.finding("an incremental decode threw \(type(of: error)), not an ImageError: \(error)")
        }
    }
    guard appended, let final = result({ try incremental.finish() }) else { return 0 }
    ContainerSanity.check(final, options: options)
    guard let oneShot = result({ try registry.decode(data, options: options) }) else { return 0 }
    let sameSize = final.image.width == oneShot.image.width && final.image.height == oneShot.image.height
    // libjpeg marks damaged data (a warning): then only the size must agree.
    let damagedJPEG = format == .jpeg && (!final.isComplete || !oneShot.isComplete)
    if !sameSize || (final.image != oneShot.image && !damagedJPEG
                     && !(format == .webp && libwebpSplitChangesPixels(data, ends: ends))
                     && !(format == .jpeg && libjpegSplitChangesPixels(data, ends: ends))) {
        FuzzInput.finding("""
            \(format.rawValue): the incremental decode (\(final.image.width)×\(final.image.height)) differs \
            from the one-shot decode (\(oneShot.image.width)×\(oneShot.image.height))
            """)
    }
    if (final.animation?.frames.count ?? 1) != (oneShot.animation?.frames.count ?? 1) {
        FuzzInput.finding("\(format.rawValue): the incremental decode has \(final.animation?.frames.count ?? 1) frames, the one-shot decode \(oneShot.animation?.frames.count ?? 1)")
    }
    return 0
}

/// The decode's result, `nil` for an ``ImageError``; any other error is a finding.
private func result(_ decode: () throws -> ImageContainer) -> ImageContainer? {
    do {
        return try decode()
    } catch is ImageError {
        return nil
    } catch {
        FuzzInput.finding("a decode threw \(type(of: error)), not an ImageError: \(error)")
    }
}

/// Whether libwebp itself, fed `data` through its incremental decoder in the chunks that end at
/// `ends` (each call given everything so far, as ``WebPIncrementalDecoder`` does), decodes other
/// RGBA pixels than its one-shot `WebPDecodeRGBA`. Finding #6: for a lossy WebP with a corrupt
/// mode partition it does, and which split does depends on where the chunk boundaries fall; on
/// valid files it never does (the codec tests check our decoder at many chunk sizes). Only then
/// may our incremental decode's pixels differ from the one-shot decode's.
private func libwebpSplitChangesPixels(_ data: Data, ends: [Int]) -> Bool {
    let bytes = [UInt8](data)
    return bytes.withUnsafeBufferPointer { buffer -> Bool in
        var width: Int32 = 0, height: Int32 = 0
        guard let oneShot = WebPDecodeRGBA(buffer.baseAddress, buffer.count, &width, &height) else { return false }
        defer { WebPFree(oneShot) }
        // libwebp allocates the output and frees it in WebPIDelete.
        guard let decoder = WebPINewRGB(MODE_RGBA, nil, 0, 0) else { return false }
        defer { WebPIDelete(decoder) }
        var status = VP8_STATUS_SUSPENDED
        for end in ends {
            status = WebPIUpdate(decoder, buffer.baseAddress, end)
            guard status == VP8_STATUS_SUSPENDED || status == VP8_STATUS_OK else { return false }
        }
        var rows: Int32 = 0, decodedWidth: Int32 = 0, decodedHeight: Int32 = 0, stride: Int32 = 0
        guard status == VP8_STATUS_OK,
              let pixels = WebPIDecGetRGB(decoder, &rows, &decodedWidth, &decodedHeight, &stride),
              decodedWidth == width, decodedHeight == height, rows == height else { return false }
        let rowBytes = Int(width) * 4
        for row in 0..<Int(height) where memcmp(pixels + row * Int(stride), oneShot + row * rowBytes, rowBytes) != 0 {
            return true
        }
        return false
    }
}

/// Whether libjpeg-turbo itself, shown `data` up to each of `ends` in turn through a suspending
/// source (as ``JPEGIncrementalDecoder`` shows it), decodes other pixels than from the whole
/// buffer (finding #7). Images over 16 megapixels are not tried (`false`: a difference there is
/// reported, to be looked at by hand).
private func libjpegSplitChangesPixels(_ data: Data, ends: [Int]) -> Bool {
    func decode(_ ends: [Int]) -> (pixels: [UInt8], width: Int32, height: Int32)? {
        let bytes = [UInt8](data)
        let ends = ends.map { size_t($0) }
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: Int32 = 0, height: Int32 = 0
        var warnings = 0
        guard wi_reference_jpeg_decode(bytes, bytes.count, ends, ends.count, 1 << 24,
                                       &pixels, &width, &height, &warnings) == 0,
              let pixels else { return nil }
        defer { free(pixels) }
        return ([UInt8](UnsafeBufferPointer(start: pixels, count: Int(width) * Int(height) * 4)), width, height)
    }
    guard let split = decode(ends), let whole = decode([data.count]) else { return false }
    return split.width == whole.width && split.height == whole.height && split.pixels != whole.pixels
}
