import Foundation
import FuzzSupport
import WebImageCore

/// `data:` URL parsing (media type, base64 or percent-encoded payload). The input is the URL's
/// text. It parses or throws an ``ImageError``, and never yields more bytes than its limit.
private let limit = 1 << 16

func fuzzDataURL(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: FuzzInput.data(bytes, count), as: UTF8.self)
    for candidate in [text, "data:" + text] {
        do {
            let (data, mediaType) = try DataURLImageLoader.parse(candidate, limit: limit)
            if data.count > limit { FuzzInput.finding("\(data.count) bytes from a data URL limited to \(limit)") }
            if let mediaType, mediaType != mediaType.lowercased() { FuzzInput.finding("media type \(mediaType) is not lowercased") }
        } catch is ImageError {
            continue
        } catch {
            FuzzInput.finding("parsing threw \(type(of: error)), not an ImageError: \(error)")
        }
    }
    return 0
}
