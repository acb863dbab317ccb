/// Who hears of the retries of the downloads a piece of work starts: the proxy binds one around
/// each request, so that its access log line shows the origin's retries.
///
/// A task-local, like ``WorkDeadline/budget``: the binding follows the work into the
/// pipeline's shared jobs, and a download shared by several requests reports to the one that
/// started it (a request that joined a download already under way hears of none). The
/// task-local holds this class, not the closure: a task-local whose value is a closure crashed
/// in `swift_task_localValuePush` in release builds (Swift 6.3.1, the proxy's access-log
/// middleware, CI of 2026-11-29), where one holding a class reference, as `WorkDeadline`'s
/// does, never has.
///
/// ```swift
/// let observer = RetryObserver { retry in logger.info("retrying: \(retry.reason)") }
/// let image = try await RetryObserver.$current.withValue(observer) {
///     try await manager.image(for: request)
/// }
/// ```
package final class RetryObserver: Sendable {
    /// The observer of the work in progress.
    @TaskLocal package static var current: RetryObserver?

    /// Called with each retry, on the loader's task.
    package let hear: @Sendable (RetryPolicy.Retry) -> Void

    package init(_ hear: @escaping @Sendable (RetryPolicy.Retry) -> Void) {
        self.hear = hear
    }
}
