import CGIF
import Foundation
import WebImageCore

/// Encodes GIF with giflib, still or animated.
///
/// Each frame is written whole, with its own colour table. A frame with at most 256 colours
/// (255 when the animation needs a transparent index) is written exactly; one with more is
/// reduced to 256 colours with giflib's median-cut quantizer, without dithering. GIF has
/// one-bit transparency: pixels with alpha below 128 become transparent, the others opaque.
/// When any frame has transparent pixels, every frame gets a transparent index and disposal
/// "restore to background", so that each frame starts from a clear canvas in every reader;
/// otherwise frames are disposed "none".
///
/// An animation is written with the NETSCAPE2.0 loop extension (loop value = plays − 1, 0 for
/// forever; none for a single play) and its frame durations rounded to hundredths of a second.
/// GIF has no place this encoder writes an ICC profile to, so the profile is always left out.
///
/// ```swift
/// let gif = try GIFEncoder().encode(container, options: .init())
/// ```
public struct GIFEncoder: ImageEncoder {
    public init() {}

    public var format: ImageFormat { .gif }

    public func encode(_ image: ImageContainer, options: ImageEncodingOptions) throws -> Data {
        let frames: [AnimatedImage.Frame]
        if let animation = image.animation, animation.frames.count > 1, !options.firstFrameOnly {
            frames = animation.frames
        } else {
            frames = [AnimatedImage.Frame(bitmap: image.image, duration: .zero)]
        }
        let width = frames[0].bitmap.width, height = frames[0].bitmap.height
        guard width <= 65535, height <= 65535, frames.allSatisfy({ $0.bitmap.width == width && $0.bitmap.height == height }) else {
            throw ImageError.unsupportedFormat("GIF: frames must share one size of at most 65535×65535")
        }
        let pixels = frames.map { Self.rgba($0.bitmap) }
        let transparency = pixels.contains { $0.withUnsafeBufferPointer(Self.hasTransparentPixel) }
        let animated = frames.count > 1

        let writer = try Writer(width: width, height: height)
        if animated, let plays = image.animation?.loopCount, plays != 1 {
            try writer.putLoop(plays == 0 ? 0 : min(plays - 1, 65535))
        }
        for (index, (frame, rgba)) in zip(frames, pixels).enumerated() {
            if animated { try WorkDeadline.check("encoding GIF frame \(index + 1) of \(frames.count)") }
            let indexed = rgba.withUnsafeBufferPointer { Self.indexed($0, width: width, height: height, reserveTransparent: transparency) }
            if animated || transparency {
                let hundredths = Self.hundredths(frame.duration)
                try writer.putControl(disposal: transparency ? 2 : (animated ? 1 : 0), delay: hundredths, transparent: transparency ? 0 : nil)
            }
            try writer.putImage(indexed.indices, palette: indexed.palette)
        }
        return try writer.finish()
    }

    /// A duration in hundredths of a second, rounded, within GIF's 16 bits.
    static func hundredths(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let value = min(max(seconds, 0), 1_000) * 100 + (attoseconds + 5_000_000_000_000_000) / 10_000_000_000_000_000
        return Int(min(max(value, 0), 65535))
    }

    /// Any pixel format as straight RGBA8, rows packed.
    static func rgba(_ bitmap: Bitmap) -> [UInt8] {
        let width = bitmap.width, height = bitmap.height, stride = bitmap.bytesPerRow
        let channels = bitmap.pixelFormat.bytesPerPixel
        let premultiplied = bitmap.pixelFormat.alpha == .premultiplied
        return bitmap.pixels.withUnsafeBufferPointer { source in
            [UInt8](unsafeUninitializedCapacity: width * height * 4) { target, count in
                for y in 0..<height {
                    for x in 0..<width {
                        let p = y * stride + x * channels, q = (y * width + x) * 4
                        switch channels {
                        case 1: (target[q], target[q + 1], target[q + 2], target[q + 3]) = (source[p], source[p], source[p], 255)
                        case 2: (target[q], target[q + 1], target[q + 2], target[q + 3]) = (source[p], source[p], source[p], source[p + 1])
                        case 3: (target[q], target[q + 1], target[q + 2], target[q + 3]) = (source[p], source[p + 1], source[p + 2], 255)
                        default:
                            let alpha = source[p + 3]
                            for c in 0..<3 {
                                let value = source[p + c]
                                target[q + c] = premultiplied && alpha > 0 && alpha < 255
                                    ? UInt8(min(255, (Int(value) * 255 + Int(alpha) / 2) / Int(alpha))) : value
                            }
                            target[q + 3] = alpha
                        }
                    }
                }
                count = width * height * 4
            }
        }
    }

