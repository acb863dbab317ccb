import Foundation
import WebImageCore

/// What went wrong with an S3 request: S3's own error code (`NoSuchKey`, `AccessDenied`, …) as a
/// ``Kind``, the HTTP status, S3's message and request ID; or a transport failure, a timeout, a
/// size limit, cancellation.
///
/// ```swift
/// do {
///     _ = try await client.headObject(bucket: "photos", key: "missing.jpg")
/// } catch {
///     switch error.kind {
///     case .noSuchKey: print("not there")
///     case .accessDenied, .invalidAccessKeyID, .signatureDoesNotMatch: print("check the keys")
///     default: print(error)
///     }
/// }
/// ```
public struct S3Error: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        case noSuchKey
        case noSuchBucket
        case accessDenied
        case invalidAccessKeyID
        case signatureDoesNotMatch
        /// `SlowDown`: the server asks for fewer requests (retried with back-off, as
        /// ``S3Configuration/retryPolicy`` says).
        case slowDown
        /// The object still has the ETag given as `If-None-Match`. ``S3Client`` answers this with
        /// `nil`, not an error; it exists for callers that build on the raw status.
        case notModified
        case bucketAlreadyOwnedByYou
        case bucketAlreadyExists
        case invalidRange
        /// The body is larger than the limit the caller set.
        case tooLarge
        /// One attempt took longer than ``S3Configuration/timeout`` (each attempt has the whole of
        /// it; this is the last attempt's).
        case timeout
        /// No connection, or it broke before the response was complete.
        case connectionFailed
        /// The server's answer broke the protocol (a body shorter than announced, …).
        case invalidResponse
        case cancelled
        /// The configuration or the arguments cannot make a request (no keys, a bad endpoint).
        case invalidConfiguration
        /// Any other S3 error code, verbatim (or `HTTP <status>` when the body named none).
        case other(String)
    }

    /// How a transport failure happened, kept for the image loader's `ImageError.network`.
    enum Transport: Sendable, Equatable {
        case refused, lost, dns, tls, other
    }

    public var kind: Kind
    /// The HTTP status, when the server answered.
    public var statusCode: Int?
    /// S3's `<Message>`, or what the transport reported.
    public var message: String
    /// S3's `<Code>` verbatim, when the body had one.
    public var code: String?
    /// S3's `<RequestId>`, for the server's logs.
    public var requestID: String?
    /// How many times the request was sent before this error.
    public var attempts: Int = 1
    var transport: Transport?
    /// The wait the server's `Retry-After` asked for, when it sent one.
    var retryAfter: Duration?
    /// Some of the body had gone to the caller's progress handler when this happened: sending
    /// the request again would hand the caller those bytes twice.
    var deliveredBody = false

    public init(_ kind: Kind, statusCode: Int? = nil, message: String, code: String? = nil, requestID: String? = nil) {
        self.kind = kind
        self.statusCode = statusCode
        self.message = message
        self.code = code
        self.requestID = requestID
    }

    /// Whether sending the same request again may succeed, by the library's one rule
    /// (``RetryPolicy``): `SlowDown`, `408`, `429`, `500`, `502`, `503`, `504`, a refused or lost
    /// connection, a timeout. Never another 4xx (the same request would be refused again), an
    /// unresolved host or an untrusted certificate, nor a failure after some of the body went to
    /// the caller's progress handler.
    public var isRetryable: Bool { retryReason != nil }

    /// Why sending the same request again may succeed, or `nil`: what ``isRetryable`` says, and
    /// the reason the retry is counted by.
    var retryReason: RetryPolicy.Reason? {
        guard !deliveredBody else { return nil }
        switch kind {
        case .slowDown: return .slowDown
        case .timeout: return .timeout
        case .connectionFailed:
            switch transport {
            case .refused: return .connectionRefused
            case .lost: return .connectionLost
            // A name that did not resolve, a certificate not trusted: the same a moment later.
            case .dns, .tls, .other, nil: return nil
            }
        case .cancelled, .tooLarge, .invalidConfiguration, .notModified: return nil
        default:
            guard let statusCode, RetryPolicy.transientStatuses.contains(statusCode) else { return nil }
            return .status(statusCode)
        }
    }

    /// The kind S3 means by `code` (and, for bodiless answers such as `HEAD`'s, by `status`).
    static func kind(code: String?, status: Int, isObjectRequest: Bool) -> Kind {
        switch code {
        case "NoSuchKey": return .noSuchKey
        case "NoSuchBucket": return .noSuchBucket
        case "AccessDenied": return .accessDenied
        case "InvalidAccessKeyId": return .invalidAccessKeyID
        case "SignatureDoesNotMatch": return .signatureDoesNotMatch
        case "SlowDown": return .slowDown
        case "BucketAlreadyOwnedByYou": return .bucketAlreadyOwnedByYou
        case "BucketAlreadyExists": return .bucketAlreadyExists
        case "InvalidRange": return .invalidRange
        case let code?: return .other(code)
        case nil:
            switch status {
            case 304: return .notModified
            case 403: return .accessDenied
            case 404: return isObjectRequest ? .noSuchKey : .noSuchBucket
            case 416: return .invalidRange
            case 503: return .slowDown
            default: return .other("HTTP \(status)")
            }
        }
    }

    public var description: String {
        var text = "S3 error \(kind)"
        if let statusCode { text += " (HTTP \(statusCode))" }
        if !message.isEmpty { text += ": \(message)" }
        if let requestID { text += " [request \(requestID)]" }
        if attempts > 1 { text += " after \(attempts) attempts" }
        return text
    }
}
