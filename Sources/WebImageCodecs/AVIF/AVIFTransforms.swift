import CAvif
import WebImageCore

/// The transformative properties of an AVIF image item (`clap`, `irot`, `imir`), applied to its
/// decoded bitmap in the order MIAF prescribes: crop, then rotate, then mirror. libavif 0.11
/// reports them (``avifImage/transformFlags``) but leaves applying them to the application.
enum AVIFTransforms {
    static func apply(to bitmap: Bitmap, of image: UnsafeMutablePointer<avifImage>) throws -> Bitmap {
        let flags = image.pointee.transformFlags
        var bitmap = bitmap
        if flags & UInt32(AVIF_TRANSFORM_CLAP.rawValue) != 0, let crop = cropRect(image) {
            bitmap = try bitmap.cropped(x: crop.x, y: crop.y, width: crop.width, height: crop.height)
        }
        if flags & UInt32(AVIF_TRANSFORM_IROT.rawValue) != 0 {
            // `angle` counts quarter turns counter-clockwise; `oriented` names the turn that
            // brings a stored image upright, so a counter-clockwise quarter turn is `.left`.
            switch image.pointee.irot.angle & 3 {
            case 1: bitmap = bitmap.oriented(.left)
            case 2: bitmap = bitmap.oriented(.down)
            case 3: bitmap = bitmap.oriented(.right)
            default: break
            }
        }
        if flags & UInt32(AVIF_TRANSFORM_IMIR.rawValue) != 0 {
            // Mode 0 exchanges top and bottom, mode 1 left and right.
            bitmap = bitmap.oriented(image.pointee.imir.mode == 0 ? .downMirrored : .upMirrored)
        }
        return bitmap
    }

    /// The clean aperture as a crop rectangle, or `nil` when libavif finds it invalid (not
    /// inside the image, or not on the chroma grid): the whole image is then shown, as
    /// libavif's own tools do.
    static func cropRect(_ image: UnsafeMutablePointer<avifImage>) -> (x: Int, y: Int, width: Int, height: Int)? {
        var rect = avifCropRect()
        var diagnostics = avifDiagnostics()
        var clap = image.pointee.clap
        guard avifCropRectConvertCleanApertureBox(
            &rect, &clap, image.pointee.width, image.pointee.height, image.pointee.yuvFormat, &diagnostics) != 0,
            rect.width > 0, rect.height > 0
        else { return nil }
        return (Int(rect.x), Int(rect.y), Int(rect.width), Int(rect.height))
    }
}
