/// Reads JPEG XL's bit-packed fields: least significant bit first within each byte, `U32`
/// fields as a 2-bit selector choosing one of four distributions. Every read past the bytes
/// gives `nil`.
struct JXLBitReader {
    private let reader: ByteReader
    private var position: Int

    init(_ reader: ByteReader, offset: Int) {
        self.reader = reader
        position = offset * 8
    }

    mutating func bits(_ count: Int) -> Int? {
        var value = 0
        for index in 0..<count {
            guard let byte = reader.u8(position >> 3) else { return nil }
            value |= Int((byte >> UInt8(position & 7)) & 1) << index
            position += 1
        }
        return value
    }

    mutating func bool() -> Bool? { bits(1).map { $0 == 1 } }

    /// A `U32` field: each distribution is (bits to read, offset added); 0 bits is a constant.
    mutating func u32(_ d0: (Int, Int), _ d1: (Int, Int), _ d2: (Int, Int), _ d3: (Int, Int)) -> Int? {
        guard let selector = bits(2) else { return nil }
        let (count, offset) = [d0, d1, d2, d3][selector]
        return bits(count).map { $0 + offset }
    }

    /// The SizeHeader and the ImageMetadata up to the bit depth.
    mutating func codestreamHeader() -> JXLCodestreamHeader? {
        guard let (width, height) = size() else { return nil }
        guard let allDefault = bool() else { return nil }
        if allDefault { return JXLCodestreamHeader(storedWidth: width, storedHeight: height, orientation: 1, bitDepth: 8) }
        guard let extraFields = bool() else { return nil }
        var orientation = 1, loopCount: Int?
        if extraFields {
            guard let stored = bits(3), let hasIntrinsicSize = bool() else { return nil }
            orientation = stored + 1
            if hasIntrinsicSize, size() == nil { return nil }
            guard let hasPreview = bool() else { return nil }
            if hasPreview, !skipPreviewHeader() { return nil }
            guard let hasAnimation = bool() else { return nil }
            if hasAnimation {
                guard let loops = animationLoops() else { return nil }
                loopCount = loops
            }
        }
        guard let bitDepth = bitDepth() else { return nil }
        return JXLCodestreamHeader(storedWidth: width, storedHeight: height, orientation: orientation, bitDepth: bitDepth, loopCount: loopCount)
    }

    /// A SizeHeader (also the intrinsic size's layout): a small form in multiples of 8, else
    /// `U32`s; the width from a fixed aspect ratio unless the ratio field is 0.
    private mutating func size() -> (Int, Int)? {
        guard let small = bool() else { return nil }
        let large = ((9, 1), (13, 1), (18, 1), (30, 1))
        guard let height = small ? bits(5).map({ ($0 + 1) * 8 }) : u32(large.0, large.1, large.2, large.3),
              let ratio = bits(3) else { return nil }
        let ratios = [(1, 1), (12, 10), (4, 3), (3, 2), (16, 9), (5, 4), (2, 1)]
        if ratio > 0 { return (height * ratios[ratio - 1].0 / ratios[ratio - 1].1, height) }
        guard let width = small ? bits(5).map({ ($0 + 1) * 8 }) : u32(large.0, large.1, large.2, large.3) else { return nil }
        return (width, height)
    }

    /// A PreviewHeader, read through: its sides in multiples of 8 or in pixels, as a size's.
    private mutating func skipPreviewHeader() -> Bool {
        guard let div8 = bool() else { return false }
        let read: (inout JXLBitReader) -> Int? = div8
            ? { $0.u32((0, 16), (0, 32), (5, 1), (9, 33)) }
            : { $0.u32((6, 1), (8, 65), (10, 321), (12, 1345)) }
        guard read(&self) != nil, let ratio = bits(3) else { return false }
        return ratio > 0 || read(&self) != nil
    }

    /// The AnimationHeader, read through; its `num_loops`.
    private mutating func animationLoops() -> Int? {
        guard u32((0, 100), (0, 1000), (10, 1), (30, 1)) != nil, // tps_numerator
              u32((0, 1), (0, 1001), (8, 1), (10, 1)) != nil, // tps_denominator
              let loops = u32((0, 0), (3, 0), (16, 0), (32, 0)),
              bool() != nil // have_timecodes
        else { return nil }
        return loops
    }

    /// BitDepth: integer samples of 8, 10, 12 or 1–64 bits, or floating-point ones.
    private mutating func bitDepth() -> Int? {
        guard let float = bool() else { return nil }
        return float ? u32((0, 32), (0, 16), (0, 24), (6, 1)) : u32((0, 8), (0, 10), (0, 12), (6, 1))
    }
}
