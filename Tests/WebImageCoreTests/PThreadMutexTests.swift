import Foundation
import Testing
@testable import WebImageCore

/// `PThreadMutex`, the ThreadSanitizer build's `Mutex` (scripts/sanitize.sh thread): it must
/// behave as `Synchronization.Mutex` does where the package uses it.
@Suite struct PThreadMutexTests {
    @Test func excludesOtherThreadsAndKeepsEveryUpdate() {
        let counter = PThreadMutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }

    @Test func givesTheBodysResultAndRethrowsItsError() {
        struct Refused: Error {}
        let state = PThreadMutex([1, 2])
        #expect(state.withLock { $0.append(3); return $0.count } == 3)
        #expect(throws: Refused.self) {
            try state.withLock { (_: inout [Int]) throws(Refused) in throw Refused() }
        }
        // The lock was released on the throw.
        #expect(state.withLock { $0 } == [1, 2, 3])
    }

    @Test func withLockIfAvailableSkipsAHeldLock() {
        let state = PThreadMutex(0)
        let nested = state.withLock { _ in state.withLockIfAvailable { $0 } }
        #expect(nested == nil)
        #expect(state.withLockIfAvailable { $0 += 1; return $0 } == 1)
    }
}
