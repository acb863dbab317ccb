import CAvif
import CCodecShims
import CGIF
import CHeif
import CLCMS2
import CTurboJPEG
import CWebP

/// The versions of the C codec libraries this binary runs with, for diagnostics
/// (`webimage --version`) and bug reports.
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
            ("libavif", "\(String(cString: avifVersion())) (\(avifCodecs))"),
            ("libheif", String(cString: heif_get_version())),
            ("TurboJPEG", tjGetErrorStr2(nil) != nil ? "2.x API" : "unknown"),
        ]
    }

    /// The AV1 codecs libavif was built with, as it lists them ("dav1d [dec]:1.0.0, aom [enc/dec]…").
    private static var avifCodecs: String {
        var buffer = [CChar](repeating: 0, count: 256)
        avifCodecVersions(&buffer)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
