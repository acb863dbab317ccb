import WebImage

extension Bitmap {
    /// The pixel at `column`, `row` as straight (not premultiplied) red, green, blue and alpha:
    /// grey repeated into red, green and blue, alpha 255 where the format has none. The one
    /// reading of every pixel format that the proxy's drawing steps (``RecipeCanvas``,
    /// ``WatermarkOverlay``) start from. `input` is ``pixels``, borrowed once by the caller.
    func straightPixel(_ input: UnsafeBufferPointer<UInt8>, _ column: Int, _ row: Int) -> SIMD4<Int> {
        let format = pixelFormat, from = row * bytesPerRow + column * format.bytesPerPixel
        var pixel: SIMD4<Int>
        switch format.channels {
        case .gray: pixel = SIMD4(Int(input[from]), Int(input[from]), Int(input[from]), 255)
        case .grayAlpha: pixel = SIMD4(Int(input[from]), Int(input[from]), Int(input[from]), Int(input[from + 1]))
        case .rgb: pixel = SIMD4(Int(input[from]), Int(input[from + 1]), Int(input[from + 2]), 255)
        case .rgba: pixel = SIMD4(Int(input[from]), Int(input[from + 1]), Int(input[from + 2]), Int(input[from + 3]))
        }
        let a = pixel[3]
        if format.alpha == .premultiplied, a > 0, a < 255 {
            for channel in 0..<3 { pixel[channel] = min(255, (pixel[channel] * 255 + a / 2) / a) }
        }
        return pixel
    }

    /// Every pixel as ``straightPixel(_:_:_:)`` reads it, 4 bytes a pixel, rows packed.
    func straightRGBA8() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: width * height * 4) { output, count in
            pixels.withUnsafeBufferPointer { input in
                for row in 0..<height {
                    for column in 0..<width {
                        let pixel = straightPixel(input, column, row), to = (row * width + column) * 4
                        for channel in 0..<4 { output[to + channel] = UInt8(pixel[channel]) }
                    }
                }
            }
            count = width * height * 4
        }
    }
}
