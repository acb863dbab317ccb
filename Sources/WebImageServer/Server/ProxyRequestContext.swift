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

/// The request context of the proxy's routes: Hummingbird's basic context plus a place where
/// a handler leaves what the access log should say about the request.
///
/// ```swift
/// import Hummingbird
///
/// let router = Router(context: ProxyRequestContext.self)   // as ProxyServer.router() does
/// ```
public struct ProxyRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    let notes = RequestNotes()
    /// The connection's peer address (`nil` for a Unix socket, or a context made in a test).
    let peerAddress: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = source.channel.remoteAddress?.ipAddress
    }
}
