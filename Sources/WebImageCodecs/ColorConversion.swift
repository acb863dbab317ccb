import CCodecShims
import CLCMS2
import Foundation
import Synchronization
import WebImageCore

/// Decoded pixels moved from the ICC profile a file carries to sRGB, with lcms2, as
/// ``ImageDecodingOptions/ColorSpace/sRGB`` asks (the default).
///
/// The result carries no profile whatever happens: a profile lcms2 cannot read, or one that
/// describes neither RGB nor grey pixels, is dropped with the pixels left as stored, as browsers
/// ignore a profile they cannot use. A grey profile is applied to the grey the decoders
/// replicated into R, G and B. (A CMYK JPEG's profile is applied by the JPEG
/// decoder itself, to the CMYK samples: see ``SRGBTransform/cmyk(profile:)``.) Each frame of an animation is
/// converted alike; alpha is kept.
enum ColorConversion {
    /// `container` in sRGB when `options` ask for it (or `always`), else unchanged.
    static func apply(_ container: ImageContainer, options: ImageDecodingOptions, always: Bool = false) -> ImageContainer {
        guard options.colorSpace == .sRGB || always, let profile = container.iccProfile else { return container }
        var container = container
        container.iccProfile = nil
        func converted(_ bitmap: Bitmap) -> Bitmap {
            guard let layout = SRGBTransform.Layout(bitmap.pixelFormat),
                  let transform = SRGBTransform.cached(for: profile, layout: layout) else { return bitmap }
            return transform.apply(bitmap)
        }
        if var animation = container.animation {
            for index in animation.frames.indices {
                animation.frames[index].bitmap = converted(animation.frames[index].bitmap)
            }
            container.animation = animation
            container.image = animation.frames[0].bitmap
        } else {
            container.image = converted(container.image)
        }
        return container
    }

    /// One frame of a frame-at-a-time decode (an ``AnimationFrameSource``'s) in sRGB, as
    /// ``apply(_:options:always:)`` converts each frame of a whole decode; unchanged when
    /// `options` keep the colour space or `profile` is absent or unusable.
    static func apply(_ bitmap: Bitmap, profile: Data?, options: ImageDecodingOptions) -> Bitmap {
        guard options.colorSpace == .sRGB, let profile, let layout = SRGBTransform.Layout(bitmap.pixelFormat),
              let transform = SRGBTransform.cached(for: profile, layout: layout) else { return bitmap }
        return transform.apply(bitmap)
    }
}

extension CoderRegistry {
    /// ``CoderRegistry/finish(_:options:sourceSize:)``, then the colour conversion: what an
    /// incremental decoder does to each preview and its final image (converting after the
    /// thumbnail resize, the fewer pixels).
    static func finishInColorSpace(_ container: ImageContainer, options: ImageDecodingOptions, always: Bool = false) throws -> ImageContainer {
        ColorConversion.apply(try finish(container, options: options), options: options, always: always)
    }
}

/// An lcms2 transform from one RGB profile to sRGB for straight RGBA8 or RGB8 pixels (what
/// decoders give), or from a CMYK profile for Adobe's inverted CMYK samples (a CMYK JPEG's,
/// four bytes a pixel, as libjpeg gives them) to opaque RGBA8; perceptual intent.
///
/// `@unchecked Sendable`: the transform is made with `cmsFLAGS_NOCACHE`, which lcms2 documents
/// as what calling `cmsDoTransform` from several threads at once needs (the flag turns off the
/// one mutable part, a one-pixel cache); the handle is never changed after `init`, and is deleted
/// only in `deinit`, when no caller holds the object.
final class SRGBTransform: @unchecked Sendable {
    private let handle: cmsHTRANSFORM
    private let layout: Layout

    /// The pixel layouts converted; others (premultiplied alpha, grey) are left as they are.
    enum Layout: Hashable {
        case rgba8, rgb8
        /// In: C, M, Y, K with 0 as full ink, in an RGBA8 bitmap's four bytes; out: RGBA8, opaque.
        case invertedCMYK

        init?(_ format: PixelFormat) {
            switch format {
            case .rgba8: self = .rgba8
            case .rgb8: self = .rgb8
            default: return nil
            }
        }

        var lcmsType: cmsUInt32Number {
            switch self {
            case .rgba8: wi_lcms_type_rgba_8
            case .rgb8: wi_lcms_type_rgb_8
            case .invertedCMYK: wi_lcms_type_cmyk_8_rev
            }
        }
        var outputType: cmsUInt32Number { self == .invertedCMYK ? wi_lcms_type_rgba_8 : lcmsType }
        var colorSpace: cmsColorSpaceSignature { self == .invertedCMYK ? cmsSigCmykData : cmsSigRgbData }
        var bytesPerPixel: Int { self == .rgb8 ? 3 : 4 }
        var pixelFormat: PixelFormat { self == .rgb8 ? .rgb8 : .rgba8 }
    }

    /// The transform of a CMYK JPEG's `profile`, or `nil` when it is absent, unreadable or not
    /// CMYK (the decoder then converts naively).
    static func cmyk(profile: Data?) -> SRGBTransform? {
        profile.flatMap { cached(for: $0, layout: .invertedCMYK) }
    }

