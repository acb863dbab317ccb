import Foundation
import Synchronization
import Testing
@testable import WebImageCore

/// What a test's `@Sendable` closures add to, read afterwards.
private final class Tally<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    func reset() { items.withLock { $0 = [] } }
    var values: [Element] { items.withLock { $0 } }
}

/// The retry policy's arithmetic, its reading of `Retry-After`, its one classification of
/// failures, and its loop, with a seeded jitter: no network, no waiting on the clock.
@Suite("RetryPolicy")
struct RetryPolicyTests {
    @Test("defaults: 3 attempts, 200 ms doubling, a 2 s cap; never is one attempt")
    func defaults() {
        let policy = RetryPolicy()
        #expect(policy.maximumAttempts == 3)
        #expect(policy.baseDelay == .milliseconds(200))
        #expect(policy.maximumDelay == .seconds(2))
        #expect(RetryPolicy.never.maximumAttempts == 1)
        #expect(RetryPolicy.never.baseDelay == policy.baseDelay)
    }

    @Test("full jitter: the draw scales a range that doubles from the base up to the cap")
    func backoff() {
        let policy = RetryPolicy()
        let ranges: [(Int, Duration)] = [
            (1, .milliseconds(200)), (2, .milliseconds(400)), (3, .milliseconds(800)), (4, .milliseconds(1600)),
            (5, .seconds(2)), (40, .seconds(2)), (Int.max, .seconds(2)),
        ]
        for (attempt, range) in ranges {
            #expect(policy.delay(afterAttempt: attempt, retryAfter: nil, fraction: 1) == range, "attempt \(attempt)")
            #expect(policy.delay(afterAttempt: attempt, retryAfter: nil, fraction: 0) == .zero, "attempt \(attempt)")
        }
        #expect(policy.delay(afterAttempt: 2, retryAfter: nil, fraction: 0.5) == .milliseconds(200))
        // A draw outside 0...1 (a broken source) is clamped, never a wait past the range.
        #expect(policy.delay(afterAttempt: 1, retryAfter: nil, fraction: 7) == .milliseconds(200))
        #expect(policy.delay(afterAttempt: 1, retryAfter: nil, fraction: -1) == .zero)
    }

