import Foundation
import Synchronization

/// The status the program exits with once GLib's loop returns.
let exitStatus = Mutex<Int32>(0)

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Runs `work` on the cooperative pool and waits for it on this thread: the items are found
/// before GTK starts, and the main thread has nothing else to do meanwhile.
func waitFor<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await work()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}

/// Standard input, a line at a time. Reading blocks: a thread of its own, never the main one
/// GLib runs on.
func standardInputLines() -> AsyncStream<String> {
    AsyncStream { continuation in
        Thread.detachNewThread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
    }
}
