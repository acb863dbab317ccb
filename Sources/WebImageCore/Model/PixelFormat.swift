/// How the bytes of a ``Bitmap`` are laid out: which channels, in which order, and what the
/// alpha channel means.
///
/// Every channel is 8 bits. Decoders produce ``rgba8`` (straight, non-premultiplied alpha,
/// R first in memory) unless asked otherwise, because that is what encoders, the reference
/// fingerprints and most consumers (servers re-encoding images) want.
///
/// ```swift
/// let format = PixelFormat.rgba8
/// print(format.bytesPerPixel)   // 4
/// print(format.hasAlpha)        // true
/// ```
public struct PixelFormat: Hashable, Sendable, CustomStringConvertible {
    /// The channels of one pixel, in memory order.
    public enum Channels: String, Hashable, Sendable {
        case gray, grayAlpha, rgb, rgba
    }

    /// What the alpha channel's value means for the colour channels.
    public enum AlphaMode: String, Hashable, Sendable {
        /// No alpha channel: every pixel is opaque.
        case none
        /// Colour channels are independent of alpha (PNG, WebP and GIF store this).
        case straight
        /// Colour channels are already multiplied by alpha (what compositing wants).
        case premultiplied
    }

    public var channels: Channels
    public var alpha: AlphaMode

    package init(channels: Channels, alpha: AlphaMode) {
        self.channels = channels
        self.alpha = (channels == .rgba || channels == .grayAlpha) ? alpha : .none
    }

    /// 8-bit RGBA with straight alpha: the library's default decoded format.
    public static let rgba8 = PixelFormat(channels: .rgba, alpha: .straight)
    /// 8-bit RGBA with premultiplied alpha.
    public static let rgba8Premultiplied = PixelFormat(channels: .rgba, alpha: .premultiplied)
    /// 8-bit RGB, opaque.
    public static let rgb8 = PixelFormat(channels: .rgb, alpha: .none)
    /// 8-bit grey, opaque.
    public static let gray8 = PixelFormat(channels: .gray, alpha: .none)
    /// 8-bit grey with straight alpha.
    public static let grayAlpha8 = PixelFormat(channels: .grayAlpha, alpha: .straight)

    public var bytesPerPixel: Int {
        switch channels {
        case .gray: 1
        case .grayAlpha: 2
        case .rgb: 3
        case .rgba: 4
        }
    }

    public var hasAlpha: Bool { alpha != .none }

    public var description: String {
        alpha == .none ? "\(channels.rawValue)8" : "\(channels.rawValue)8 (\(alpha.rawValue) alpha)"
    }
}