    static func hasTransparentPixel(_ rgba: UnsafeBufferPointer<UInt8>) -> Bool {
        stride(from: 3, to: rgba.count, by: 4).contains { rgba[$0] < 128 }
    }

    /// Palette indices and an RGB palette for one frame. With `reserveTransparent`, index 0
    /// is the transparent one.
    static func indexed(_ rgba: UnsafeBufferPointer<UInt8>, width: Int, height: Int, reserveTransparent: Bool) -> (indices: [UInt8], palette: [UInt8]) {
        let count = width * height
        let first = reserveTransparent ? 1 : 0
        // Exact when the frame has few enough colours: an open-addressing table of colours.
        var table = [UInt32](repeating: 0, count: 1024), slots = [Int16](repeating: -1, count: 1024)
        var palette: [UInt8] = reserveTransparent ? [0, 0, 0] : []
        var indices = [UInt8](repeating: 0, count: count)
        var exact = true
        indices.withUnsafeMutableBufferPointer { indices in
            for pixel in 0..<count {
                let offset = pixel * 4
                if reserveTransparent, rgba[offset + 3] < 128 { continue }
                let colour = UInt32(rgba[offset]) << 16 | UInt32(rgba[offset + 1]) << 8 | UInt32(rgba[offset + 2])
                var slot = Int((colour &* 2_654_435_761) >> 22) & 1023
                while slots[slot] >= 0, table[slot] != colour { slot = (slot + 1) & 1023 }
                if slots[slot] < 0 {
                    guard palette.count / 3 < 256 else {
                        exact = false
                        return
                    }
                    slots[slot] = Int16(palette.count / 3)
                    table[slot] = colour
                    palette += [rgba[offset], rgba[offset + 1], rgba[offset + 2]]
                }
                indices[pixel] = UInt8(slots[slot])
            }
        }
        if exact { return (indices, palette) }

        // More colours than a GIF table holds: giflib's median cut over the opaque colours.
        var red = [UInt8](repeating: 0, count: count), green = red, blue = red
        for pixel in 0..<count {
            red[pixel] = rgba[pixel * 4]
            green[pixel] = rgba[pixel * 4 + 1]
            blue[pixel] = rgba[pixel * 4 + 2]
        }
        var size = Int32(256 - first)
        var map = [GifColorType](repeating: GifColorType(), count: 256)
        var quantized = [UInt8](repeating: 0, count: count)
        let status = GifQuantizeBuffer(UInt32(width), UInt32(height), &size, &red, &green, &blue, &quantized, &map)
        palette = reserveTransparent ? [0, 0, 0] : []
        if status == GIF_OK {
            for entry in map.prefix(Int(size)) { palette += [entry.Red, entry.Green, entry.Blue] }
        } else {
            // giflib could not allocate its tables: a fixed 6×6×6 colour cube.
            size = 216
            for index in 0..<216 { palette += [UInt8(index / 36 * 51), UInt8(index / 6 % 6 * 51), UInt8(index % 6 * 51)] }
            for pixel in 0..<count {
                let r: Int = (Int(red[pixel]) + 25) / 51
                let g: Int = (Int(green[pixel]) + 25) / 51
                let b: Int = (Int(blue[pixel]) + 25) / 51
                quantized[pixel] = UInt8(r * 36 + g * 6 + b)
            }
        }
        for pixel in 0..<count {
            indices[pixel] = reserveTransparent && rgba[pixel * 4 + 3] < 128 ? 0 : UInt8(Int(quantized[pixel]) + first)
        }
        return (indices, palette)
    }

