import Foundation
import FuzzSupport
import WebImageCore

/// The placeholder hashes' parsers and decoders, on what a client sends: the input as a
/// ThumbHash (base64 text, and the raw bytes), as a BlurHash string, and through
/// `ImagePlaceholder`. A malformed input is `corruptData`; what parses decodes to a bitmap of the
/// size asked (derived from the input's bytes), and reads back as the same hash.
func fuzzPlaceholder(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = FuzzInput.data(bytes, count)
    let text = String(decoding: data, as: UTF8.self)
    var generator = InputRandom(data)
    let side = 1 + generator.next(below: 64)
    do {
        checkThumbHash(try ThumbHash(text), side: side)
    } catch {
        expectCorruptData(error, "ThumbHash(\"\(text.prefix(64))\")")
    }
    do {
        checkThumbHash(try ThumbHash(bytes: Array(data)), side: side)
    } catch {
        expectCorruptData(error, "ThumbHash(bytes:) of \(data.count) bytes")
    }
    do {
        let hash = try BlurHash(text)
        checkBlurHash(hash, width: side, height: 1 + generator.next(below: 64), punch: Double(generator.next(below: 400)) / 100)
    } catch {
        expectCorruptData(error, "BlurHash(\"\(text.prefix(64))\")")
    }
    for placeholder in [ImagePlaceholder.thumbHash(text), .blurHash(text)] {
        do {
            let bitmap = try placeholder.bitmap(maxSide: side, aspectRatio: Double(1 + generator.next(below: 400)) / 100)
            if max(bitmap.width, bitmap.height) != side { FuzzInput.finding("\(placeholder) at \(side) px decoded to \(bitmap.width)×\(bitmap.height)") }
        } catch {
            expectCorruptData(error, "\(placeholder)")
        }
    }
    return 0
}

private func checkThumbHash(_ hash: ThumbHash, side: Int) {
    if hash.bytes.count > 25 { FuzzInput.finding("a ThumbHash of \(hash.bytes.count) bytes") }
    if !(1.0 / 7...7).contains(hash.aspectRatio) { FuzzInput.finding("a ThumbHash aspect ratio of \(hash.aspectRatio)") }
    if (try? ThumbHash(hash.base64)) != hash { FuzzInput.finding("\(hash.bytes) does not read back from \(hash.base64)") }
    let bitmap = hash.bitmap(maxSide: side)
    checkBitmap(bitmap, "ThumbHash \(hash.base64)")
    if max(bitmap.width, bitmap.height) != side { FuzzInput.finding("ThumbHash \(hash.base64) at \(side) px decoded to \(bitmap.width)×\(bitmap.height)") }
}

private func checkBlurHash(_ hash: BlurHash, width: Int, height: Int, punch: Double) {
    let components = hash.components
    if !(1...9).contains(components.x) || !(1...9).contains(components.y) || hash.string.utf8.count != 4 + 2 * components.x * components.y {
        FuzzInput.finding("BlurHash \(hash.string) has \(components.x) × \(components.y) components")
    }
    do {
        let bitmap = try hash.bitmap(width: width, height: height, punch: punch)
        checkBitmap(bitmap, "BlurHash \(hash.string)")
        if (bitmap.width, bitmap.height) != (width, height) { FuzzInput.finding("BlurHash \(hash.string) decoded to \(bitmap.width)×\(bitmap.height), not \(width)×\(height)") }
        if !stride(from: 3, to: bitmap.pixels.count, by: 4).allSatisfy({ bitmap.pixels[$0] == 255 }) { FuzzInput.finding("BlurHash \(hash.string) decoded with transparency") }
    } catch {
        FuzzInput.finding("BlurHash \(hash.string) parsed but does not decode at \(width)×\(height), punch \(punch): \(error)")
    }
}

private func checkBitmap(_ bitmap: Bitmap, _ what: String) {
    if bitmap.pixelFormat != .rgba8 || bitmap.pixels.count != bitmap.width * bitmap.height * 4 || bitmap.width < 1 || bitmap.height < 1 {
        FuzzInput.finding("\(what) decoded to \(bitmap.width)×\(bitmap.height) \(bitmap.pixelFormat) with \(bitmap.pixels.count) bytes")
    }
}

private func expectCorruptData(_ error: any Error, _ what: String) {
    guard case .corruptData = error as? ImageError else { FuzzInput.finding("\(what) threw \(error), not corruptData") }
}
