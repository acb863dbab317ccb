import Foundation

extension Bitmap {
    /// The pixels inside a rectangle, as a new bitmap of the same format and scale.
    ///
    /// The rectangle is clipped to the bitmap, so a crop that runs past an edge returns what
    /// lies inside.
    ///
    /// ```swift
    /// let face = try photo.cropped(x: 40, y: 20, width: 128, height: 128)
    /// ```
    ///
    /// - Throws: ``ImageError/invalidBitmap(_:)`` when the rectangle and the bitmap do not
    ///   overlap.
    public func cropped(x: Int, y: Int, width cropWidth: Int, height cropHeight: Int) throws -> Bitmap {
        // Clip in a way that cannot overflow, whatever the caller passes.
        let left = min(max(x, 0), width), top = min(max(y, 0), height)
        let right = x > width ? width : min(width, max(left, x.addingReportingOverflow(max(cropWidth, 0)).partialValue))
        let bottom = y > height ? height : min(height, max(top, y.addingReportingOverflow(max(cropHeight, 0)).partialValue))
        guard right > left, bottom > top else {
            throw ImageError.invalidBitmap("the crop \(cropWidth)×\(cropHeight) at (\(x), \(y)) lies outside the \(width)×\(height) bitmap")
        }
        if left == 0, top == 0, right == width, bottom == height { return self }
        let bytesPerPixel = pixelFormat.bytesPerPixel
        let rowBytes = (right - left) * bytesPerPixel
        return try Bitmap(width: right - left, height: bottom - top, pixelFormat: pixelFormat, scale: scale) { output in
            pixels.withUnsafeBytes { input in
                for row in 0..<(bottom - top) {
                    let from = input.baseAddress! + (top + row) * bytesPerRow + left * bytesPerPixel
                    (output.baseAddress! + row * rowBytes).copyMemory(from: from, byteCount: rowBytes)
                }
            }
        }
    }

    /// The bitmap blurred with a Gaussian of standard deviation `radius` pixels (as CSS's
    /// `blur()` and Pillow's `GaussianBlur` define the radius), with the same format and size.
    ///
    /// Below a radius of `boxBlurRadius` the filter is the exact Gaussian: separable, reaching
    /// 3 `radius` either side. From there on it is three box blurs per axis (as SVG and CSS
    /// blur), within a few per cent of the Gaussian at a cost that does not grow with the radius
    /// (`Resampler.boxBlur(_:sigma:)`). Both run on premultiplied values (transparent pixels
    /// do not darken their neighbours) and average only what lies inside the image at the edges,
    /// so a flat image stays flat.
    ///
    /// ```swift
    /// let backdrop = try photo.blurred(radius: 8)
    /// ```
    public func blurred(radius: Double) throws -> Bitmap {
        if radius.isFinite, radius >= Self.boxBlurRadius { return try Resampler.boxBlur(self, sigma: radius) }
        return try blurredExactly(radius: radius)
    }

    /// The radius from which ``blurred(radius:)`` approximates the Gaussian with box blurs: the
    /// exact filter's 6 `radius` + 1 taps then cost more than the three running sums, and the
    /// boxes are close enough (the blur of a step stays within 1 % of the Gaussian's).
    package static let boxBlurRadius = 4.0

    /// The exact Gaussian at any radius: what ``blurred(radius:)`` uses below `boxBlurRadius`,
    /// and the reference its box blurs are measured against.
    package func blurredExactly(radius: Double) throws -> Bitmap {
        guard radius > 0, radius.isFinite else { return self }
        return try Resampler.filter(
            self,
            horizontal: .gaussian(count: width, sigma: radius),
            vertical: .gaussian(count: height, sigma: radius)
        )
    }

    /// The bitmap in shades of grey: each pixel's colour replaced by its Rec. 601 luma
    /// (`0.299 R + 0.587 G + 0.114 B`, the weights JPEG and Pillow's `convert("L")` use) in
    /// every colour channel. Format, alpha and size are kept; grey bitmaps come back unchanged.
    ///
    /// ```swift
    /// let grey = photo.grayscaled()   // still RGBA, with R = G = B
    /// ```
    public func grayscaled() -> Bitmap {
        if pixelFormat.channels == .gray || pixelFormat.channels == .grayAlpha { return self }
        let bytesPerPixel = pixelFormat.bytesPerPixel
        // Force-try: same dimensions and format as this valid bitmap.
        return try! Bitmap(width: width, height: height, pixelFormat: pixelFormat, scale: scale) { output in
            pixels.withUnsafeBytes { input in
                let out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
                var target = 0
                for row in 0..<height {
                    let source = input.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * bytesPerRow
                    var offset = 0
                    for _ in 0..<width {
                        // 16-bit fixed-point weights summing to 65536, rounded.
                        let luma = (19595 &* UInt32(source[offset]) &+ 38470 &* UInt32(source[offset &+ 1])
                            &+ 7471 &* UInt32(source[offset &+ 2]) &+ 32768) >> 16
                        let level = UInt8(truncatingIfNeeded: luma)
                        out[target] = level
                        out[target &+ 1] = level
                        out[target &+ 2] = level
                        if bytesPerPixel == 4 { out[target &+ 3] = source[offset &+ 3] }
                        offset &+= bytesPerPixel
                        target &+= bytesPerPixel
                    }
                }
            }
        }
    }

