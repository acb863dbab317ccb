import WebImage

/// imgproxy's `sharpen:%sigma`/`sh:%sigma`: what libvips' `vips_sharpen` (imgproxy's) does with
/// its default curve, an unsharp mask on lightness. The difference between each pixel's luma
/// and the luma blurred by a Gaussian of `sigma` pixels is mapped by libvips' curve (no change
/// below `x1`, then `m2` times the rest, at most `y2` lighter or `y3` darker) and added to each
/// colour channel, so hue is kept and only edges gain contrast: a flat area (difference 0)
/// and gentle texture (under `x1`) are left alone, as libvips leaves them.
///
/// libvips works in CIELAB's L* (0–100); its thresholds are turned into 8-bit luma steps
/// (2.55 a unit), which sRGB's transfer curve makes close to L* steps. Alpha is left alone;
/// grey stays grey.
struct ImgproxySharpen: ImageProcessor, Hashable {
    var sigma: Double

    /// libvips' defaults in luma steps: `x1` 2, `y2` 10, `y3` 20 (L*), `m1` 0, `m2` 3.
    static let flatBelow = 2 * 2.55, slope = 3.0, mostLighter = 10 * 2.55, mostDarker = 20 * 2.55

    var identifier: String { "imgproxy-sharpen(\(ProxyRequest.text(sigma)))" }

    func process(_ image: ImageContainer) throws -> ImageContainer {
        try image.mappingFrames(apply)
    }

    /// What libvips' curve adds for a difference of `difference` luma steps from the blur.
    static func change(_ difference: Double) -> Double {
        let magnitude = abs(difference)
        guard magnitude > flatBelow else { return 0 }
        let change = (magnitude - flatBelow) * slope
        return difference > 0 ? min(change, mostLighter) : -min(change, mostDarker)
    }

    private func apply(_ bitmap: Bitmap) throws -> Bitmap {
        guard sigma > 0 else { return bitmap }
        let format = bitmap.pixelFormat, step = format.bytesPerPixel
        let colours = format.channels == .gray || format.channels == .grayAlpha ? 1 : 3
        let width = bitmap.width, height = bitmap.height
        // Luma as a grey bitmap, so that the library's Gaussian blurs it.
        let luma = try Bitmap(width: width, height: height, pixelFormat: .gray8) { buffer in
            let out = buffer.bindMemory(to: UInt8.self)
            for row in 0..<height {
                for column in 0..<width {
                    let offset = row * bitmap.bytesPerRow + column * step
                    if colours == 1 {
                        out[row * width + column] = bitmap.pixels[offset]
                    } else {
                        let value = 0.299 * Double(bitmap.pixels[offset]) + 0.587 * Double(bitmap.pixels[offset + 1]) + 0.114 * Double(bitmap.pixels[offset + 2])
                        out[row * width + column] = UInt8(value.rounded())
                    }
                }
            }
        }
        let blurred = try luma.blurred(radius: sigma)
        return try Bitmap(width: width, height: height, pixelFormat: format, bytesPerRow: bitmap.bytesPerRow, scale: bitmap.scale) { buffer in
            let out = buffer.bindMemory(to: UInt8.self)
            _ = out.initialize(from: bitmap.pixels)
            for row in 0..<height {
                for column in 0..<width {
                    let index = row * width + column
                    let change = Self.change(Double(luma.pixels[index]) - Double(blurred.pixels[index]))
                    guard change != 0 else { continue }
                    let offset = row * bitmap.bytesPerRow + column * step
                    // Premultiplied colour may not exceed its alpha.
                    let ceiling = format.alpha == .premultiplied ? Double(out[offset + step - 1]) : 255
                    for channel in 0..<colours {
                        out[offset + channel] = UInt8(min(ceiling, max(0, (Double(out[offset + channel]) + change).rounded())))
                    }
                }
            }
        }
    }
}
