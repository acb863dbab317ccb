import Foundation
import WebImage

/// Picks the output format of `format=auto` from the request's `Accept` header.
///
/// Only an explicit `image/webp` with a non-zero quality counts: `*/*` and `image/*` are
/// sent by clients that cannot display WebP (older Safari, command-line tools), so they get
/// the source's own format.
///
/// ```swift
/// let webp = FormatNegotiation.acceptsWebP("image/avif,image/webp,*/*;q=0.8")   // true
/// let refused = FormatNegotiation.acceptsWebP("image/webp;q=0")               // false
/// ```
public enum FormatNegotiation {
    public static func acceptsWebP(_ accept: [String]) -> Bool {
        for field in accept {
            for item in field.split(separator: ",") {
                let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                guard parts.first == "image/webp" else { continue }
                let quality = parts.dropFirst().compactMap { parameter -> Double? in
                    guard parameter.hasPrefix("q=") else { return nil }
                    return Double(parameter.dropFirst(2))
                }.first ?? 1
                return quality > 0
            }
        }
        return false
    }

    public static func acceptsWebP(_ accept: String) -> Bool {
        acceptsWebP([accept])
    }

    /// The format to encode as when the request leaves it to the source: the source's format
    /// when an encoder writes it (APNG is written by the PNG encoder), else PNG, which keeps
    /// every pixel and alpha.
    static func sourceOutput(_ source: ImageFormat?, registry: CoderRegistry) -> ImageFormat {
        switch source {
        case .apng?: return .png
        case let format? where registry.encoder(for: format) != nil: return format
        default: return .png
        }
    }
}
