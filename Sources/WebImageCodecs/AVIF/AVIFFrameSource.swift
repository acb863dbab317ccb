import CAvif
import Foundation
import WebImageCore

/// An AVIF image sequence decoded a frame at a time: one `avifDecoderNextImage` per frame,
/// `avifDecoderReset` for the next play. AV1 frames reference earlier ones, which libavif's
/// decoder keeps, so this is the only order it decodes cheaply in. The frames equal
/// ``AVIFDecoder``'s (the same limits on libavif, transforms and colour conversion).
///
/// The first frame is decoded when the source is made: the transforms (`clap`, `irot`) decide
/// the frames' size, which the container alone does not tell once they apply.
final class AVIFFrameSource: AnimationFrameSource {
    private let bytes: StableBytes
    private let decoder: UnsafeMutablePointer<avifDecoder>
    private let options: ImageDecodingOptions
    private let imageCount: Int
    private let iccProfile: Data?
    let loopCount: Int
    /// The first frame, decoded by `init`, until ``nextFrame()`` returns it.
    private var pending: AnimatedImage.Frame?
    private var returned = 0
    let canvasWidth: Int
    let canvasHeight: Int

    /// `nil` for a still image.
    init?(_ data: Data, options: ImageDecodingOptions) throws {
        bytes = StableBytes(data)
        guard let base = bytes.buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.buffer.count > 0 else {
            throw ImageError.corruptData("AVIF: no bytes")
        }
        let decoder = try AVIFDecoder.parsedDecoder(base, count: bytes.buffer.count, options: options)
        var owned = true
        defer { if owned { avifDecoderDestroy(decoder) } }
        imageCount = Int(decoder.pointee.imageCount)
        guard imageCount > 1 else { return nil }
        loopCount = AVIFDecoder.loopCount(bytes.buffer)
        self.options = options
        self.decoder = decoder
        let first = try Self.decodeNext(decoder, index: 0, of: imageCount)
        iccProfile = AVIFDecoder.colorProfile(of: decoder.pointee.image)
        canvasWidth = first.bitmap.width
        canvasHeight = first.bitmap.height
        pending = first
        owned = false
    }

    deinit {
        avifDecoderDestroy(decoder)
    }

    var frameCount: Int? { imageCount }

    func nextFrame() throws -> AnimatedImage.Frame? {
        let frame: AnimatedImage.Frame
        if let pending {
            frame = pending
            self.pending = nil
        } else {
            guard returned < imageCount else { return nil }
            frame = try Self.decodeNext(decoder, index: returned, of: imageCount)
        }
        returned += 1
        return AnimatedImage.Frame(bitmap: ColorConversion.apply(frame.bitmap, profile: iccProfile, options: options), duration: frame.duration)
    }

    func reset() throws {
        try AVIFDecoder.check(avifDecoderReset(decoder), decoder, "starting the sequence again")
        pending = nil
        returned = 0
    }

    /// The next frame, transforms applied, in the file's colour space.
    private static func decodeNext(_ decoder: UnsafeMutablePointer<avifDecoder>, index: Int, of count: Int) throws -> AnimatedImage.Frame {
        try AVIFDecoder.check(avifDecoderNextImage(decoder), decoder, "decoding frame \(index + 1) of \(count)")
        let image = decoder.pointee.image!
        let bitmap = try AVIFTransforms.apply(to: AVIFDecoder.rgbBitmap(image), of: image)
        return AnimatedImage.Frame(bitmap: bitmap, duration: AVIFDecoder.duration(decoder.pointee.imageTiming))
    }
}
