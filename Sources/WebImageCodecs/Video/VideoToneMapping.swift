import CFFmpeg
import Foundation
import WebImageCore

/// HDR frames (PQ or HLG transfer, BT.2020 primaries) to 8-bit sRGB, by the method of ffmpeg's
/// usual tone-mapping chain, `zscale=t=linear:npl=100,zscale=p=bt709,tonemap=hable:desat=0,zscale=t=iec61966-2-1`:
///
/// 1. **To linear light**: libswscale gives the frame as 16-bit R′G′B′ (its matrix and range
///    applied, at the output size: the reduction is done on the coded signal); each value goes
///    through the transfer's EOTF, PQ's (SMPTE ST 2084) to absolute luminance, or HLG's inverse
///    OETF and its OOTF for a 1,000 cd/m² display (BT.2100, system gamma 1.2). 1.0 is 100 cd/m²,
///    SDR's reference white.
/// 2. **Primaries**: BT.2020 to BT.709 by the linear-light matrix of BT.2087.
/// 3. **Tone curve**: Hable's filmic curve on the brightest of the three components, normalised
///    so that the signal's peak maps to 1 (``peakLuminance(of:stream:)``: the content's MaxCLL,
///    else the mastering display's peak, else 1,000 cd/m²), the pixel scaled by the ratio so that
///    hues are kept; no desaturation.
/// 4. **Out**: clipped to 0…1 and encoded with the sRGB transfer function, rounded to 8 bits.
///
/// Both transfer functions are tables (65,536 entries each, built once), so the per-pixel work is
/// lookups, one division and a 3 × 3 matrix: loops the compiler can keep in registers.
enum VideoToneMapping {
    /// The HDR transfer functions tone-mapped.
    enum Transfer: Sendable {
        case pq, hlg

        /// The transfer for a frame's `color_trc`, `nil` for SDR.
        init?(_ characteristic: AVColorTransferCharacteristic) {
            switch characteristic {
            case AVCOL_TRC_SMPTE2084: self = .pq
            case AVCOL_TRC_ARIB_STD_B67: self = .hlg
            default: return nil
            }
        }

        /// FFmpeg's name for it (`smpte2084`, `arib-std-b67`).
        var name: String { self == .pq ? "smpte2084" : "arib-std-b67" }
    }

    /// SDR's reference white, in cd/m²: 1.0 in linear light.
    static let referenceWhite: Float = 100
    /// The peak assumed for a signal whose metadata states none.
    static let defaultPeakNits = 1000.0

