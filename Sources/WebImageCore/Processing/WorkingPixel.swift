/// How the filters see a pixel: one `SIMD4<Float>` holding premultiplied colour and alpha on the
/// 0–255 scale, whatever the bitmap's ``PixelFormat``.
///
/// Filtering premultiplied values is what keeps transparent pixels from bleeding their hidden
/// colour (usually black) into their opaque neighbours: a pixel with alpha 0 contributes nothing
/// at all. One representation for every format keeps one copy of each filter loop; grey formats
/// carry their level in the first lane and waste the other two, which is the simple path the
/// rare grey inputs deserve.
///
/// Each conforming type is a caseless enum used only as a generic parameter, so the compiler
/// specialises the filter loops per format and inlines `load` and `store` into them.
protocol WorkingPixel {
    static var bytesPerPixel: Int { get }
    /// The pixel at `source`, premultiplied, on the 0–255 scale.
    static func load(_ source: UnsafeRawPointer) -> SIMD4<Float>
    /// Writes `value` (premultiplied, possibly out of range after a filter's negative lobes)
    /// back in the format: un-premultiplied if the format is straight, clamped, rounded.
    static func store(_ value: SIMD4<Float>, to destination: UnsafeMutableRawPointer)
}

extension WorkingPixel {
    /// Clamps to 0–255 and rounds to the nearest byte.
    ///
    /// Written lane by lane and with a bit trick because the generic SIMD `clamped` and
    /// float-to-integer conversions are not specialised into vector code: adding 1.5 · 2²³ to a
    /// float in 0…255 leaves its value, rounded to the nearest integer (ties to even), in the
    /// low bits of the sum's significand.
    @inline(__always)
    static func bytes(_ value: SIMD4<Float>) -> SIMD4<UInt8> {
        let clamped = SIMD4(
            min(max(value.x, 0), 255), min(max(value.y, 0), 255),
            min(max(value.z, 0), 255), min(max(value.w, 0), 255)
        )
        let bits = unsafeBitCast(clamped + 12_582_912, to: SIMD4<UInt32>.self)
        return SIMD4<UInt8>(truncatingIfNeeded: bits)
    }

    /// Divides the colour lanes by alpha, for straight-alpha formats. A pixel whose alpha
    /// filtered to zero or below is fully transparent and gets colour 0.
    @inline(__always)
    static func unpremultiplied(_ value: SIMD4<Float>) -> SIMD4<Float> {
        let alpha = min(max(value.w, 0), 255)
        let scale: Float = alpha > 0 ? 255 / alpha : 0
        var result = value * scale
        result.w = alpha
        return result
    }
}

/// Straight-alpha RGBA, the decoders' format: the hot path.
enum StraightRGBA: WorkingPixel {
    static var bytesPerPixel: Int { 4 }

    @inline(__always)
    static func load(_ source: UnsafeRawPointer) -> SIMD4<Float> {
        let value = SIMD4<Float>(source.loadUnaligned(as: SIMD4<UInt8>.self))
        let alpha = value.w * (1 / 255)
        return value * SIMD4(alpha, alpha, alpha, 1)
    }

    @inline(__always)
    static func store(_ value: SIMD4<Float>, to destination: UnsafeMutableRawPointer) {
        destination.storeBytes(of: bytes(unpremultiplied(value)), as: SIMD4<UInt8>.self)
    }
}

/// Premultiplied RGBA: loaded as it is; colour clamped to alpha on the way out, since ringing
/// can push a colour lane past its alpha and premultiplied consumers rely on `c ≤ a`.
enum PremultipliedRGBA: WorkingPixel {
    static var bytesPerPixel: Int { 4 }

    @inline(__always)
    static func load(_ source: UnsafeRawPointer) -> SIMD4<Float> {
        SIMD4<Float>(source.loadUnaligned(as: SIMD4<UInt8>.self))
    }

    @inline(__always)
    static func store(_ value: SIMD4<Float>, to destination: UnsafeMutableRawPointer) {
        let alpha = min(max(value.w, 0), 255)
        let clamped = SIMD4(min(value.x, alpha), min(value.y, alpha), min(value.z, alpha), alpha)
        destination.storeBytes(of: bytes(clamped), as: SIMD4<UInt8>.self)
    }
}

/// Opaque RGB, three bytes a pixel.
enum OpaqueRGB: WorkingPixel {
    static var bytesPerPixel: Int { 3 }

    @inline(__always)
    static func load(_ source: UnsafeRawPointer) -> SIMD4<Float> {
        let bytes = source.assumingMemoryBound(to: UInt8.self)
        return SIMD4(Float(bytes[0]), Float(bytes[1]), Float(bytes[2]), 255)
    }

    @inline(__always)
    static func store(_ value: SIMD4<Float>, to destination: UnsafeMutableRawPointer) {
        let result = bytes(value)
        let out = destination.assumingMemoryBound(to: UInt8.self)
        out[0] = result.x
        out[1] = result.y
        out[2] = result.z
    }
}

