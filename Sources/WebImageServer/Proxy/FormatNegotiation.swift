import Foundation
import WebImage

/// Picks the output format of `format=auto` from the request's `Accept` header.
///
/// Only a format the header names explicitly, with a non-zero quality, counts: `*/*` and
/// `image/*` are sent by clients that cannot display WebP or AVIF (older Safari, command-line
/// tools), so they get the source's own format.
///
/// ```swift
/// let accept = ["image/avif,image/webp,*/*;q=0.8"]
/// let first = FormatNegotiation.preferred([.avif, .webp], accept: accept)   // avif
/// let refused = FormatNegotiation.acceptsWebP("image/webp;q=0")             // false
/// ```
public enum FormatNegotiation {
    /// Whether the `Accept` field values name `mimeType` with a quality above 0.
    public static func accepts(_ mimeType: String, in accept: [String]) -> Bool {
        for field in accept {
            for item in field.split(separator: ",") {
                let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                guard parts.first == mimeType else { continue }
                let quality = parts.dropFirst().compactMap { parameter -> Double? in
                    guard parameter.hasPrefix("q=") else { return nil }
                    return Double(parameter.dropFirst(2))
                }.first ?? 1
                return quality > 0
            }
        }
        return false
    }

    /// The first of `preference` whose MIME type `accept` names (see
    /// ``accepts(_:in:)``), or `nil`: the source's own format then.
    public static func preferred(_ preference: [ImageFormat], accept: [String]) -> ImageFormat? {
        preference.first { accepts($0.mimeType, in: accept) }
    }

    public static func acceptsWebP(_ accept: [String]) -> Bool {
        accepts("image/webp", in: accept)
    }

    public static func acceptsWebP(_ accept: String) -> Bool {
        acceptsWebP([accept])
    }

    /// The format to encode as when the request leaves it to the source and the client named
    /// none of the negotiated formats: the source's format when every browser shows it and an
    /// encoder writes it (APNG is written by the PNG encoder); otherwise (HEIC, AVIF, JPEG XL,
    /// SVG, TIFF, BMP, ICO) GIF for an animation, PNG where transparency needs it, else JPEG.
    static func sourceOutput(_ container: ImageContainer, registry: CoderRegistry) -> ImageFormat {
        switch container.format {
        case .apng?: return .png
        case let format? where universal.contains(format) && registry.encoder(for: format) != nil: return format
        default:
            if container.isAnimated { return .gif }
            return container.image.isOpaque ? .jpeg : .png
        }
    }

    /// What every browser and image tool displays.
    static let universal: Set<ImageFormat> = [.jpeg, .png, .gif, .webp]
}
