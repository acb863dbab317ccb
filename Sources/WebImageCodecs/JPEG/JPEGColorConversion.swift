import CCodecShims
import CLCMS2
import Foundation
import WebImageCore

/// Converting decoded JPEG pixels from their embedded ICC profile to sRGB, with lcms2, for
/// ``JPEGDecoder/convertsToSRGB``.
enum JPEGColorConversion {
    /// `bitmap` converted from `profile` to sRGB (perceptual intent), or `bitmap` unchanged
    /// when there is no profile, the file is not grey/RGB/YCbCr, the profile is not an RGB
    /// profile (a grey or CMYK profile does not describe RGBA pixels), or lcms2 refuses it.
    static func toSRGB(_ bitmap: Bitmap, profile: Data?, header: JPEGHeader) -> Bitmap {
        guard let profile, !header.isCMYK, bitmap.pixelFormat == .rgba8 else { return bitmap }
        let source = profile.withUnsafeBytes { bytes in
            cmsOpenProfileFromMem(bytes.baseAddress, cmsUInt32Number(bytes.count))
        }
        guard let source else { return bitmap }
        defer { cmsCloseProfile(source) }
        guard cmsGetColorSpace(source) == cmsSigRgbData, let sRGB = cmsCreate_sRGBProfile() else { return bitmap }
        defer { cmsCloseProfile(sRGB) }
        guard let transform = cmsCreateTransform(
            source, wi_lcms_type_rgba_8, sRGB, wi_lcms_type_rgba_8,
            cmsUInt32Number(INTENT_PERCEPTUAL), cmsUInt32Number(cmsFLAGS_COPY_ALPHA)
        ) else { return bitmap }
        defer { cmsDeleteTransform(transform) }
        let converted = try? Bitmap(width: bitmap.width, height: bitmap.height, pixelFormat: .rgba8) { output in
            bitmap.pixels.withUnsafeBytes { input in
                // Row by row: bytesPerRow may exceed the row's pixels, and lcms2 counts in UInt32.
                for row in 0..<bitmap.height {
                    cmsDoTransform(
                        transform,
                        input.baseAddress! + row * bitmap.bytesPerRow,
                        output.baseAddress! + row * bitmap.width * 4,
                        cmsUInt32Number(bitmap.width)
                    )
                }
            }
        }
        return converted ?? bitmap
    }
}
