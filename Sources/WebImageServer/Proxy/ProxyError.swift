import Foundation
import WebImage

/// A failed proxy request: the status and the short plain-text body the client gets. Bodies
/// name what was wrong with the request, never anything about the origin or the server
/// (no origin error text, no paths, no addresses).
///
/// ```swift
/// print(ProxyError(ImageError.httpStatus(404)).status)   // 404: the origin's 404 passes through
/// throw ProxyError.badRequest("w must be an integer from 1 to 4096")   // 400
/// ```
public struct ProxyError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var message: String
    /// What the log gets beside the status: the underlying cause, which the client never sees.
    public var detail: String?

    public init(status: Int, message: String, detail: String? = nil) {
        self.status = status
        self.message = message
        self.detail = detail
    }

    public var description: String { "\(status) \(message)" + (detail.map { " (\($0))" } ?? "") }

    public static func badRequest(_ message: String) -> ProxyError {
        ProxyError(status: 400, message: message)
    }

    public static let badSignature = ProxyError(status: 403, message: "missing or invalid signature")

    public static func forbiddenOrigin(_ detail: String) -> ProxyError {
        ProxyError(status: 403, message: "forbidden origin", detail: detail)
    }

    public static let busy = ProxyError(status: 503, message: "busy, retry shortly")

    /// The prefix of the `ImageError/invalidURL(_:)` message by which the proxy's redirect
    /// check reports a refused hop through the loader, which carries only `ImageError`s.
    static let refusalPrefix = "forbidden origin: "

    /// The status an `ImageError` from the pipeline maps to: the origin's 404 stays 404,
    /// limits are 413, formats nobody decodes 415, anything else the origin got wrong 502, and
    /// its slowness 504.
    public init(_ error: ImageError) {
        let detail = error.description
        switch error {
        case .invalidURL(let message) where message.hasPrefix(Self.refusalPrefix):
            self = .forbiddenOrigin(String(message.dropFirst(Self.refusalPrefix.count)))
        case .invalidURL:
            self = ProxyError(status: 400, message: "unusable source URL", detail: detail)
        case .httpStatus(404), .httpStatus(410):
            self = ProxyError(status: 404, message: "source not found", detail: detail)
        case .storage(let failure) where failure.code == ENOENT || failure.code == ENOTDIR:
            self = ProxyError(status: 404, message: "source not found", detail: detail)
        case .tooLarge:
            self = ProxyError(status: 413, message: "source image too large", detail: detail)
        case .unsupportedFormat:
            self = ProxyError(status: 415, message: "unsupported source format", detail: detail)
        case .timeout:
            self = ProxyError(status: 504, message: "origin timed out", detail: detail)
        case .corruptData, .invalidBitmap:
            self = ProxyError(status: 502, message: "source image could not be decoded", detail: detail)
        case .custom(let failure) where failure.origin == .decoder:
            self = ProxyError(status: 502, message: "source image could not be decoded", detail: detail)
        case .httpStatus, .network, .recentlyFailed, .cacheMiss:
            self = ProxyError(status: 502, message: "origin failed", detail: detail)
        case .storage, .custom:
            self = ProxyError(status: 500, message: "internal error", detail: detail)
        case .cancelled:
            // The client left; nobody reads this.
            self = ProxyError(status: 499, message: "cancelled", detail: detail)
        }
    }
}
