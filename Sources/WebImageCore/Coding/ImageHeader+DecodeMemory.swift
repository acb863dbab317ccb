extension ImageHeader {
    /// An estimate of the most memory the system decoders hold at once decoding this image with
    /// `options`, in bytes: what ``ImageManager`` reserves from its decode memory budget before
    /// a decode starts. `nil` when the header does not give the size.
    ///
    /// It follows how the coders work, not a measurement of each file:
    /// - JPEG, baseline: the output at the DCT scale chosen for the thumbnail, which is at
    ///   most twice the thumbnail's side (four times its area), else the full bitmap;
    /// - JPEG, progressive: every DCT coefficient of the full image (two bytes per sample, three
    ///   full-resolution components at most), whatever the thumbnail, plus the output;
    /// - PNG: the whole inflated image data (the thumbnail path inflates it in one buffer; the
    ///   full decode writes the bitmap), taken at four bytes per pixel (8-bit RGBA; a 16-bit
    ///   file holds up to twice that), plus the output;
    /// - WebP: the output (libwebp scales while decoding);
    /// - HEIF and AVIF: the coded planes, the full bitmap and the output, and for an AVIF grid an
    ///   AV1 decoder for each tile;
    /// - GIF and animations: the canvas, the previous canvas and the frame being composed;
    /// - anything else: the full bitmap and the output.
    ///
    /// ```swift
    /// let estimate = ImageHeader(sniffing: data)?.estimatedDecodeMemory(options: options) ?? 0
    /// ```
    package func estimatedDecodeMemory(options: ImageDecodingOptions) -> Int? {
        guard let pixelWidth, let pixelHeight, let pixels = pixelCount, pixelWidth > 0, pixelHeight > 0 else { return nil }
        let bitmap = pixels.multipliedReportingOverflow(by: 4)
        guard !bitmap.overflow else { return .max }
        let full = bitmap.partialValue
        let output = options.thumbnail.map { thumbnail in
            let size = thumbnail.outputSize(width: pixelWidth, height: pixelHeight)
            return min(full, size.width * size.height * 4)
        } ?? full
        if isAnimated == true, !options.firstFrameOnly {
            return full.saturatingMultiplied(by: 3).saturatingAdded(output)
        }
        switch format {
        case .jpeg where isProgressive == true:
            return pixels.saturatingMultiplied(by: 6).saturatingAdded(output)
        case .jpeg:
            return options.thumbnail == nil ? full : min(full, output.saturatingMultiplied(by: 4))
        case .png, .apng:
            return full.saturatingAdded(pixelHeight).saturatingAdded(output)
        case .webp:
            return output
        case .avif, .heic, .heif:
            // The coded planes (up to three bytes a pixel: 4:4:4, or 4:2:0 at 10 bits), the RGB
            // bitmap and the output; libavif 0.11 keeps an AV1 decoder per grid tile besides.
            let planes = pixels.saturatingMultiplied(by: 3)
            let decoders = format == .avif ? (tileCount ?? 0).saturatingMultiplied(by: Self.av1DecoderBytesPerTile) : 0
            return full.saturatingAdded(planes).saturatingAdded(decoders).saturatingAdded(output)
        case .gif:
            return full.saturatingMultiplied(by: 3).saturatingAdded(output)
        default:
            return full.saturatingAdded(output)
        }
    }
}

extension ImageHeader {
    /// What libavif 0.11 holds for each tile of a grid while it decodes: an AV1 decoder (dav1d,
    /// one thread) and the tile's planes. avifdec's peak RSS over grids of 64 px tiles was 412 to
    /// 440 KB a tile (1,024 and 4,096 tiles; docs/reliability.md), rounded up.
    static let av1DecoderBytesPerTile = 512 << 10
}

private extension Int {
    func saturatingMultiplied(by other: Int) -> Int {
        let (value, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? .max : value
    }

    func saturatingAdded(_ other: Int) -> Int {
        let (value, overflow) = addingReportingOverflow(other)
        return overflow ? .max : value
    }
}
