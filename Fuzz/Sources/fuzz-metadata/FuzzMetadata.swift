import Foundation
import FuzzSupport
import WebImageCore

/// ImageMetadata's walks over every GIF block, PNG chunk, WebP chunk and JPEG segment: no trap,
/// no read out of bounds, time linear in the input, and answers that hold together.
func fuzzMetadata(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = FuzzInput.data(bytes, count)
    let metadata: ImageMetadata
    do {
        // A small frame limit, so that inputs reach the refusal as well as the count.
        metadata = try ImageMetadata(reading: data, maximumFrameCount: 64)
    } catch ImageError.unsupportedFormat {
        if ImageFormat(sniffing: data) != nil { FuzzInput.finding("no metadata for bytes whose format sniffs") }
        return 0
    } catch {
        return 0 // tooLarge: more than 64 frames
    }
    if ImageFormat(sniffing: data) != metadata.format { FuzzInput.finding("metadata of another format than sniffing's") }
    if let frames = metadata.frameCount, frames < 0 || frames > 64 { FuzzInput.finding("a frame count of \(frames)") }
    if metadata.frameDurations.count > (metadata.frameCount ?? 0) {
        FuzzInput.finding("\(metadata.frameDurations.count) durations for \(metadata.frameCount ?? 0) frames")
    }
    if metadata.frameDurations.contains(where: { $0 < .zero }) { FuzzInput.finding("a negative duration") }
    if let loops = metadata.loopCount, loops < 0 { FuzzInput.finding("a negative loop count \(loops)") }
    // Reading an array must agree with reading `Data`.
    if (try? ImageMetadata(reading: Array(data), maximumFrameCount: 64)) != metadata {
        FuzzInput.finding("reading [UInt8] and Data disagree")
    }
    return 0
}
