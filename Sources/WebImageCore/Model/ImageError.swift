import Foundation

/// The one error type the library throws, with cases a caller can act on.
///
/// ```swift
/// do {
///     try await diskCache.store(data, forKey: key)
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

    /// A failed file-system operation: what was attempted, on which path, and the `errno`.
    public struct StorageFailure: Sendable, Equatable, CustomStringConvertible {
        public var operation: String
        public var path: String
        public var code: Int32

        public init(operation: String, path: String, code: Int32) {
            self.operation = operation
            self.path = path
            self.code = code
        }

        /// Whether the failure is the disk being full (or over a file-size or quota limit).
        public var isOutOfSpace: Bool { code == ENOSPC || code == EDQUOT || code == EFBIG }

        public var description: String {
            "\(operation) \(path): \(String(cString: strerror(code)))"
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
        }
    }
}
