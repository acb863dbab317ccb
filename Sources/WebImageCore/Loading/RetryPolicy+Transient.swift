import Foundation

extension RetryPolicy {
    /// Why a failure may pass on a fresh attempt: the one classification every loader uses
    /// (``ImageError/retryReason`` for the pipeline's errors, the S3 client's for its own), and
    /// the `reason` the retries are counted by.
    package enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// Nothing listened at the address (a server restarting).
        case connectionRefused
        /// The connection was reset or closed before the response's head.
        case connectionLost
        /// The connection, the head or the first body byte did not come in time.
        case timeout
        /// One of ``RetryPolicy/transientStatuses``.
        case status(Int)
        /// S3's `SlowDown`: the service asks for fewer requests.
        case slowDown

        /// The name metrics and logs use: `connection_refused`, `connection_lost`, `timeout`,
        /// `http_503`, `slow_down`.
        package var description: String {
            switch self {
            case .connectionRefused: "connection_refused"
            case .connectionLost: "connection_lost"
            case .timeout: "timeout"
            case .status(let status): "http_\(status)"
            case .slowDown: "slow_down"
            }
        }
    }

    /// The statuses that say the same request may succeed later: `408` Request Timeout, `429` Too
    /// Many Requests, `500`, `502` Bad Gateway, `503` Service Unavailable, `504` Gateway Timeout.
    /// Not `501` or `505`, which the same server will answer again.
    package static let transientStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// The wait a `Retry-After` field asks for: delay-seconds (`120`) or an HTTP date, counted
    /// from `now` (a date already past is no wait). `nil` when it is neither (RFC 9110 §10.2.3).
    package static func retryAfter(_ value: String, now: Date = Date()) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed) {
            return seconds >= 0 ? .seconds(seconds) : nil
        }
        guard let date = httpDate(trimmed) else { return nil }
        let interval = max(0, date.timeIntervalSince(now))
        return .milliseconds(Int64((interval * 1000).rounded(.up)))
    }

    /// RFC 9110 §5.6.7's three forms: the IMF-fixdate every current server sends, RFC 850's and
    /// asctime's.
    private static func httpDate(_ text: String) -> Date? {
        // A formatter per call: Foundation's formatters are not safe to share across threads on
        // Linux, and this runs once per refused attempt at most.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}

extension ImageError {
    /// Why a fresh attempt may succeed where this one failed, or `nil` when it would fail the
    /// same way (a `404`, bytes that are not an image, a refused redirect) or was not a failure
    /// of the source (a cancelled load). A loader asks only about failures that came before any
    /// of the body reached its caller: a connection lost halfway is not retried.
    ///
    /// A host that does not resolve, an untrusted certificate and a response that broke the
    /// protocol are not transient either: they are configuration or a broken server, and the
    /// same attempt a moment later meets them again.
    package var retryReason: RetryPolicy.Reason? {
        switch self {
        case .network(let failure):
            switch failure.kind {
            case .connectionRefused: .connectionRefused
            case .connectionLost: .connectionLost
            case .dnsFailure, .tls, .redirects, .invalidResponse, .other: nil
            }
        case .timeout:
            .timeout
        case .httpStatus(let status):
            RetryPolicy.transientStatuses.contains(status) ? .status(status) : nil
        case .invalidBitmap, .unsupportedFormat, .corruptData, .tooLarge, .storage, .cancelled, .invalidURL,
             .recentlyFailed, .cacheMiss, .custom:
            nil
        }
    }
}
