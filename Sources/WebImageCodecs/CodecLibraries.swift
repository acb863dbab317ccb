import CCodecShims
import CGIF
import CLCMS2
import CTurboJPEG
import CWebP

/// The versions of the C codec libraries this binary runs with, for diagnostics
/// (`webimage info --versions`) and bug reports.
public enum CodecLibraries {
    /// Library name and version, one pair per codec library.
    public static var versions: [(library: String, version: String)] {
        let webp = WebPGetDecoderVersion()
        let lcms = Int(cmsGetEncodedCMMversion())
        return [
            ("libjpeg-turbo (libjpeg API)", "\(wi_jpeg_lib_version() / 10).\(wi_jpeg_lib_version() % 10)"),
            ("libpng", String(cString: wi_png_lib_version())),
            ("libwebp", "\((webp >> 16) & 0xff).\((webp >> 8) & 0xff).\(webp & 0xff)"),
            ("giflib", "\(GIFLIB_MAJOR).\(GIFLIB_MINOR).\(GIFLIB_RELEASE)"),
            ("lcms2", "\(lcms / 1000).\((lcms / 10) % 100)"),
            ("TurboJPEG", tjGetErrorStr2(nil) != nil ? "2.x API" : "unknown"),
        ]
    }
}
