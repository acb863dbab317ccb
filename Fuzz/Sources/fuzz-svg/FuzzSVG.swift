import Foundation
import FuzzSupport
import WebImageCodecs
import WebImageCore

/// SVG documents through `SVGDecoder`, drawn in this process at a thumbnail size under the
/// fuzzing limits (one megapixel), with the embedded-image check (hostile-input finding 4): either
/// an ``ImageError`` or a container that keeps ``ContainerSanity``'s promises. The time a render
/// takes is libFuzzer's to judge (`-timeout`): a document that draws for longer is a finding of
/// librsvg's cost, which the proxy bounds by drawing in a child process (finding 3).
func fuzzSVG(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = FuzzInput.data(bytes, count)
    var options = FuzzInput.decodingOptions
    options.thumbnail = .maxPixelSize(64)
    let container: ImageContainer
    do {
        container = try SVGDecoder().decode(data, options: options)
    } catch is ImageError {
        return 0
    } catch {
        FuzzInput.finding("an SVG decode threw \(type(of: error)), not an ImageError: \(error)")
    }
    ContainerSanity.check(container, options: options)
    return 0
}