    /// giflib's writer over a growing buffer.
    private final class Writer {
        private var output: [UInt8] = []
        private var gif: UnsafeMutablePointer<GifFileType>?
        let width: Int
        let height: Int

        private static let writeCallback: OutputFunc = { gif, bytes, count in
            guard let gif, let bytes, count > 0, let userData = gif.pointee.UserData else { return 0 }
            let writer = Unmanaged<Writer>.fromOpaque(userData).takeUnretainedValue()
            writer.output.append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(count)))
            return count
        }

        init(width: Int, height: Int) throws {
            self.width = width
            self.height = height
            var error: Int32 = 0
            gif = EGifOpen(Unmanaged.passUnretained(self).toOpaque(), Self.writeCallback, &error)
            guard let gif else { throw Self.failure(error) }
            EGifSetGifVersion(gif, true)
            guard EGifPutScreenDesc(gif, Int32(width), Int32(height), 8, 0, nil) == GIF_OK else { throw Self.failure(gif.pointee.Error) }
        }

        deinit {
            // Only when an error left the file open: free giflib's state without writing more.
            if let gif {
                gif.pointee.UserData = nil
                var error: Int32 = 0
                EGifCloseFile(gif, &error)
            }
        }

        func putLoop(_ loop: Int) throws {
            var identifier = Array("NETSCAPE2.0".utf8)
            var value: [UInt8] = [1, UInt8(loop & 0xFF), UInt8(loop >> 8)]
            guard EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK,
                  EGifPutExtensionBlock(gif, 11, &identifier) == GIF_OK,
                  EGifPutExtensionBlock(gif, 3, &value) == GIF_OK,
                  EGifPutExtensionTrailer(gif) == GIF_OK else { throw Self.failure(gif!.pointee.Error) }
        }

        func putControl(disposal: Int, delay: Int, transparent: Int?) throws {
            var control = GraphicsControlBlock(DisposalMode: Int32(disposal), UserInputFlag: false, DelayTime: Int32(delay),
                                               TransparentColor: Int32(transparent ?? Int(NO_TRANSPARENT_COLOR)))
            var extensionBytes = [GifByteType](repeating: 0, count: 4)
            let length = EGifGCBToExtension(&control, &extensionBytes)
            guard EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, Int32(length), &extensionBytes) == GIF_OK else {
                throw Self.failure(gif!.pointee.Error)
            }
        }

        func putImage(_ indices: [UInt8], palette: [UInt8]) throws {
            // Tables hold a power of two entries, at least 2.
            var entries = 2
            while entries < palette.count / 3 { entries *= 2 }
            var colours = [GifColorType](repeating: GifColorType(), count: entries)
            for index in 0..<(palette.count / 3) {
                colours[index] = GifColorType(Red: palette[index * 3], Green: palette[index * 3 + 1], Blue: palette[index * 3 + 2])
            }
            guard let map = GifMakeMapObject(Int32(entries), &colours) else { throw ImageError.tooLarge("GIF: out of memory for a colour table") }
            defer { GifFreeMapObject(map) }
            guard EGifPutImageDesc(gif, 0, 0, Int32(width), Int32(height), false, map) == GIF_OK else { throw Self.failure(gif!.pointee.Error) }
            var row = [GifPixelType](repeating: 0, count: width)
            for y in 0..<height {
                row.withUnsafeMutableBufferPointer { row in
                    indices.withUnsafeBufferPointer { row.baseAddress!.update(from: $0.baseAddress! + y * width, count: width) }
                }
                guard EGifPutLine(gif, &row, Int32(width)) == GIF_OK else { throw Self.failure(gif!.pointee.Error) }
            }
        }

        func finish() throws -> Data {
            var error: Int32 = 0
            let status = EGifCloseFile(gif, &error)
            gif = nil
            guard status == GIF_OK else { throw Self.failure(error) }
            return Data(output)
        }

        private static func failure(_ code: Int32) -> ImageError {
            let message = GifErrorString(code).map { String(cString: $0) } ?? "error \(code)"
            return .corruptData("GIF encoding failed: \(message)")
        }
    }
}
