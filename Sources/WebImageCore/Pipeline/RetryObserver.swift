/// Who hears of the retries of the downloads a piece of work starts: the proxy binds one around
/// each request, so that its access log line shows the origin's retries.
///
/// A task-local, like ``WorkDeadline/budget``: the binding follows the work into the
/// pipeline's shared jobs, and a download shared by several requests reports to the one that
/// started it (a request that joined a download already under way hears of none).
///
/// ```swift
/// let image = try await RetryObserver.$current.withValue({ retry in logger.info("retrying: \(retry.reason)") }) {
///     try await manager.image(for: request)
/// }
/// ```
package enum RetryObserver {
    @TaskLocal package static var current: (@Sendable (RetryPolicy.Retry) -> Void)?
}
