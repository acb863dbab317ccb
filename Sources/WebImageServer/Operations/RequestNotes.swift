import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals
import Synchronization
import WebImage

/// Fields a handler adds to its request's log line. A class, because contexts are copied
/// into handlers while the logging middleware keeps the original.
final class RequestNotes: Sendable {
    private let fields = Mutex<Logger.Metadata>([:])

    func set(_ key: String, _ value: String) {
        fields.withLock { $0[key] = .string(value) }
    }

    /// Adds one to the count kept under `key` (from 1: a field that is absent counts nothing).
    func increment(_ key: String) {
        fields.withLock { fields in
            let count = fields[key].flatMap { Int($0.description) } ?? 0
            fields[key] = .stringConvertible(count + 1)
        }
    }

    var metadata: Logger.Metadata { fields.withLock { $0 } }
}
