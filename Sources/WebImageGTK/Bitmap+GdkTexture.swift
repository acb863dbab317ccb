import CGTK
import CWebImageGTK
import WebImage

extension Bitmap {
    /// A new GdkTexture (owned by the caller) over a copy of the pixels. GTK 4.8 has no grey
    /// memory formats, so grey bitmaps are widened to RGBA first.
    func makeTexture() -> OpaquePointer? {
        let source = pixelFormat.channels == .gray || pixelFormat.channels == .grayAlpha ? widenedToRGBA() : self
        let format: GdkMemoryFormat = switch (source.pixelFormat.channels, source.pixelFormat.alpha) {
        case (.rgb, _): GDK_MEMORY_R8G8B8
        case (_, .premultiplied): GDK_MEMORY_R8G8B8A8_PREMULTIPLIED
        default: GDK_MEMORY_R8G8B8A8
        }
        return source.pixels.withUnsafeBufferPointer { buffer in
            wi_gtk_texture_new(Int32(source.width), Int32(source.height), format, buffer.baseAddress, gsize(source.bytesPerRow))
        }
    }

    private func widenedToRGBA() -> Bitmap {
        let hasAlpha = pixelFormat.channels == .grayAlpha
        var rgba = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let source = y * bytesPerRow + x * pixelFormat.bytesPerPixel, target = (y * width + x) * 4
                rgba[target] = pixels[source]
                rgba[target + 1] = pixels[source]
                rgba[target + 2] = pixels[source]
                if hasAlpha { rgba[target + 3] = pixels[source + 1] }
            }
        }
        let alpha: PixelFormat.AlphaMode = hasAlpha ? pixelFormat.alpha : .straight
        // The sizes come from a valid bitmap, so the copy is valid too.
        return try! Bitmap(width: width, height: height, pixelFormat: PixelFormat(channels: .rgba, alpha: alpha), bytesPerRow: width * 4, pixels: rgba)
    }
}
