import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import WebImageCore

extension HTTPImageLoader {
    /// Translates whatever AsyncHTTPClient, NIO or the loader threw into an ``ImageError``, so
    /// that no transport type leaks to callers.
    static func imageError(from error: any Error, cancelled: Bool) -> ImageError {
        // Cancellation first: a cancelled request surfaces as many different errors
        // (`HTTPClientError.cancelled`, a closed channel, `CancellationError`).
        if cancelled || error is CancellationError { return .cancelled }
        if let error = error as? ImageError { return error }
        if let error = error as? HTTPClientError { return imageError(from: error) }
        if let error = error as? NIOConnectionError { return imageError(from: error) }
        if let error = error as? IOError { return imageError(errno: error.errnoCode, error) }
        if let error = error as? ChannelError {
            switch error {
            case .connectTimeout: return .timeout("connect: \(error)")
            case .eof, .alreadyClosed, .ioOnClosedChannel, .outputClosed, .inputClosed:
                return .network(.init(.connectionLost, "\(error)"))
            default: return .network(.init(.other, "\(error)"))
            }
        }
        if error is HTTPParserError { return .network(.init(.invalidResponse, "\(error)")) }
        if error is SocketAddressError { return .network(.init(.dnsFailure, "\(error)")) }
        // NIOSSL's several error types (NIOSSLError, NIOSSLExtraError, BoringSSLError, …) are
        // recognised by their module name, so that a type added in a later NIOSSL counts too.
        let typeName = String(reflecting: type(of: error))
        if typeName.hasPrefix("NIOSSL.") || typeName.contains("BoringSSL") || typeName.contains("TLS") {
            return .network(.init(.tls, "\(error)"))
        }
        if typeName.hasPrefix("NIOSOCKS.") {
            // The SOCKS proxy (`socksProxy`) would not connect: it refused the address or could
            // not reach it.
            return .network(.init(.connectionRefused, "the SOCKS proxy did not connect: \(error)"))
        }
        return .network(.init(.other, "\(error)"))
    }

    private static func imageError(from error: HTTPClientError) -> ImageError {
        switch error {
        case .cancelled, .requestStreamCancelled:
            return .cancelled
        case .deadlineExceeded, .readTimeout, .writeTimeout:
            return .timeout("\(error)")
        case .connectTimeout, .getConnectionFromPoolTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
            return .timeout("connect: \(error)")
        case .tlsHandshakeTimeout:
            return .timeout("TLS handshake: \(error)")
        case .invalidURL, .emptyHost, .emptyScheme, .missingSocketPath:
            return .invalidURL("\(error)")
        case .remoteConnectionClosed, .uncleanShutdown:
            return .network(.init(.connectionLost, "\(error)"))
        case .bodyLengthMismatch, .identityCodingIncorrectlyPresent, .contentLengthMissing:
            return .network(.init(.invalidResponse, "\(error)"))
        case .redirectLimitReached, .redirectCycleDetected:
            return .network(.init(.redirects, "\(error)"))
        default:
            return .network(.init(.other, "\(error)"))
        }
    }

    private static func imageError(from error: NIOConnectionError) -> ImageError {
        for failure in error.connectionErrors {
            if let ioError = failure.error as? IOError {
                return imageError(errno: ioError.errnoCode, ioError)
            }
            if let channelError = failure.error as? ChannelError, case .connectTimeout = channelError {
                return .timeout("connect to \(error.host):\(error.port)")
            }
        }
        if error.connectionErrors.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil {
            return .network(.init(.dnsFailure, "\(error.host) did not resolve"))
        }
        return .network(.init(.other, "\(error)"))
    }

    private static func imageError(errno: Int32, _ error: any Error) -> ImageError {
        switch errno {
        case ECONNREFUSED:
            .network(.init(.connectionRefused, "\(error)"))
        case ECONNRESET, EPIPE, ECONNABORTED, ENOTCONN:
            .network(.init(.connectionLost, "\(error)"))
        case ETIMEDOUT:
            .timeout("\(error)")
        case EHOSTUNREACH, ENETUNREACH:
            .network(.init(.other, "\(error)"))
        default:
            .network(.init(.other, "\(error)"))
        }
    }
}
