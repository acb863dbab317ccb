import Foundation

/// The one error type the library throws, with cases a caller can act on.
///
/// ```swift
/// do {
///     try await diskCache.store(data, forKey: ImageCacheKey(url.absoluteString))
/// } catch ImageError.storage(let failure) {
///     logger.warning("not cached: \(failure)")   // the cache itself keeps working
/// }
/// ```
public enum ImageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A bitmap's dimensions, row length or byte count do not fit together.
    case invalidBitmap(String)
    /// The bytes are not an image in any format the library knows.
    case unsupportedFormat(String)
    /// The bytes claim to be an image but cannot be decoded.
    case corruptData(String)
    /// The input exceeds a configured limit (bytes, pixels, frames).
    case tooLarge(String)
    /// A file-system operation failed: the disk is full, a directory vanished, permissions.
    case storage(StorageFailure)
    /// The work was cancelled before it finished.
    case cancelled
    /// The request's URL is missing, malformed, or has a scheme no loader handles.
    case invalidURL(String)
    /// The server answered with a status the loader does not accept (anything but 2xx, and 304
    /// when revalidating).
    case httpStatus(Int)
    /// The connection could not be made or was lost; see ``NetworkFailure/Kind``.
    case network(NetworkFailure)
    /// The whole download, or the connection, took longer than its configured limit.
    case timeout(String)
    /// The URL failed permanently a short while ago and is not retried until that failure
    /// expires; pass ``ImageOptions/retryFailed`` to try anyway.
    case recentlyFailed(String)
    /// ``ImageOptions/fromCacheOnly`` was set and no cache holds the image.
    case cacheMiss(String)
    /// A processor, loader or decoder of the application's own failed with an error of its own (an
    /// ``ImageError`` it throws is passed on as it is).
    case custom(CustomFailure)

    /// An application's processor or loader failed: which one, and its error.
    ///
    /// ```swift
    /// do {
    ///     _ = try await manager.image(for: request)
    /// } catch ImageError.custom(let failure) {
    ///     print("\(failure.origin) failed: \(failure.error)")
    /// }
    /// ```
    public struct CustomFailure: Sendable, Equatable, CustomStringConvertible {
        /// Where the error came from.
        public enum Origin: Sendable, Hashable, CustomStringConvertible {
            /// The processor with this ``ImageProcessor/identifier``.
            case processor(String)
            /// The request's or the manager's loader.
            case loader
            /// A decoder registered by the application.
            case decoder

            public var description: String {
                switch self {
                case .processor(let identifier): "processor \(identifier)"
                case .loader: "loader"
                case .decoder: "decoder"
                }
            }
        }

        public var origin: Origin
        /// The error as it was thrown.
        public var error: any Error

        public init(origin: Origin, error: any Error) {
            self.origin = origin
            self.error = error
        }

        /// Equal when the origin and the error's description are.
        public static func == (lhs: CustomFailure, rhs: CustomFailure) -> Bool {
            lhs.origin == rhs.origin && "\(lhs.error)" == "\(rhs.error)"
        }

        public var description: String { "\(origin): \(error)" }
    }

    /// A failed file-system operation: what was attempted, on which path, and the `errno`.
    public struct StorageFailure: Sendable, Equatable, CustomStringConvertible {
        public var operation: String
        public var path: String
        public var code: Int32

        package init(operation: String, path: String, code: Int32) {
            self.operation = operation
            self.path = path
            self.code = code
        }

        /// Whether the failure is the disk being full (or over a file-size or quota limit).
        public var isOutOfSpace: Bool {
            code == Platform.ErrorCode.noSpace || code == Platform.ErrorCode.quotaExceeded || code == Platform.ErrorCode.fileTooLarge
        }

        public var description: String {
            "\(operation) \(path): \(Platform.errorMessage(code))"
        }
    }

    /// A network failure: what went wrong and a message from the layer that saw it.
    public struct NetworkFailure: Sendable, Equatable, CustomStringConvertible {
        public enum Kind: String, Sendable, Equatable {
            /// Nothing listens at the address (a closed port).
            case connectionRefused
            /// The connection closed or reset before the response was complete.
            case connectionLost
            /// The host name did not resolve.
            case dnsFailure
            /// TLS could not be established (for instance an untrusted certificate).
            case tls
            /// Redirects went round in a cycle or past the configured limit.
            case redirects
            /// The response broke the protocol (a body shorter than its `Content-Length`, …).
            case invalidResponse
            /// Anything else the transport reported.
            case other
        }

        public var kind: Kind
        public var message: String

        package init(_ kind: Kind, _ message: String) {
            self.kind = kind
            self.message = message
        }

        public var description: String { "\(kind.rawValue): \(message)" }
    }

    /// Whether the same request is expected to fail again: an invalid URL, a 4xx status other
    /// than 408 and 429, bytes that are not a decodable image, a redirect cycle, or a size past
    /// a limit. Such URLs enter the manager's failed-URL list; transient failures (timeouts,
    /// refused or lost connections, DNS, 5xx, 408, 429, cancellation) never do.
    public var isPermanent: Bool {
        switch self {
        case .invalidURL, .unsupportedFormat, .corruptData, .tooLarge, .invalidBitmap:
            true
        case .httpStatus(let status):
            (400..<500).contains(status) && status != 408 && status != 429
        case .network(let failure):
            failure.kind == .redirects
        case .cancelled, .timeout, .storage, .recentlyFailed, .cacheMiss, .custom:
            false
        }
    }

    public var description: String {
        switch self {
        case .invalidBitmap(let reason): "invalid bitmap: \(reason)"
        case .unsupportedFormat(let reason): "unsupported format: \(reason)"
        case .corruptData(let reason): "corrupt image data: \(reason)"
        case .tooLarge(let reason): "too large: \(reason)"
        case .storage(let failure): "storage failure: \(failure)"
        case .cancelled: "cancelled"
        case .invalidURL(let reason): "invalid URL: \(reason)"
        case .httpStatus(let status): "HTTP status \(status)"
        case .network(let failure): "network failure: \(failure)"
        case .timeout(let reason): "timed out: \(reason)"
        case .recentlyFailed(let url): "\(url) failed recently and is not retried yet"
        case .cacheMiss(let key): "not in any cache: \(key)"
        case .custom(let failure): "\(failure)"
        }
    }
}

extension ImageError {
    /// Any error from the pipeline's work, as an ``ImageError``: one the application's own
    /// code threw (a loader's, when `origin` is given) is ``custom(_:)``.
    init(_ error: any Error, origin: CustomFailure.Origin = .loader) {
        if let error = error as? ImageError { self = error }
        else if error is CancellationError { self = .cancelled }
        else { self = .custom(CustomFailure(origin: origin, error: error)) }
    }
}
