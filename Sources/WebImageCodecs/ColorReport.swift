import CLCMS2
import Foundation
import WebImageCore

/// What an image's colour is, as the decoders see it: the description of the profile a decode
/// converts from (an ICC profile's own, or the one ``CodedColorSpace`` gives the code points of
/// an `nclx` box, a PNG `cICP`, or PNG `gAMA` with `cHRM`), and whether that conversion to sRGB
/// changes the pixels. For `webimage info`.
package struct ColorReport: Sendable, Equatable {
    /// The profile's description (its `desc` tag, in US English where it has several), `nil`
    /// when there is no profile, or none lcms2 can read, or it has no description.
    package var profileDescription: String?
    /// Whether a decode to sRGB (the default) changes the stored values: `false` for no profile,
    /// one lcms2 cannot use (the pixels are then left as they are), and an RGB profile that is
    /// sRGB by another name (``SRGBTransform/isIdentity``).
    package var convertsToSRGB: Bool

    /// The report for `profile`, the ``ImageContainer/iccProfile`` of a decode that kept the
    /// colour space (``ImageDecodingOptions/ColorSpace/preserve``).
    package init(profile: Data?) {
        profileDescription = nil
        convertsToSRGB = false
        guard let profile, let handle = profile.withUnsafeBytes({ cmsOpenProfileFromMem($0.baseAddress, cmsUInt32Number($0.count)) }) else {
            return
        }
        defer { cmsCloseProfile(handle) }
        profileDescription = Self.description(of: handle)
        switch cmsGetColorSpace(handle) {
        case cmsSigCmykData:
            convertsToSRGB = SRGBTransform.cmyk(profile: profile) != nil
        case cmsSigRgbData, cmsSigGrayData:
            convertsToSRGB = SRGBTransform.cached(for: profile, layout: .rgba8).map { !$0.isIdentity } ?? false
        default:
            break
        }
    }

    private static func description(of handle: cmsHPROFILE) -> String? {
        let length = cmsGetProfileInfoASCII(handle, cmsInfoDescription, "en", "US", nil, 0)
        guard length > 1, length < 1 << 16 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(length))
        cmsGetProfileInfoASCII(handle, cmsInfoDescription, "en", "US", &buffer, length)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}
