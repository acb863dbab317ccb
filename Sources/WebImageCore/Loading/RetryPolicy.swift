import Foundation

/// How a loader tries a download again after a failure that may pass: how many attempts in all,
/// and how long it waits between them.
///
/// A retry follows only a transient failure that happened before any of the body reached the
/// caller: a refused, reset or lost connection, a timeout, or the status `408`, `429`, `500`,
/// `502`, `503` or `504` (and S3's `SlowDown`). Never another `4xx`, a cancelled load, or a
/// failure after part of the body arrived (the library does not resume with a `Range` request).
/// The wait before retry *n* is random between zero and `baseDelay × 2ⁿ⁻¹`, never more than
/// ``maximumDelay`` ("full jitter": clients that failed together do not come back together);
/// a `Retry-After` the server sent (seconds or an HTTP date) is waited instead, up to
/// ``maximumDelay`` too. `HTTPImageLoader`'s timeout bounds the whole load, retries included:
/// no retry starts that could not begin before it. (The S3 client gives each attempt its whole
/// timeout.)
///
/// ``HTTPImageLoader/Configuration/retryPolicy`` is the loader's; ``ImageRequest/retryPolicy``
/// overrides it for one request. A download that several requests share is retried once for
/// all of them, with the policy of the request that started it.
///
/// ```swift
/// var http = HTTPImageLoader.Configuration()
/// http.retryPolicy = RetryPolicy(maximumAttempts: 5, maximumDelay: .seconds(4))
/// var request = ImageRequest(url: url)
/// request.retryPolicy = .never   // this image: one attempt
/// ```
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included: 1 never retries. Default: 3.
    public var maximumAttempts: Int
    /// The longest wait before the first retry; the range doubles for each later one. Default:
    /// 200 ms.
    public var baseDelay: Duration
    /// The longest wait before one retry, a server's `Retry-After` included. Default: 2 seconds.
    public var maximumDelay: Duration

    public init(maximumAttempts: Int = 3, baseDelay: Duration = .milliseconds(200), maximumDelay: Duration = .seconds(2)) {
        self.maximumAttempts = maximumAttempts
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
    }

    /// One attempt: no failure is retried. (Not `none`, which on an optional policy such as
    /// ``ImageRequest/retryPolicy`` would read as `nil`, the loader's own policy.)
    public static let never = RetryPolicy(maximumAttempts: 1)

    /// The wait after attempt `attempt` (from 1) failed: `retryAfter` (what the server asked
    /// for) when given, else `fraction` (from 0 to 1, the jitter's draw) of the backoff's
    /// range; either at most ``maximumDelay``.
    package func delay(afterAttempt attempt: Int, retryAfter: Duration?, fraction: Double) -> Duration {
        let cap = max(maximumDelay, .zero)
        if let retryAfter { return min(max(retryAfter, .zero), cap) }
        // Past 2³⁰ × the base every range is the cap anyway; the bound keeps the product finite.
        let range = min(cap, max(baseDelay, .zero) * (1 << min(max(attempt - 1, 0), 30)))
        return range * min(max(fraction, 0), 1)
    }
}
