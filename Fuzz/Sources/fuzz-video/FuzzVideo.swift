import Foundation
import FuzzSupport
import WebImageCodecs
import WebImageCore

/// Video containers through `VideoDecoder` (FFmpeg's mov and Matroska demuxers and the decoders
/// behind them) under the fuzzing limits: the first frame as a 64 px thumbnail, then, for inputs
/// that decode, the frame at 0.5 s (the seek and decode-forward path) and the probe. Each is
/// either an ``ImageError`` or a container that keeps ``ContainerSanity``'s promises.
func fuzzVideo(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = FuzzInput.data(bytes, count)
    var options = FuzzInput.decodingOptions
    options.thumbnail = .maxPixelSize(64)
    options.maximumFrameCount = 64
    for time in [0, 0.5] {
        options.videoTime = time
        let container: ImageContainer
        do {
            container = try VideoDecoder().decode(data, options: options)
        } catch is ImageError {
            return 0
        } catch {
            FuzzInput.finding("a video decode threw \(type(of: error)), not an ImageError: \(error)")
        }
        ContainerSanity.check(container, options: options)
    }
    do {
        let info = try VideoDecoder.probe(data, options: options)
        if info.width <= 0 || info.height <= 0 {
            FuzzInput.finding("a video probe answered \(info.width)×\(info.height)")
        }
    } catch is ImageError {
    } catch {
        FuzzInput.finding("a video probe threw \(type(of: error)), not an ImageError: \(error)")
    }
    return 0
}