    @Test("a Retry-After is waited as it is, without jitter, up to the cap")
    func retryAfterIsCapped() {
        let policy = RetryPolicy()
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(1), fraction: 0) == .seconds(1))
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(1), fraction: 1) == .seconds(1))
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(120), fraction: 0) == .seconds(2))
        #expect(policy.delay(afterAttempt: 1, retryAfter: .zero, fraction: 1) == .zero)
        let patient = RetryPolicy(maximumDelay: .seconds(30))
        #expect(patient.delay(afterAttempt: 1, retryAfter: .seconds(120), fraction: 0) == .seconds(30))
    }

    @Test("Retry-After: delay-seconds or an HTTP date in any of its three forms")
    func parsesRetryAfter() throws {
        #expect(RetryPolicy.retryAfter("120") == .seconds(120))
        #expect(RetryPolicy.retryAfter(" 0 ") == .zero)
        #expect(RetryPolicy.retryAfter("-1") == nil)
        #expect(RetryPolicy.retryAfter("soon") == nil)
        #expect(RetryPolicy.retryAfter("1.5") == nil)
        // Wed, 21 Oct 2015 07:28:00 GMT is 1445412480 seconds after 1970.
        let date = Date(timeIntervalSince1970: 1_445_412_480)
        let before = date.addingTimeInterval(-90)
        #expect(RetryPolicy.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now: before) == .seconds(90))
        #expect(RetryPolicy.retryAfter("Wednesday, 21-Oct-15 07:28:00 GMT", now: before) == .seconds(90))
        #expect(RetryPolicy.retryAfter("Wed Oct 21 07:28:00 2015", now: before) == .seconds(90))
        // A date already past asks for no wait.
        #expect(RetryPolicy.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now: date.addingTimeInterval(5)) == .zero)
    }

    @Test("transient: refused and lost connections, timeouts, 408, 429, 500, 502, 503, 504; nothing else")
    func classification() {
        let transient: [(ImageError, RetryPolicy.Reason)] = [
            (.network(.init(.connectionRefused, "")), .connectionRefused),
            (.network(.init(.connectionLost, "")), .connectionLost),
            (.timeout("head"), .timeout),
            (.httpStatus(408), .status(408)), (.httpStatus(429), .status(429)), (.httpStatus(500), .status(500)),
            (.httpStatus(502), .status(502)), (.httpStatus(503), .status(503)), (.httpStatus(504), .status(504)),
        ]
        for (error, reason) in transient { #expect(error.retryReason == reason, "\(error)") }
        let final: [ImageError] = [
            .httpStatus(400), .httpStatus(401), .httpStatus(403), .httpStatus(404), .httpStatus(410), .httpStatus(501),
            .httpStatus(505), .network(.init(.dnsFailure, "")), .network(.init(.tls, "")), .network(.init(.redirects, "")),
            .network(.init(.invalidResponse, "")), .network(.init(.other, "")), .cancelled, .invalidURL("x"),
            .tooLarge("x"), .unsupportedFormat("x"), .corruptData("x"), .recentlyFailed("x"), .cacheMiss("x"),
        ]
        for error in final { #expect(error.retryReason == nil, "\(error)") }
        // Nothing transient is permanent: a URL enters the failed-URL list only for what no
        // retry would change.
        for (error, _) in transient { #expect(!error.isPermanent, "\(error)") }
        #expect(RetryPolicy.Reason.status(503).description == "http_503")
        #expect(RetryPolicy.Reason.slowDown.description == "slow_down")
        #expect(RetryPolicy.Reason.connectionRefused.description == "connection_refused")
    }

    @Test("a failure after the body started is final, whatever it was")
    func bodyStartedIsFinal() {
        let attempt = RetryPolicy.Attempt()
        #expect(attempt.retryReason(for: .network(.init(.connectionLost, ""))) == .connectionLost)
        attempt.markDeliveredBody()
        #expect(attempt.retryReason(for: .network(.init(.connectionLost, ""))) == nil)
        #expect(attempt.retryReason(for: .timeout("body")) == nil)
        attempt.noteRetryAfter("3")
        #expect(attempt.retryAfter == .seconds(3))
        attempt.noteRetryAfter("never")
        #expect(attempt.retryAfter == .seconds(3))
    }

    @Test("a seed draws the same fractions, each in 0...1")
    func seededJitter() {
        let first = SeededJitter(seed: 42), second = SeededJitter(seed: 42), other = SeededJitter(seed: 43)
        let draws = (0..<100).map { _ in first.next() }
        #expect(draws == (0..<100).map { _ in second.next() })
        #expect(draws != (0..<100).map { _ in other.next() })
        #expect(draws.allSatisfy { (0...1).contains($0) })
        #expect(Set(draws).count == 100)
    }

    @Test("the loop retries transient failures with the seeded waits, and reports each retry")
    func runRetriesTransientFailures() async throws {
        let policy = RetryPolicy(maximumAttempts: 4, baseDelay: .milliseconds(1), maximumDelay: .milliseconds(4))
        let reference = SeededJitter(seed: 9), jitter = SeededJitter(seed: 9)
        let failures: [ImageError] = [.httpStatus(503), .network(.init(.connectionLost, "reset")), .timeout("head")]
        let retries = Tally<RetryPolicy.Retry>()
        let value = try await RetryPolicy.$jitter.withValue({ jitter.next() }) {
            try await policy.run { (attempt: Int) async throws(ImageError) -> Int in
                if attempt <= failures.count { throw failures[attempt - 1] }
                return attempt
            } transient: { error in
                error.retryReason.map { (reason: $0, retryAfter: nil) }
            } cancelled: {
                .cancelled
            } onRetry: { retry in
                retries.append(retry)
            }
        }
        #expect(value == 4)
        let expected = (1...3).map { attempt in
            RetryPolicy.Retry(
                attempt: attempt, reason: failures[attempt - 1].retryReason!,
                delay: policy.delay(afterAttempt: attempt, retryAfter: nil, fraction: reference.next()))
        }
        #expect(retries.values == expected)
    }

    @Test("the loop stops at a final failure, and after maximumAttempts with the last failure")
    func runStops() async {
        let attempts = Tally<Int>()
        func run(_ policy: RetryPolicy, failing failure: @escaping @Sendable (Int) -> ImageError) async -> ImageError? {
            attempts.reset()
            do {
                _ = try await RetryPolicy.$jitter.withValue({ 0 }) {
                    try await policy.run { (attempt: Int) async throws(ImageError) -> Int in
                        attempts.append(attempt)
                        throw failure(attempt)
                    } transient: { error in
                        error.retryReason.map { (reason: $0, retryAfter: nil) }
                    } cancelled: {
                        .cancelled
                    }
                }
                return nil
            } catch {
                return error as? ImageError
            }
        }
        #expect(await run(RetryPolicy(), failing: { _ in .httpStatus(404) }) == .httpStatus(404))
        #expect(attempts.values == [1])
        #expect(await run(RetryPolicy(), failing: { .httpStatus([502, 500, 503][$0 - 1]) }) == .httpStatus(503))
        #expect(attempts.values == [1, 2, 3])
        #expect(await run(.never, failing: { _ in .httpStatus(503) }) == .httpStatus(503))
        #expect(attempts.values == [1])
        // A zero or negative count still makes the one attempt.
        #expect(await run(RetryPolicy(maximumAttempts: 0), failing: { _ in .httpStatus(503) }) == .httpStatus(503))
        #expect(attempts.values == [1])
    }

    @Test("cancelled during its wait, the loop throws at once and makes no further attempt")
    func runStopsWhenCancelledDuringTheWait() async {
        // A minute's wait that only the cancellation can end.
        let policy = RetryPolicy(baseDelay: .seconds(60), maximumDelay: .seconds(60))
        let attempts = Tally<Int>()
        let (retried, continuation) = AsyncStream<Void>.makeStream()
        let started = ContinuousClock.now
        let task = Task { () async -> ImageError? in
            do {
                _ = try await RetryPolicy.$jitter.withValue({ 1 }) {
                    try await policy.run { (attempt: Int) async throws(ImageError) -> Int in
                        attempts.append(attempt)
                        throw .httpStatus(503)
                    } transient: { error in
                        error.retryReason.map { (reason: $0, retryAfter: nil) }
                    } cancelled: {
                        .cancelled
                    } onRetry: { _ in
                        continuation.yield()
                    }
                }
                return nil
            } catch {
                return error as? ImageError
            }
        }
        for await _ in retried { break }
        task.cancel()
        #expect(await task.value == .cancelled)
        #expect(attempts.values == [1])
        // Far less than the minute it was waiting: only the cancellation can have ended it.
        #expect(ContinuousClock.now - started < .seconds(50))
    }
}
