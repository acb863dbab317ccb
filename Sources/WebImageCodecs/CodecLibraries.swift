import CAvif
import CCodecShims
import CDeflate
import CGIF
import CHeif
import CJxl
import CLCMS2
import CPoppler
import CRsvg
import CTurboJPEG
import CWebP
import CYUV

/// The versions of the C codec libraries this binary runs with, for diagnostics
/// (`webimage --version`) and bug reports.
package enum CodecLibraries {
    /// Library name and version, one pair per codec library.
    package static var versions: [(library: String, version: String)] {
        let lcms = Int(cmsGetEncodedCMMversion())
        return [
            ("libjpeg-turbo (libjpeg API)", "\(wi_jpeg_lib_version() / 10).\(wi_jpeg_lib_version() % 10)"),
            ("libpng", String(cString: wi_png_lib_version())),
            ("libwebp", Self.dotted(WebPGetDecoderVersion())),
            ("giflib", "\(GIFLIB_MAJOR).\(GIFLIB_MINOR).\(GIFLIB_RELEASE)"),
            ("lcms2", "\(lcms / 1000).\((lcms / 10) % 100)"),
            ("libwebpdemux", Self.dotted(WebPGetDemuxVersion())),
            // Opened when first used (LazyLibrary): asking a version loads the library.
            ("libavif", Self.loaded(.avif) { "\(String(cString: avifVersion())) (\(avifCodecs))" }),
            ("libheif", Self.loaded(.heif) { String(cString: heif_get_version()) }),
            ("libjxl", Self.loaded(.jxl) {
                let jxl = JxlDecoderVersion()
                return "\(jxl / 1_000_000).\(jxl / 1000 % 1000).\(jxl % 1000)"
            }),
            ("librsvg", "\(rsvg_major_version).\(rsvg_minor_version).\(rsvg_micro_version)"),
            ("poppler-glib", Self.loaded(.poppler) { String(cString: poppler_get_version()) }),
            // Neither has a run-time version call: the headers' version, which Debian ships
            // in the same source package as the library.
            ("libdeflate", LIBDEFLATE_VERSION_STRING),
            ("libyuv", "\(LIBYUV_VERSION)"),
            ("TurboJPEG", tjGetErrorStr2(nil) != nil ? "2.x API" : "unknown"),
        ]
    }

    /// `version()` when `library` loads, else "not installed".
    private static func loaded(_ library: LazyLibrary, _ version: () -> String) -> String {
        library.isAvailable ? version() : "not installed"
    }

    /// libwebp's packed version (0xMMmmpp) as "M.m.p".
    private static func dotted(_ packed: Int32) -> String {
        "\((packed >> 16) & 0xff).\((packed >> 8) & 0xff).\(packed & 0xff)"
    }

    /// The AV1 codecs libavif was built with, as it lists them ("dav1d [dec]:1.0.0, aom [enc/dec]…").
    private static var avifCodecs: String {
        var buffer = [CChar](repeating: 0, count: 256)
        avifCodecVersions(&buffer)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
