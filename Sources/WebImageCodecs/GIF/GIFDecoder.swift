import Foundation
import WebImageCore

/// Decodes GIF files with giflib: still and animated, every frame composed onto the full
/// logical screen.
///
/// Conventions, each the one browsers and Pillow share unless said otherwise:
/// - **Palettes**: a frame's local colour table, else the global one; a file with neither
///   reads its indices as grey levels (index *n* is grey *n*), as Pillow does. Indices past
///   the end of the table are opaque black.
/// - **Transparency**: the graphic control extension's transparent index leaves the canvas
///   pixel as it was. On the first frame, where the canvas is still empty, such a pixel keeps
///   the index's palette colour with alpha 0 (the "stored RGB", as Pillow gives it). The
///   canvas starts fully transparent.
/// - **Disposal**: 0 (unspecified) and 1 keep the frame; 2 restores the frame's rectangle to
///   the background: transparent when the frame has a transparent index, otherwise the
///   logical screen's background colour, opaque, as the GIF89a specification says and Pillow
///   does (browsers always clear to transparent); 3 restores the rectangle as it was before
///   the frame.
/// - **Frames outside the screen** are clipped to it (Pillow grows the canvas instead).
/// - **Durations**: ``AnimatedImage/Frame/duration`` is the stored delay (hundredths of a
///   second) exactly, 0 without a graphic control extension;
///   ``AnimatedImage/Frame/displayDuration`` applies the browsers' rule that 10 ms or less
///   plays as 100 ms.
/// - **Loop count**: the NETSCAPE2.0 extension's value counts repeats after the first play,
///   so ``AnimatedImage/loopCount`` (plays) is that value + 1, and 0 (forever) stays 0; with
///   no extension an animation plays once. The first such extension counts.
/// - **Damage**: a frame whose LZW data is damaged keeps the rows decoded before the damage.
///   A file that ends inside a frame keeps the complete frames before it; when it ends
///   inside the first frame, the rows that arrived make a partial image. A first frame with
///   no row of it on the screen decoded, cut short or damaged, fails the decode with
///   ``ImageError/corruptData(_:)`` rather than passing an empty canvas off as the image.
/// - **LZW minimum code size** above 8 in any frame fails the decode with
///   ``ImageError/corruptData(_:)``, as in Chromium (Firefox decodes up to 11); see
///   `GIFFrameDecoder.largestCodeSize`.
///
/// Limits, checked before the memory they guard is allocated: the screen against
/// ``ImageDecodingOptions/maximumPixelCount``, each frame's declared size against the same,
/// the composed frames, kept at the thumbnail's size when one is asked for, against
/// ``ImageDecodingOptions/maximumAnimationBytes``, and the pixels
/// decoded from LZW data over all frames against their sum (LZW expands up to ~2,700× and
/// a frame can lie mostly off-screen, so time is bounded separately from memory). Rows of
/// a frame below the screen are never decoded.
///
/// ```swift
/// let container = try GIFDecoder().decode(bytes, options: .init())
/// let frames = container.animation?.frames.count    // composed frames
/// let loops = container.animation?.loopCount         // plays; 0 = forever
/// ```
public struct GIFDecoder: ImageDecoder {
    public init() {}

    public var formats: Set<ImageFormat> { [.gif] }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        try data.withUnsafeBytes { bytes in
            var renderer = try GIFRenderer(bytes, options: options)
            return try renderer.render()
        }
    }

    /// Previews the first frame once its data is complete.
    public func makeIncrementalDecoder(options: ImageDecodingOptions) -> (any IncrementalImageDecoder)? {
        GIFIncrementalDecoder(options: options)
    }

    /// Composes one frame at a time, carrying the canvas and the disposal from frame to frame;
    /// `nil` for a GIF of one frame.
    public func makeAnimationFrameSource(_ data: Data, options: ImageDecodingOptions) throws -> (any AnimationFrameSource)? {
        try GIFFrameSource(data, options: options)
    }
}

/// Composes a GIF's frames (see ``GIFDecoder`` for the rules), one at a time: ``render(frameLimit:)``
/// keeps them all, ``GIFFrameSource`` one at a time.
struct GIFRenderer {
    private var stream: GIFStream
    private let options: ImageDecodingOptions
    private let bytes: UnsafeRawBufferPointer
    private let canvas: FrameCanvas
    /// Whether every frame composed is kept, so that the limits on a whole decode
    /// (``ImageDecodingOptions/maximumAnimationBytes``, ``ImageDecodingOptions/maximumAnimationPixels``
    /// and the LZW work over the file) apply; a frame source keeps one frame at a time and
    /// checks only the frame count and each frame.
    private let keepsEveryFrame: Bool
    /// Frames composed so far.
    private var composed = 0
    /// Pixels decoded from LZW data so far.
    private var work = 0