    /// The bitmap with its corners cut to quarter circles of `radius` pixels, outside which it
    /// is transparent. The edge is anti-aliased: a pixel the arc crosses keeps the fraction of
    /// its alpha that lies inside (estimated from its centre's distance to the arc). A radius of
    /// half the shorter side or more makes a square bitmap a circle.
    ///
    /// Opaque formats gain an alpha channel (``PixelFormat/rgba8`` for colour,
    /// ``PixelFormat/grayAlpha8`` for grey); premultiplied bitmaps stay premultiplied.
    ///
    /// ```swift
    /// let card = photo.roundingCorners(radius: 16)
    /// ```
    public func roundingCorners(radius: Double) -> Bitmap {
        let format = alphaFormat
        let rowBytes = format == pixelFormat ? bytesPerRow : width * format.bytesPerPixel
        // The converted bitmap is a temporary, so these bytes are not shared when they were
        // converted, and copied once on the first write when they are this bitmap's.
        var pixels = withAlphaChannel().pixels
        let r = min(max(radius.isFinite ? radius : 0, 0), Double(min(width, height)) / 2)
        let reach = Int(r.rounded(.up))
        let bytesPerPixel = format.bytesPerPixel
        let premultiplied = format.alpha == .premultiplied
        let (w, h) = (width, height)
        // Only the corner squares change; each pixel there is mirrored into the top-left
        // corner, whose arc is centred on (r, r).
        for y in 0..<h where y < reach || y >= h - reach {
            let dy = r - (Double(min(y, h - 1 - y)) + 0.5)
            for x in 0..<w where x < reach || x >= w - reach {
                let dx = r - (Double(min(x, w - 1 - x)) + 0.5)
                guard dx > 0, dy > 0 else { continue }
                let coverage = min(max(r - (dx * dx + dy * dy).squareRoot() + 0.5, 0), 1)
                guard coverage < 1 else { continue }
                let pixel = y * rowBytes + x * bytesPerPixel
                let alphaIndex = pixel + bytesPerPixel - 1
                for index in (premultiplied ? pixel : alphaIndex)...alphaIndex {
                    pixels[index] = UInt8((Double(pixels[index]) * coverage).rounded())
                }
            }
        }
        // Force-try: the dimensions and row length are those of a valid bitmap.
        return try! Bitmap(width: w, height: h, pixelFormat: format, bytesPerRow: rowBytes, scale: scale, pixels: pixels)
    }

    /// The format ``withAlphaChannel()`` converts to.
    var alphaFormat: PixelFormat {
        guard pixelFormat.alpha == .none else { return pixelFormat }
        return pixelFormat.channels == .gray || pixelFormat.channels == .grayAlpha ? .grayAlpha8 : .rgba8
    }

    /// The same pixels with an alpha channel: opaque formats become straight-alpha
    /// ``PixelFormat/rgba8`` or ``PixelFormat/grayAlpha8`` with alpha 255 (a format whose
    /// alpha byte is ignored gets it set to 255); formats with alpha come back unchanged.
    func withAlphaChannel() -> Bitmap {
        guard pixelFormat.alpha == .none else { return self }
        let (format, sourceBytes, colourBytes): (PixelFormat, Int, Int) = switch pixelFormat.channels {
        case .gray: (.grayAlpha8, 1, 1)
        case .grayAlpha: (.grayAlpha8, 2, 1)
        case .rgb: (.rgba8, 3, 3)
        case .rgba: (.rgba8, 4, 3)
        }
        let targetBytes = format.bytesPerPixel
        // Force-try: same dimensions as this valid bitmap.
        return try! Bitmap(width: width, height: height, pixelFormat: format, scale: scale) { output in
            pixels.withUnsafeBytes { input in
                let out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
                var target = 0
                for row in 0..<height {
                    let source = input.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * bytesPerRow
                    for x in 0..<width {
                        for channel in 0..<colourBytes { out[target + channel] = source[x * sourceBytes + channel] }
                        out[target + colourBytes] = 255
                        target += targetBytes
                    }
                }
            }
        }
    }
}
