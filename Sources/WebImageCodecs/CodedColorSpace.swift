import CLCMS2
import Foundation
import Synchronization

/// A colour space stated as ITU-T H.273 code points (colour primaries and transfer
/// characteristics: an AVIF or HEIF `nclx` colour box), as the ICC profile that
/// ``ColorConversion`` converts from: a file tagged Display P3 or BT.2020 by its code points
/// alone then comes out in sRGB like one tagged by an ICC profile.
///
/// Supported: the primaries of BT.709/sRGB (1), BT.601 (5, 6), SMPTE 240 (7), BT.2020 (9) and
/// Display P3 (12), all with a D65 white; the sRGB curve (13) and the BT.709 family (1, 6, 14,
/// 15, read with the sRGB curve as browsers display such images), linear (8), gamma 2.2 (4) and
/// 2.8 (5). Unspecified values (2) are sRGB's. HDR transfers (PQ 16, HLG 18) and other values
/// give `nil`: the pixels are left as stored, as for a profile lcms2 cannot use.
enum CodedColorSpace {
    /// An ICC profile for `primaries` and `transfer`, or `nil` when they are sRGB already or not
    /// supported.
    static func iccProfile(primaries: Int, transfer: Int) -> Data? {
        guard let chromaticities = Self.primaries[primaries == 2 ? 1 : primaries], let curve = Curve(transfer) else { return nil }
        if primaries == 1 || primaries == 2, curve == .sRGB { return nil }
        let key = primaries << 8 | transfer
        if let cached = cache.withLock({ $0[key] }) { return cached.map { Data($0) } }
        let profile = makeProfile(white: d65, chromaticities, curve: curve, description: describe(primaries: primaries, transfer: transfer))
        cache.withLock { $0[key] = .some(profile) }
        return profile.map { Data($0) }
    }

    /// An ICC profile for a white point and primaries (x, y) and a power-law decoding exponent:
    /// what a PNG's `cHRM` and `gAMA` chunks state. Not cached (such files are rare).
    static func iccProfile(white: (Double, Double), primaries: [(Double, Double)], gamma: Double) -> Data? {
        let description = "PNG gAMA (decoding gamma \(String(format: "%.2f", gamma))) with cHRM primaries"
        return makeProfile(white: white, primaries, curve: gamma == 1 ? .linear : .gamma(gamma), description: description).map { Data($0) }
    }

    /// The profile description of a code-point colour space, as `webimage info` shows it: the
    /// names of its primaries and transfer, and the numbers (H.273's) they were read from.
    static func describe(primaries: Int, transfer: Int) -> String {
        let primariesName = [1: "BT.709", 2: "unspecified (BT.709)", 5: "BT.601 625-line", 6: "BT.601 525-line",
                             7: "SMPTE 240M", 9: "BT.2020", 12: "Display P3"][primaries] ?? "code \(primaries)"
        let transferName = [1: "BT.709", 2: "unspecified (sRGB)", 4: "gamma 2.2", 5: "gamma 2.8", 6: "BT.601",
                            8: "linear", 13: "sRGB", 14: "BT.2020 10-bit", 15: "BT.2020 12-bit"][transfer] ?? "code \(transfer)"
        return "\(primariesName) primaries, \(transferName) transfer (coded \(primaries)/\(transfer))"
    }

    /// The sRGB primaries (BT.709), for a PNG that states a gamma alone.
    static var sRGBPrimaries: [(Double, Double)] { primaries[1]! }
    static let d65 = (0.3127, 0.3290)

    /// Kept as `[UInt8]`, not `Data`: LeakSanitizer cannot follow a global `Data`'s tagged
    /// pointer (see `SRGBTransform`'s cache).
    private static let cache = Mutex<[Int: [UInt8]?]>([:])

    /// Red, green and blue x, y (H.273 table 2).
    private static let primaries: [Int: [(Double, Double)]] = [
        1: [(0.640, 0.330), (0.300, 0.600), (0.150, 0.060)],
        5: [(0.640, 0.330), (0.290, 0.600), (0.150, 0.060)],
        6: [(0.630, 0.340), (0.310, 0.595), (0.155, 0.070)],
        7: [(0.630, 0.340), (0.310, 0.595), (0.155, 0.070)],
        9: [(0.708, 0.292), (0.170, 0.797), (0.131, 0.046)],
        12: [(0.680, 0.320), (0.265, 0.690), (0.150, 0.060)],
    ]

    private enum Curve: Equatable {
        case sRGB, linear, gamma(Double)

        init?(_ transfer: Int) {
            switch transfer {
            case 1, 2, 6, 13, 14, 15: self = .sRGB
            case 8: self = .linear
            case 4: self = .gamma(2.2)
            case 5: self = .gamma(2.8)
            default: return nil
            }
        }
    }

    private static func makeProfile(
        white whitePoint: (Double, Double), _ chromaticities: [(Double, Double)], curve: Curve, description: String
    ) -> [UInt8]? {
        let toneCurve: OpaquePointer? = switch curve {
        case .sRGB:
            // IEC 61966-2-1 as lcms2's parametric type 4: Y = ((aX + b)^g for X ≥ d, else cX.
            [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045].withUnsafeBufferPointer { cmsBuildParametricToneCurve(nil, 4, $0.baseAddress) }
        case .linear: cmsBuildGamma(nil, 1.0)
        case .gamma(let gamma): cmsBuildGamma(nil, gamma)
        }
        guard let toneCurve else { return nil }
        defer { cmsFreeToneCurve(toneCurve) }
        var white = cmsCIExyY(x: whitePoint.0, y: whitePoint.1, Y: 1)
        var triple = cmsCIExyYTRIPLE(
            Red: cmsCIExyY(x: chromaticities[0].0, y: chromaticities[0].1, Y: 1),
            Green: cmsCIExyY(x: chromaticities[1].0, y: chromaticities[1].1, Y: 1),
            Blue: cmsCIExyY(x: chromaticities[2].0, y: chromaticities[2].1, Y: 1))
        var curves: [OpaquePointer?] = [toneCurve, toneCurve, toneCurve]
        guard let profile = curves.withUnsafeMutableBufferPointer({ cmsCreateRGBProfile(&white, &triple, $0.baseAddress) }) else { return nil }
        defer { cmsCloseProfile(profile) }
        // lcms2 names a built profile "RGB built-in"; a kept profile (`.preserve`) and `webimage
        // info` then say where it came from instead.
        if let text = cmsMLUalloc(nil, 1) {
            defer { cmsMLUfree(text) }
            if cmsMLUsetASCII(text, "en", "US", description) != 0 {
                cmsWriteTag(profile, cmsSigProfileDescriptionTag, UnsafeRawPointer(text))
            }
        }
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        guard cmsSaveProfileToMem(profile, &bytes, &size) != 0 else { return nil }
        return bytes
    }
}
