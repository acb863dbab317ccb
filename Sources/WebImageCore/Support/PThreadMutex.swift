#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A lock with the part of `Synchronization.Mutex`'s API this package uses, over a
/// `pthread_mutex_t`: what `Mutex` means in the ThreadSanitizer build (`-DWEBIMAGE_TSAN`,
/// scripts/sanitize.sh thread), and nowhere else.
///
/// On Linux, `Synchronization.Mutex` is a futex lock inside the Synchronization library, which
/// is not built with TSan: TSan never sees it taken or released, so it orders nothing between
/// two `withLock` bodies and reports every access to the guarded state as a race. TSan
/// intercepts `pthread_mutex_lock` and `pthread_mutex_unlock`, so with this lock it sees the
/// same critical sections the futex gives, and reports only real races. Each module that uses
/// `Mutex` declares, under `#if WEBIMAGE_TSAN`, `typealias Mutex = PThreadMutex` (see
/// `TSanMutex.swift` in each): a declaration of the module itself shadows the imported
/// `Synchronization.Mutex`, so no use site changes, and a build without the flag compiles
/// exactly the code it did before.
///
/// It is compiled in every build, so that the normal suite tests it (`PThreadMutexTests`).
///
/// ```swift
/// let counter = PThreadMutex(0)
/// counter.withLock { $0 += 1 }
/// ```
@usableFromInline
package final class PThreadMutex<Value: ~Copyable>: @unchecked Sendable {
    // Why `@unchecked Sendable` is sound: `value` is read and written only inside `withLock`
    // and `withLockIfAvailable`, between a successful `pthread_mutex_lock` (or `trylock`) of
    // `mutex` and its `pthread_mutex_unlock`, so no two threads ever touch it at once and each
    // critical section happens after the previous one (the mutex's acquire/release ordering).
    // `init` and `deinit` touch it with no lock, when no other reference to the object exists.
    // The value crosses threads only through those bodies, as with `Mutex`: `init` takes it
    // `sending`, and the bodies get it `inout sending` and give their result `sending`, so
    // region-based isolation keeps non-Sendable state from escaping the lock unchecked, as it
    // does for `Mutex`. `mutex` itself is heap-allocated once and never moves (a
    // `pthread_mutex_t` must not be copied), and is destroyed only in `deinit`.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    @inlinable
    package init(_ initialValue: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
        value = initialValue
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value, as `Mutex.withLock` does.
    @inlinable
    package func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Runs `body` with exclusive access if the lock is free now, and returns `nil` otherwise,
    /// as `Mutex.withLockIfAvailable` does.
    @inlinable
    package func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

#if WEBIMAGE_TSAN
/// The ThreadSanitizer build's `Mutex` in this module (see ``PThreadMutex``).
@usableFromInline typealias Mutex<Value: ~Copyable> = PThreadMutex<Value>
#endif
