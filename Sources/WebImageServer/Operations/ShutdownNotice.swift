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

/// Logs the start of a graceful shutdown, from when no connection is accepted and the
/// requests in flight finish, and starts the grace period's clock.
struct ShutdownNotice: Service {
    let logger: Logger
    let clock: ShutdownClock

    func run() async throws {
        try? await gracefulShutdown()
        clock.start()
        logger.info("shutting down: finishing the requests in flight")
    }
}