    init(_ bytes: UnsafeRawBufferPointer, options: ImageDecodingOptions, keepsEveryFrame: Bool = true) throws {
        try GIFStream.checkScreen(bytes, maximumPixelCount: options.maximumPixelCount)
        stream = try GIFStream(bytes)
        self.options = options
        self.bytes = bytes
        self.keepsEveryFrame = keepsEveryFrame
        canvas = FrameCanvas(width: stream.screen.width, height: stream.screen.height)
    }

    /// The loop count as ``AnimatedImage/loopCount`` counts it, from what the walk has seen.
    var loopCount: Int {
        stream.loopValue.map { $0 == 0 ? 0 : $0 + 1 } ?? 1
    }

    /// Decodes up to `frameLimit` frames (all by default; one with
    /// ``ImageDecodingOptions/firstFrameOnly``).
    mutating func render(frameLimit: Int = .max) throws -> ImageContainer {
        let frameLimit = options.firstFrameOnly ? 1 : frameLimit
        var frames: [AnimatedImage.Frame] = []
        while frames.count < frameLimit, let frame = try nextFrame() {
            frames.append(frame)
        }
        guard let first = frames.first else {
            throw ImageError.corruptData(stream.isTruncated ? "GIF: the file ends before its first image" : "GIF: the file has no image")
        }
        let animation = frames.count > 1 ? AnimatedImage(frames: frames, loopCount: loopCount) : nil
        var container = ImageContainer(image: first.bitmap, animation: animation, format: .gif)
        // Cut short: frames, or rows of the first, may be missing.
        container.isComplete = !stream.isTruncated
        return container
    }

    /// The next frame composed onto the canvas, or `nil` where the walk ends (the trailer, or
    /// a frame the bytes cut short after the first).
    mutating func nextFrame() throws -> AnimatedImage.Frame? {
        let screen = stream.screen
        guard let frame = stream.nextFrame() else { return nil }
        if keepsEveryFrame {
            try WorkDeadline.check("composing GIF frame \(composed + 1)")
            // GIF states no frame count: the work is checked before each frame is composed.
            try options.checkAnimationWork(frameCount: composed + 1, canvasWidth: screen.width, canvasHeight: screen.height, format: "GIF")
            if composed > 0 {
                try options.checkKeptAnimationBytes(
                    frameCount: composed + 1, kept: options.keptFrameSize(canvasWidth: screen.width, canvasHeight: screen.height),
                    format: "GIF", orMore: true)
            }
        } else {
            guard composed < options.maximumFrameCount else {
                throw ImageError.tooLarge("GIF: more than \(options.maximumFrameCount) frames exceed the limit")
            }
        }
        guard frame.width * frame.height <= options.maximumPixelCount else {
            throw ImageError.tooLarge("GIF: a \(frame.width)×\(frame.height) frame is more than the \(options.maximumPixelCount)-pixel limit")
        }
        let region = canvas.clip(x: frame.x, y: frame.y, width: frame.width, height: frame.height)
        let visibleRows = region.isEmpty ? 0 : region.height
        let rowsNeeded = GIFFrameDecoder.RowOrder(height: frame.height, interlaced: frame.interlaced).rowsNeeded(toCover: visibleRows)
        if keepsEveryFrame {
            // LZW output bounded over the whole file: a legitimate animation decodes at most its
            // frames' area, which the animation limit bounds; one more screenful of slack. (One
            // frame at a time, the pixel limit on the frame bounds it.)
            let workBudget = options.maximumAnimationBytes / 4 + options.maximumPixelCount
            work += rowsNeeded * frame.width
            guard work <= workBudget else {
                throw ImageError.tooLarge("GIF: the frames' image data decodes to more than \(workBudget) pixels")
            }
        }

        let saved = frame.disposal == 3 ? canvas.save(region) : []
        let palette = Palette(frame: frame, screen: screen, bytes: bytes)
        let isFirst = composed == 0
        try GIFFrameDecoder.checkCodeSize(of: frame, index: composed, in: bytes)
        let rowsDrawn = draw(frame, rowsNeeded: rowsNeeded, visibleRows: visibleRows, onto: canvas, at: region,
                             palette: palette, keepsStoredColour: isFirst)
        // The bytes end inside this frame (and the walk ends with it).
        if !frame.isComplete, !isFirst { return nil }
        // A first frame with nothing of it drawn is not an image, even a transparent one.
        if isFirst, rowsDrawn == 0, visibleRows > 0 || !frame.isComplete {
            throw ImageError.corruptData(frame.isComplete
                ? "GIF: the first frame's image data is damaged before any of its rows on the screen"
                : "GIF: the file ends inside its first frame before any of its rows on the screen")
        }
        var bitmap = try canvas.snapshot()
        if keepsEveryFrame {
            // Kept at the size asked for, as the animation limit counts it (the registry's
            // finish then finds the size already right).
            let kept = options.keptFrameSize(canvasWidth: screen.width, canvasHeight: screen.height)
            if kept.width != bitmap.width || kept.height != bitmap.height { bitmap = try bitmap.resized(width: kept.width, height: kept.height) }
        }
        let composedFrame = AnimatedImage.Frame(bitmap: bitmap, duration: .milliseconds(frame.delay * 10))
        composed += 1

        Self.dispose(frame, region: region, palette: palette, screen: screen, canvas: canvas, saved: saved)
        return composedFrame
    }

