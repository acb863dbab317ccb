import WebImageCore

/// The RGBA8 canvas that the frames of an animation (APNG, GIF) are composed onto, with the
/// region operations their disposal methods need. It starts fully transparent.
///
/// One canvas lives for one decode on one thread; every composed frame is copied out of it
/// with ``snapshot()``.
final class FrameCanvas {
    let width: Int
    let height: Int
    /// `width * height * 4` bytes, rows top to bottom, no padding.
    let pixels: UnsafeMutablePointer<UInt8>

    var bytesPerRow: Int { width * 4 }

    /// - Precondition: the caller has checked `width * height` against its pixel limit.
    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        // 16-byte aligned, so that rows can be filled as 32-bit words.
        let count = width * height * 4
        pixels = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16).initializeMemory(as: UInt8.self, repeating: 0, count: count)
    }

    deinit {
        UnsafeMutableRawPointer(pixels).deallocate()
    }

    /// A rectangle of the canvas, already clipped to it.
    struct Region: Equatable {
        var x: Int
        var y: Int
        var width: Int
        var height: Int

        var isEmpty: Bool { width <= 0 || height <= 0 }
    }

    /// `x, y, width, height` clipped to the canvas (empty when it lies outside).
    func clip(x: Int, y: Int, width: Int, height: Int) -> Region {
        let x0 = max(0, min(x, self.width)), y0 = max(0, min(y, self.height))
        let x1 = max(x0, min(x + width, self.width)), y1 = max(y0, min(y + height, self.height))
        return Region(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// The canvas as it stands, as a new bitmap.
    func snapshot() throws -> Bitmap {
        let count = width * height * 4
        return try Bitmap(width: width, height: height, pixelFormat: .rgba8) { buffer in
            buffer.baseAddress!.copyMemory(from: pixels, byteCount: count)
        }
    }

    /// The pixels of `region`, for restoring later ("dispose to previous").
    func save(_ region: Region) -> [UInt8] {
        guard !region.isEmpty else { return [] }
        let rowBytes = region.width * 4
        return [UInt8](unsafeUninitializedCapacity: rowBytes * region.height) { buffer, count in
            for row in 0..<region.height {
                let source = pixels + ((region.y + row) * width + region.x) * 4
                (buffer.baseAddress! + row * rowBytes).initialize(from: source, count: rowBytes)
            }
            count = rowBytes * region.height
        }
    }

    /// Puts back what ``save(_:)`` returned for the same region.
    func restore(_ region: Region, from saved: [UInt8]) {
        guard !region.isEmpty else { return }
        let rowBytes = region.width * 4
        saved.withUnsafeBufferPointer { saved in
            for row in 0..<region.height {
                let target = pixels + ((region.y + row) * width + region.x) * 4
                target.update(from: saved.baseAddress! + row * rowBytes, count: rowBytes)
            }
        }
    }

    /// Fills `region` with one RGBA colour.
    func fill(_ region: Region, red: UInt8 = 0, green: UInt8 = 0, blue: UInt8 = 0, alpha: UInt8 = 0) {
        guard !region.isEmpty else { return }
        let pixel = UInt32(red) | UInt32(green) << 8 | UInt32(blue) << 16 | UInt32(alpha) << 24
        let value = pixel.littleEndian // R first in memory on any host
        pixels.withMemoryRebound(to: UInt32.self, capacity: width * height) { words in
            for row in 0..<region.height {
                (words + (region.y + row) * width + region.x).update(repeating: value, count: region.width)
            }
        }
    }
}