/// Opaque grey: the level in the first lane.
enum OpaqueGray: WorkingPixel {
    static var bytesPerPixel: Int { 1 }

    @inline(__always)
    static func load(_ source: UnsafeRawPointer) -> SIMD4<Float> {
        SIMD4(Float(source.load(as: UInt8.self)), 0, 0, 255)
    }

    @inline(__always)
    static func store(_ value: SIMD4<Float>, to destination: UnsafeMutableRawPointer) {
        destination.storeBytes(of: bytes(value).x, as: UInt8.self)
    }
}

/// Grey and straight alpha: the level in the first lane, alpha in the last.
enum StraightGrayAlpha: WorkingPixel {
    static var bytesPerPixel: Int { 2 }

    @inline(__always)
    static func load(_ source: UnsafeRawPointer) -> SIMD4<Float> {
        let bytes = source.assumingMemoryBound(to: UInt8.self)
        let alpha = Float(bytes[1])
        return SIMD4(Float(bytes[0]) * alpha * (1 / 255), 0, 0, alpha)
    }

    @inline(__always)
    static func store(_ value: SIMD4<Float>, to destination: UnsafeMutableRawPointer) {
        let result = bytes(unpremultiplied(value))
        let out = destination.assumingMemoryBound(to: UInt8.self)
        out[0] = result.x
        out[1] = result.w
    }
}

/// Grey and premultiplied alpha.
enum PremultipliedGrayAlpha: WorkingPixel {
    static var bytesPerPixel: Int { 2 }

    @inline(__always)
    static func load(_ source: UnsafeRawPointer) -> SIMD4<Float> {
        let bytes = source.assumingMemoryBound(to: UInt8.self)
        return SIMD4(Float(bytes[0]), 0, 0, Float(bytes[1]))
    }

    @inline(__always)
    static func store(_ value: SIMD4<Float>, to destination: UnsafeMutableRawPointer) {
        let alpha = min(max(value.w, 0), 255)
        let result = bytes(SIMD4(min(value.x, alpha), 0, 0, alpha))
        let out = destination.assumingMemoryBound(to: UInt8.self)
        out[0] = result.x
        out[1] = result.w
    }
}

/// RGBA whose fourth byte means nothing (`PixelFormat(channels: .rgba, alpha: .none)`): read as
/// opaque, written back as 255.
enum OpaqueRGBX: WorkingPixel {
    static var bytesPerPixel: Int { 4 }

    @inline(__always)
    static func load(_ source: UnsafeRawPointer) -> SIMD4<Float> {
        var value = SIMD4<Float>(source.loadUnaligned(as: SIMD4<UInt8>.self))
        value.w = 255
        return value
    }

    @inline(__always)
    static func store(_ value: SIMD4<Float>, to destination: UnsafeMutableRawPointer) {
        var result = bytes(value)
        result.w = 255
        destination.storeBytes(of: result, as: SIMD4<UInt8>.self)
    }
}

/// Grey whose second byte means nothing: read as opaque, written back as 255.
enum OpaqueGrayX: WorkingPixel {
    static var bytesPerPixel: Int { 2 }

    @inline(__always)
    static func load(_ source: UnsafeRawPointer) -> SIMD4<Float> {
        SIMD4(Float(source.load(as: UInt8.self)), 0, 0, 255)
    }

    @inline(__always)
    static func store(_ value: SIMD4<Float>, to destination: UnsafeMutableRawPointer) {
        let out = destination.assumingMemoryBound(to: UInt8.self)
        out[0] = bytes(value).x
        out[1] = 255
    }
}

/// Work over a bitmap's pixels that is generic over their ``WorkingPixel`` type: the filters
/// implement it once, and ``PixelFormat/run(_:)`` calls it with the type of a format, so the
/// compiler specialises the work's loops for each format.
protocol WorkingPixelOperation {
    associatedtype Result
    func run<Pixel: WorkingPixel>(_ pixel: Pixel.Type) throws -> Result
}

extension PixelFormat {
    /// `operation` run with this format's working-pixel type.
    func run<Operation: WorkingPixelOperation>(_ operation: Operation) throws -> Operation.Result {
        switch (channels, alpha) {
        case (.rgba, .straight): try operation.run(StraightRGBA.self)
        case (.rgba, .premultiplied): try operation.run(PremultipliedRGBA.self)
        case (.rgba, .none): try operation.run(OpaqueRGBX.self)
        case (.rgb, _): try operation.run(OpaqueRGB.self)
        case (.grayAlpha, .straight): try operation.run(StraightGrayAlpha.self)
        case (.grayAlpha, .premultiplied): try operation.run(PremultipliedGrayAlpha.self)
        case (.grayAlpha, .none): try operation.run(OpaqueGrayX.self)
        case (.gray, _): try operation.run(OpaqueGray.self)
        }
    }
}
