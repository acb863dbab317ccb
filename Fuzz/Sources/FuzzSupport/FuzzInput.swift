import Foundation
import WebImageCore

/// What every fuzz target does with libFuzzer's input: copy it into `Data`, derive the
/// knobs it needs from the bytes themselves (so that a saved input replays exactly), and decode
/// inside limits small enough that an input which decodes within them fits libFuzzer's
/// `-rss_limit_mb=512` and `-timeout=1`.
public enum FuzzInput {
    /// libFuzzer's buffer as `Data` (it passes a null pointer with a count of 0).
    public static func data(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Data {
        guard let bytes, count > 0 else { return Data() }
        return Data(bytes: bytes, count: count)
    }

    /// Decoding limits far below the defaults: 1 megapixel, 4 MiB and 2^20 composed pixels of
    /// animation, 256 frames. The limits are what is under test: each is checked before the
    /// work it bounds, so no input may use much more than they allow.
    ///
    /// They also bound the cost of one input, and so the campaign's speed: an input may make
    /// the decoders do work in proportion to them (decode, compose every frame, resample each
    /// for the thumbnail). Until 2026-11-25 they were 4 Mpx, 64 MiB and 2^24: a 1600 × 1200 PNG
    /// seed took 84 ms of CPU, the 31-frame 320 × 240 GIF 190 ms (2.4 million composed pixels,
    /// half of it in the thumbnail's Lanczos resampling, whose every pixel comparison the
    /// coverage instrumentation traces), and such inputs filled the corpus. The code that
    /// enforces each limit, and the decoders' loops below it, are the same at these sizes; only
    /// what they are compared with changed. An animation may compose as many pixels as one
    /// still image may have, and the byte limit keeps its old 4 bytes per composed pixel, so
    /// that either can still be the one an input hits first.
    public static var decodingOptions: ImageDecodingOptions {
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 1 << 20
        options.maximumAnimationBytes = 4 << 20
        options.maximumAnimationPixels = 1 << 20
        options.maximumFrameCount = 256
        return options
    }

    /// A thumbnail request derived from the input: a longest side, or a box with a content
    /// mode, from 1 to 320 pixels.
    public static func thumbnail(for data: Data) -> ImageDecodingOptions.Thumbnail {
        var generator = InputRandom(data)
        let side = 1 + generator.next(below: 320)
        switch generator.next(below: 4) {
        case 0: return .maxPixelSize(side)
        default:
            let mode = ContentMode.allCases[generator.next(below: ContentMode.allCases.count)]
            return .size(width: side, height: 1 + generator.next(below: 320), contentMode: mode)
        }
    }

    /// Reports a broken invariant: libFuzzer saves the input as a crash.
    public static func finding(_ message: String) -> Never {
        fatalError("fuzz finding: \(message)")
    }
}

/// A small deterministic generator seeded from the input's bytes (FNV-1a, then xorshift), so
/// that the chunk sizes and thumbnail sizes an input gets are part of the input.
public struct InputRandom {
    private var state: UInt64

    public init(_ data: Data) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        state = hash | 1
    }

    /// A number in `0..<bound` (`bound` > 0).
    public mutating func next(below bound: Int) -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Int(state % UInt64(bound))
    }
}
