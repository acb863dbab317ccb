import Foundation
import HTTPTypes

/// What a dialect's URL adds to the headers of its image: thumbor's `max_age()`, imgproxy's
/// `expires` and `Content-Disposition`. The router and `CachedVariantHandler` apply the same
/// value, so that an answer from memory carries the router's headers, and an expired imgproxy
/// URL is refused however its variant is held.
struct DialectHeaders: Sendable {
    /// thumbor's `max_age()`: the `Cache-Control` lifetime of the URL's answers.
    var maxAge: Int?
    /// imgproxy's `expires`, in seconds since 1970: from then on the URL is a `404`
    /// (`ImgproxyURL` refuses it), and until then its answers are kept no longer than what remains.
    var expires: Int?
    /// imgproxy's `Content-Disposition`.
    var disposition: ImgproxyDisposition?

    /// Whether the URL has expired at `now`: the router then answers it (`404`).
    func hasExpired(at now: Date) -> Bool {
        guard let expires else { return false }
        return expires <= Int(now.timeIntervalSince1970)
    }

    /// Sets them in `head`, the answer of an image (`200` or `304`) at `now`: `Cache-Control`
    /// when the URL gives its own lifetime and the image is complete (no longer than `ceiling`,
    /// the proxy's `max-age`, for an expiring URL), `Content-Disposition` with the extension of
    /// the head's `Content-Type`.
    func apply(to head: inout HTTPResponse, isComplete: Bool, now: Date, ceiling: Int) {
        let lifetime = expires.map { max(0, min($0 - Int(now.timeIntervalSince1970), ceiling)) } ?? maxAge
        if let lifetime, isComplete { head.headerFields[.cacheControl] = "public, max-age=\(lifetime)" }
        if let disposition, head.status == .ok || head.status == .notModified {
            head.headerFields[.contentDisposition] = disposition.value(contentType: head.headerFields[.contentType])
        }
    }
}
