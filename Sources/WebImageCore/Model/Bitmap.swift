/// A decoded, uncompressed image: a rectangle of pixels in one ``PixelFormat``.
///
/// A `Bitmap` is a value. Its pixels live in a copy-on-write array, so copying a bitmap (into a
/// cache, across tasks, into a response) shares the storage instead of duplicating megabytes.
///
/// ```swift
/// let bitmap = try Bitmap(width: 2, height: 1, pixelFormat: .rgba8,
///                         pixels: [255, 0, 0, 255,  0, 0, 255, 255])
/// print(bitmap.cost)   // 8 bytes
/// ```
public struct Bitmap: Sendable, Hashable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// The layout of each pixel.
    public let pixelFormat: PixelFormat
    /// Bytes from the start of one row to the start of the next; at least
    /// `width * pixelFormat.bytesPerPixel`.
    public let bytesPerRow: Int
    /// Display points per pixel: 2 for an `@2x` asset. Sizes in points are `width / scale`.
    public var scale: Double
    /// The pixel bytes, `bytesPerRow * height` of them, rows top to bottom.
    public let pixels: [UInt8]

    /// Wraps existing pixel bytes.
    ///
    /// - Throws: ``ImageError/invalidBitmap(_:)`` when the dimensions are not positive, a row
    ///   is shorter than its pixels, or `pixels` holds fewer than `bytesPerRow * height` bytes.
    public init(
        width: Int,
        height: Int,
        pixelFormat: PixelFormat,
        bytesPerRow: Int? = nil,
        scale: Double = 1,
        pixels: [UInt8]
    ) throws {
        let rowBytes = bytesPerRow ?? width &* pixelFormat.bytesPerPixel
        try Self.validate(width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: rowBytes)
        guard pixels.count >= rowBytes * height else {
            throw ImageError.invalidBitmap("\(pixels.count) pixel bytes for \(width)×\(height) at \(rowBytes) bytes per row")
        }
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.bytesPerRow = rowBytes
        self.scale = scale
        self.pixels = pixels
    }

    /// Allocates storage for a bitmap and lets `initializer` fill every byte, without zeroing it
    /// first: decoders write straight into the final buffer.
    ///
    /// - Throws: ``ImageError/invalidBitmap(_:)`` for bad dimensions, or whatever
    ///   `initializer` throws.
    public init(
        width: Int,
        height: Int,
        pixelFormat: PixelFormat,
        bytesPerRow: Int? = nil,
        scale: Double = 1,
        initializingPixelsWith initializer: (UnsafeMutableRawBufferPointer) throws -> Void
    ) throws {
        let rowBytes = bytesPerRow ?? width &* pixelFormat.bytesPerPixel
        try Self.validate(width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: rowBytes)
        let count = rowBytes * height
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.bytesPerRow = rowBytes
        self.scale = scale
        self.pixels = try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            try initializer(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Bytes of pixel storage this bitmap keeps alive: what a memory cache charges for it.
    public var cost: Int { pixels.count }

    /// Width and height in points (pixels divided by ``scale``).
    package var pointSize: (width: Double, height: Double) {
        (Double(width) / scale, Double(height) / scale)
    }

    private static func validate(width: Int, height: Int, pixelFormat: PixelFormat, bytesPerRow: Int) throws {
        guard width > 0, height > 0 else {
            throw ImageError.invalidBitmap("dimensions \(width)×\(height) are not positive")
        }
        let (minimumRow, overflow) = width.multipliedReportingOverflow(by: pixelFormat.bytesPerPixel)
        guard !overflow, bytesPerRow >= minimumRow else {
            throw ImageError.invalidBitmap("\(bytesPerRow) bytes per row cannot hold \(width) \(pixelFormat) pixels")
        }
        guard !bytesPerRow.multipliedReportingOverflow(by: height).overflow else {
            throw ImageError.invalidBitmap("\(width)×\(height) overflows the address space")
        }
    }
}
