import Foundation
import FuzzSupport
import WebImageCodecs
import WebImageCore

/// Video containers through `VideoDecoder` (FFmpeg's mov and Matroska demuxers and the decoders
/// behind them) under the fuzzing limits: the first frame as a 64 px thumbnail, then, for inputs
/// that decode, the frame at 0.5 s (the seek and decode-forward path), a clip of 8 frames from
/// 0.2 s (one seek, then the pass forward from frame to frame) and the probe. Each is either an
/// ``ImageError`` or a container that keeps ``ContainerSanity``'s promises (a clip's frames all
/// of one size).
func fuzzVideo(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = FuzzInput.data(bytes, count)
    var options = FuzzInput.decodingOptions
    options.thumbnail = .maxPixelSize(64)
    options.maximumFrameCount = 64
    for (time, clip) in [(0, nil), (0.5, nil), (0.2, VideoClip(duration: 0.4, framesPerSecond: 20))] as [(Double, VideoClip?)] {
        options.videoTime = time
        options.videoClip = clip
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
    options.videoClip = nil
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
