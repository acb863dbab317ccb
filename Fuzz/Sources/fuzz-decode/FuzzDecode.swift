import Foundation
import FuzzSupport
import WebImageCodecs
import WebImageCore

/// Every system decoder (JPEG, PNG/APNG, GIF, WebP, AVIF, HEIF/HEIC, JPEG XL, SVG), picked by
/// sniffing as in a load: a full decode and a thumbnail decode of each input, inside the
/// fuzzing limits. A decode either throws an ``ImageError`` or returns a container that keeps
/// ``ContainerSanity``'s promises.
private let registry = CoderRegistry.system()

func fuzzDecode(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = FuzzInput.data(bytes, count)
    var options = FuzzInput.decodingOptions
    decode(data, options: options)
    options.thumbnail = FuzzInput.thumbnail(for: data)
    decode(data, options: options)
    return 0
}

private func decode(_ data: Data, options: ImageDecodingOptions) {
    let container: ImageContainer
    do {
        container = try registry.decode(data, options: options)
    } catch is ImageError {
        return
    } catch {
        FuzzInput.finding("a decode threw \(type(of: error)), not an ImageError: \(error)")
    }
    ContainerSanity.check(container, options: options)
    if case .maxPixelSize(let side) = options.thumbnail, max(container.image.width, container.image.height) > side {
        FuzzInput.finding("a thumbnail of at most \(side) px is \(container.image.width)×\(container.image.height)")
    }
}