    /// The signal's peak in cd/m²: the content light level's MaxCLL, else the mastering display's
    /// maximum luminance (the frame's side data, else the stream's), else ``defaultPeakNits``.
    static func peakLuminance(of frame: UnsafeMutablePointer<AVFrame>, stream: UnsafeMutablePointer<AVStream>) -> Double {
        var size = 0
        let light = av_frame_get_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL).map { UnsafeRawPointer($0.pointee.data) }
            ?? av_stream_get_side_data(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, &size).map { UnsafeRawPointer($0) }
        if let light {
            let maxCLL = light.assumingMemoryBound(to: AVContentLightMetadata.self).pointee.MaxCLL
            if maxCLL > 0 { return Double(maxCLL) }
        }
        let mastering = av_frame_get_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA).map { UnsafeRawPointer($0.pointee.data) }
            ?? av_stream_get_side_data(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, &size).map { UnsafeRawPointer($0) }
        if let mastering {
            let metadata = mastering.assumingMemoryBound(to: AVMasteringDisplayMetadata.self).pointee
            let peak = metadata.max_luminance
            if metadata.has_luminance != 0, peak.num > 0, peak.den > 0 {
                let nits = Double(peak.num) / Double(peak.den)
                if nits.isFinite, nits >= 1 { return min(nits, 10000) }
            }
        }
        return defaultPeakNits
    }

    /// Tone-maps a 16-bit little-endian RGB frame (`AV_PIX_FMT_RGB48LE`) to opaque RGBA.
    static func toneMap(_ frame: UnsafeMutablePointer<AVFrame>, transfer: Transfer, peakNits: Double) throws -> Bitmap {
        let width = Int(frame.pointee.width), height = Int(frame.pointee.height)
        guard let plane = frame.pointee.data.0 else { throw ImageError.corruptData("video: the converted frame has no pixels") }
        let stride = Int(frame.pointee.linesize.0)
        let toLinear = transfer == .pq ? Tables.pq : Tables.hlgScene
        let peak = Float(peakNits) / referenceWhite
        let curvePeak = hable(peak)
        return try Bitmap(width: width, height: height, pixelFormat: .rgba8) { buffer in
            let out = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            toLinear.withUnsafeBufferPointer { linear in
                Tables.sRGB.withUnsafeBufferPointer { encode in
                    for row in 0..<height {
                        // Rows of FFmpeg's buffers start 2-byte aligned (they are 64-byte aligned).
                        let samples = UnsafeRawPointer(plane + row * stride).assumingMemoryBound(to: UInt16.self)
                        let pixels = out + row * width * 4
                        for x in 0..<width {
                            var red = linear[Int(UInt16(littleEndian: samples[x * 3]))]
                            var green = linear[Int(UInt16(littleEndian: samples[x * 3 + 1]))]
                            var blue = linear[Int(UInt16(littleEndian: samples[x * 3 + 2]))]
                            if transfer == .hlg { (red, green, blue) = hlgDisplay(red, green, blue) }
                            (red, green, blue) = toBT709(red, green, blue)
                            let brightest = max(red, green, blue, 1e-6)
                            let ratio = hable(brightest) / curvePeak / brightest
                            pixels[x * 4] = encode[index(red * ratio)]
                            pixels[x * 4 + 1] = encode[index(green * ratio)]
                            pixels[x * 4 + 2] = encode[index(blue * ratio)]
                            pixels[x * 4 + 3] = 255
                        }
                    }
                }
            }
        }
    }

    /// Hable's (Uncharted 2) filmic curve, with the constants ffmpeg's `tonemap` uses.
    @inline(__always) static func hable(_ value: Float) -> Float {
        let a: Float = 0.15, b: Float = 0.50, c: Float = 0.10, d: Float = 0.20, e: Float = 0.02, f: Float = 0.30
        return (value * (value * a + b * c) + d * e) / (value * (value * a + b) + d * f) - e / f
    }

    /// BT.2020 to BT.709 primaries, in linear light (BT.2087).
    @inline(__always) static func toBT709(_ r: Float, _ g: Float, _ b: Float) -> (Float, Float, Float) {
        (1.6605 * r - 0.5876 * g - 0.0728 * b,
         -0.1246 * r + 1.1329 * g - 0.0083 * b,
         -0.0182 * r - 0.1006 * g + 1.1187 * b)
    }

    /// HLG's OOTF for a 1,000 cd/m² display (BT.2100: gamma 1.2 on the scene luminance):
    /// scene-linear 0…1 to display light, 1.0 = ``referenceWhite``.
    @inline(__always) static func hlgDisplay(_ r: Float, _ g: Float, _ b: Float) -> (Float, Float, Float) {
        let luminance = 0.2627 * r + 0.6780 * g + 0.0593 * b
        let gain = luminance > 0 ? powf(luminance, 0.2) * (1000 / referenceWhite) : 0
        return (r * gain, g * gain, b * gain)
    }

    /// The sRGB table's index for a linear value (clipped to 0…1).
    @inline(__always) static func index(_ value: Float) -> Int {
        Int(min(max(value, 0), 1) * 65535 + 0.5)
    }

    /// The transfer tables, built once (a `static let` is initialised once, thread-safely).
    enum Tables {
        /// PQ code value (16 bits) to linear light, 1.0 = 100 cd/m² (SMPTE ST 2084's EOTF).
        static let pq: [Float] = (0..<65536).map { code in
            let m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128
            let c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32
            let power = pow(Double(code) / 65535, 1 / m2)
            let nits = 10000 * pow(max(power - c1, 0) / (c2 - c3 * power), 1 / m1)
            return Float(nits) / referenceWhite
        }
        /// HLG code value (16 bits) to scene-linear light 0…1 (BT.2100's inverse OETF).
        static let hlgScene: [Float] = (0..<65536).map { code in
            let a = 0.17883277, b = 1 - 4 * 0.17883277, c = 0.5 - 0.17883277 * log(4 * 0.17883277)
            let value = Double(code) / 65535
            return Float(value <= 0.5 ? value * value / 3 : (exp((value - c) / a) + b) / 12)
        }
        /// Linear light 0…1 in 65,536 steps to 8-bit sRGB (IEC 61966-2-1), rounded.
        static let sRGB: [UInt8] = (0..<65536).map { step in
            let linear = Double(step) / 65535
            let encoded = linear <= 0.0031308 ? 12.92 * linear : 1.055 * pow(linear, 1 / 2.4) - 0.055
            return UInt8(min(max(encoded * 255, 0), 255).rounded())
        }
    }
}