    /// `nil` when lcms2 cannot read `profile` or it does not describe `layout`'s pixels (RGB or
    /// grey ones for `.rgba8` and `.rgb8`, CMYK for `.invertedCMYK`).
    init?(profile: Data, layout: Layout) {
        let source = profile.withUnsafeBytes { bytes in
            cmsOpenProfileFromMem(bytes.baseAddress, cmsUInt32Number(bytes.count))
        }
        guard let source else { return nil }
        defer { cmsCloseProfile(source) }
        let isGrey = layout != .invertedCMYK && cmsGetColorSpace(source) == cmsSigGrayData
        guard cmsGetColorSpace(source) == layout.colorSpace || isGrey, let sRGB = cmsCreate_sRGBProfile() else { return nil }
        defer { cmsCloseProfile(sRGB) }
        let input = !isGrey ? layout.lcmsType : layout == .rgba8 ? wi_lcms_type_gray_in_rgba_8 : wi_lcms_type_gray_in_rgb_8
        // CMYK and grey have no alpha channel of lcms2's to copy: apply(_:) fills it in.
        let flags = layout == .invertedCMYK || isGrey ? cmsFLAGS_NOCACHE : cmsFLAGS_COPY_ALPHA | cmsFLAGS_NOCACHE
        guard let handle = cmsCreateTransform(
            source, input, sRGB, layout.outputType, cmsUInt32Number(INTENT_PERCEPTUAL), cmsUInt32Number(flags)
        ) else { return nil }
        self.handle = handle
        self.layout = layout
        self.isGrey = isGrey
        isIdentity = layout != .invertedCMYK && !isGrey && Self.mapsToItself(handle, layout: layout)
    }

    /// The source profile is grey: the input is the first byte of each pixel.
    private let isGrey: Bool

    /// Whether the transform leaves every colour as it is, within 1 (a source profile that is
    /// sRGB by another name, as most cameras' and phones' are): then ``apply(_:)`` skips the
    /// work. Judged once per transform on a 6 × 6 × 6 grid of colours.
    let isIdentity: Bool

    private static func mapsToItself(_ handle: cmsHTRANSFORM, layout: Layout) -> Bool {
        let levels: [UInt8] = [0, 51, 102, 153, 204, 255]
        var input: [UInt8] = []
        for red in levels {
            for green in levels {
                for blue in levels {
                    input += layout == .rgba8 ? [red, green, blue, 255] : [red, green, blue]
                }
            }
        }
        var output = [UInt8](repeating: 0, count: input.count)
        cmsDoTransform(handle, input, &output, cmsUInt32Number(input.count / layout.bytesPerPixel))
        return zip(input, output).allSatisfy { abs(Int($0) - Int($1)) <= 1 }
    }

    deinit {
        cmsDeleteTransform(handle)
    }

    /// `bitmap` converted, when it has this transform's layout; unchanged otherwise.
    func apply(_ bitmap: Bitmap) -> Bitmap {
        guard bitmap.pixelFormat == layout.pixelFormat, !isIdentity else { return bitmap }
        let rowBytes = bitmap.width * layout.bytesPerPixel
        let converted = try? Bitmap(width: bitmap.width, height: bitmap.height, pixelFormat: layout.pixelFormat) { output in
            bitmap.pixels.withUnsafeBytes { input in
                // Row by row: bytesPerRow may exceed the row's pixels, and lcms2 counts in UInt32.
                for row in 0..<bitmap.height {
                    cmsDoTransform(
                        handle,
                        input.baseAddress! + row * bitmap.bytesPerRow,
                        output.baseAddress! + row * rowBytes,
                        cmsUInt32Number(bitmap.width)
                    )
                }
                if layout == .invertedCMYK {
                    let bytes = output.bindMemory(to: UInt8.self)
                    for alpha in stride(from: 3, to: bitmap.height * rowBytes, by: 4) { bytes[alpha] = 255 }
                } else if isGrey, layout == .rgba8 {
                    // The alpha lcms2 skipped as an extra channel, copied from the input.
                    let bytes = output.bindMemory(to: UInt8.self), source = input.bindMemory(to: UInt8.self)
                    for row in 0..<bitmap.height {
                        for alpha in stride(from: 3, to: rowBytes, by: 4) {
                            bytes[row * rowBytes + alpha] = source[row * bitmap.bytesPerRow + alpha]
                        }
                    }
                }
            }
        }
        return converted ?? bitmap
    }

    /// The transforms of the last few profiles seen: a server meets the same handful of
    /// profiles (a camera's, Display P3, Adobe RGB) again and again, and making a transform
    /// costs more than converting a thumbnail. Profiles lcms2 refused are remembered too; a
    /// profile over 1 MiB is not (eight of a file's 16 MiB limit would hold 128 MiB).
    ///
    /// The profiles are kept as `[UInt8]`, not `Data`: LeakSanitizer cannot follow the tagged
    /// pointer inside a `Data` held by a global, and the fuzz targets' leak check reported the
    /// cache as leaked (CI, 2026-11-25).
    private static let recent = Mutex<[(profile: [UInt8], layout: Layout, transform: SRGBTransform?)]>([])
    private static let recentLimit = 8
    private static let largestCachedProfile = 1 << 20

    static func cached(for profile: Data, layout: Layout) -> SRGBTransform? {
        let bytes = [UInt8](profile)
        if let hit = recent.withLock({ entries in entries.first { $0.layout == layout && $0.profile == bytes } }) {
            return hit.transform
        }
        let transform = SRGBTransform(profile: profile, layout: layout)
        guard profile.count <= largestCachedProfile else { return transform }
        recent.withLock { entries in
            guard !entries.contains(where: { $0.layout == layout && $0.profile == bytes }) else { return }
            if entries.count == recentLimit { entries.removeFirst() }
            entries.append((bytes, layout, transform))
        }
        return transform
    }
}