    /// Applies `frame`'s disposal to the canvas once the frame has been shown.
    private static func dispose(
        _ frame: GIFStream.Frame, region: FrameCanvas.Region, palette: Palette, screen: GIFStream.Screen,
        canvas: FrameCanvas, saved: [UInt8]
    ) {
        switch frame.disposal {
        case 2:
            if let transparent = frame.transparentIndex {
                let entry = palette.colour(transparent)
                canvas.fill(region, red: entry.red, green: entry.green, blue: entry.blue, alpha: 0)
            } else {
                let entry = palette.colour(palette.count > screen.backgroundIndex ? screen.backgroundIndex : 0)
                canvas.fill(region, red: entry.red, green: entry.green, blue: entry.blue, alpha: 255)
            }
        case 3:
            canvas.restore(region, from: saved)
        default:
            break
        }
    }

    /// Decodes `frame`'s first `rowsNeeded` rows and draws the visible ones into `region`;
    /// returns how many rows were drawn (fewer when the data is damaged or cut short).
    private func draw(
        _ frame: GIFStream.Frame, rowsNeeded: Int, visibleRows: Int, onto canvas: FrameCanvas,
        at region: FrameCanvas.Region, palette: Palette, keepsStoredColour: Bool
    ) -> Int {
        var rowsDrawn = 0
        _ = GIFFrameDecoder.decodeRows(of: frame, in: bytes, rowCount: rowsNeeded) { row, indices in
            guard row < visibleRows else { return }
            Self.draw(indices, count: region.width, onto: canvas, x: region.x, y: region.y + row,
                      palette: palette, transparent: frame.transparentIndex, keepsStoredColour: keepsStoredColour)
            rowsDrawn += 1
        }
        return rowsDrawn
    }

    /// Writes one row of palette indices into the canvas.
    @inline(__always)
    private static func draw(
        _ indices: UnsafePointer<UInt8>, count: Int, onto canvas: FrameCanvas, x: Int, y: Int,
        palette: Palette, transparent: Int?, keepsStoredColour: Bool
    ) {
        let target = UnsafeMutableRawPointer(canvas.pixels + (y * canvas.width + x) * 4)
        let transparent = transparent ?? -1
        palette.entries.withUnsafeBufferPointer { entries in
            for index in 0..<count {
                let value = Int(indices[index])
                if value == transparent {
                    // The stored colour with alpha 0, on an untouched canvas only.
                    if keepsStoredColour {
                        target.storeBytes(of: entries[value] & Palette.colourMask, toByteOffset: index * 4, as: UInt32.self)
                    }
                    continue
                }
                target.storeBytes(of: entries[value], toByteOffset: index * 4, as: UInt32.self)
            }
        }
    }

    /// A frame's colour table as 256 opaque RGBA words (R first in memory).
    struct Palette {
        var entries: [UInt32]
        /// Entries the table really has (the rest are black).
        var count: Int
        /// Keeps R, G and B of an entry, clears its alpha.
        static let colourMask = UInt32(0x00FF_FFFF).littleEndian

        init(frame: GIFStream.Frame, screen: GIFStream.Screen, bytes: UnsafeRawBufferPointer) {
            let opaqueBlack = UInt32(0xFF00_0000).littleEndian
            entries = [UInt32](repeating: opaqueBlack, count: 256)
            if let table = frame.localPalette ?? screen.globalPalette {
                count = table.count
                for index in 0..<min(table.count, 256) {
                    let offset = table.offset + index * 3
                    entries[index] = Self.word(bytes[offset], bytes[offset + 1], bytes[offset + 2])
                }
            } else {
                count = 256
                for index in 0..<256 { entries[index] = Self.word(UInt8(index), UInt8(index), UInt8(index)) }
            }
        }

        static func word(_ red: UInt8, _ green: UInt8, _ blue: UInt8) -> UInt32 {
            (UInt32(red) | UInt32(green) << 8 | UInt32(blue) << 16 | 0xFF00_0000).littleEndian
        }

        func colour(_ index: Int) -> (red: UInt8, green: UInt8, blue: UInt8) {
            let word = UInt32(littleEndian: entries[index & 255])
            return (UInt8(word & 0xFF), UInt8((word >> 8) & 0xFF), UInt8((word >> 16) & 0xFF))
        }
    }
}
