import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Tracing
import WebImageCore

extension S3Client {
    /// One S3 call, before signing.
    struct Request: Sendable {
        var method: HTTPMethod
        var bucket: String
        /// `nil` for a bucket's own calls (list, create).
        var key: String?
        var query: [(String, String)] = []
        var headers: [(String, String)] = []
        var body: Data?
        var maximumSize: Int?
        /// Whether `304` is an answer rather than an error (a `GetObject` with `If-None-Match`).
        var acceptsNotModified = false
        var wantsChunks = false
        var onBody: (@Sendable (Data?, Int, Int?) -> Void)?
        /// In place of ``S3Configuration/retryPolicy`` (an image load's own policy).
        var retryPolicy: RetryPolicy?
        /// Told of each retry before its wait (the image loader reports them to its context).
        var onRetry: (@Sendable (RetryPolicy.Retry) -> Void)?
    }

    /// A successful answer (or `304` when accepted), its body read whole.
    struct Response: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
    }

    /// Sends `request`, retrying what may succeed on a second try as the request's or the
    /// configuration's ``RetryPolicy`` says: the library's one policy, exponential back-off with
    /// full jitter (a random wait up to a doubling range, so that many clients failing together
    /// do not come back together) and the server's `Retry-After` up to the cap.
    /// A request without its own `onRetry` reports to the ``RetryObserver`` bound where it was
    /// sent (the proxy's result store counts its retries that way).
    func send(_ request: Request) async throws(S3Error) -> Response {
        let policy = request.retryPolicy ?? configuration.retryPolicy
        let onRetry = request.onRetry ?? RetryObserver.current.map { observer in { observer.hear($0) } }
        return try await policy.run { (number: Int) async throws(S3Error) -> Response in
            try await self.attempt(request, number: number)
        } transient: { failure in
            failure.retryReason.map { (reason: $0, retryAfter: failure.retryAfter) }
        } cancelled: {
            S3Error(.cancelled, message: "cancelled while waiting to retry")
        } onRetry: { retry in
            self.logger.debug("S3 request retried", metadata: [
                "method": "\(request.method)", "bucket": "\(request.bucket)", "key": "\(request.key ?? "")",
                "attempt": "\(retry.attempt)", "reason": "\(retry.reason)", "delay": "\(retry.delay)",
            ])
            onRetry?(retry)
        }
    }

    /// Attempt `number` of `request`, its failure an ``S3Error`` that counts the attempts and
    /// knows whether the body had started.
    private func attempt(_ request: Request, number: Int) async throws(S3Error) -> Response {
        let record = RetryPolicy.Attempt()
        do {
            // A client span per attempt; its context is the `traceparent` S3 sees.
            return try await withSpan("S3 \(request.method.rawValue)", ofKind: .client) { span in
                span.attributes["http.request.method"] = request.method.rawValue
                span.attributes["aws.s3.bucket"] = request.bucket
                if let key = request.key { span.attributes["aws.s3.key"] = key }
                if number > 1 { span.attributes["http.request.resend_count"] = number - 1 }
                let response = try await attemptWithTimeout(request, record: record)
                span.attributes["http.response.status_code"] = response.status
                return response
            }
        } catch {
            var failure = Self.s3Error(from: error, cancelled: Task.isCancelled, isObjectRequest: request.key != nil)
            failure.attempts = number
            failure.deliveredBody = record.deliveredBody
            logger.debug("S3 request failed", metadata: [
                "method": "\(request.method)", "bucket": "\(request.bucket)", "key": "\(request.key ?? "")",
                "attempt": "\(number)", "error": "\(failure)",
            ])
            throw failure
        }
    }

    /// One attempt, failing with ``S3Error/Kind/timeout`` past ``S3Configuration/timeout``: the
    /// attempt is then cancelled, which closes its connection.
    private func attemptWithTimeout(_ request: Request, record: RetryPolicy.Attempt) async throws -> Response {
        let timeout = configuration.timeout
        return try await withThrowingTaskGroup(of: Response.self) { group in
            group.addTask { try await self.exchange(request, record: record) }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw S3Error(.timeout, message: "the request took longer than \(timeout)")
            }
            defer { group.cancelAll() }
            guard let response = try await group.next() else { throw S3Error(.cancelled, message: "cancelled") }
            return response
        }
    }

    /// The request and its answer, once. `record` learns when the body starts to reach
    /// `onBody`.
    private func exchange(_ request: Request, record: RetryPolicy.Attempt) async throws -> Response {
        let address = address(bucket: request.bucket, key: request.key)
        let payloadHash = request.body.map { SigV4Signer.payloadHash($0) } ?? SigV4Signer.emptyPayloadHash
        // Signed just before it is sent (each retry anew), so the date is fresh.
        let signed = signer.sign(
            method: request.method.rawValue, path: address.path, query: request.query,
            headers: [("host", address.host)] + request.headers, payloadHash: payloadHash, date: Date())
        let query = SigV4Signer.canonicalQuery(request.query)
        var httpRequest = HTTPClientRequest(url: address.origin + address.path + (query.isEmpty ? "" : "?" + query))
        httpRequest.method = request.method
        for (name, value) in signed { httpRequest.headers.add(name: name, value: value) }
        // Not signed: a signature over them would not survive a proxy that rewrites the trace.
        for field in TraceContextFields.current() { httpRequest.headers.add(name: field.name, value: field.value) }
        if let body = request.body {
            httpRequest.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await http.execute(httpRequest, deadline: .now() + TimeAmount(configuration.timeout))
        let status = Int(response.status.code)
        let succeeded = (200..<300).contains(status) || (status == 304 && request.acceptsNotModified)
        guard succeeded else {
            // S3's error documents are small; a larger body is not one of them.
            let body = (try? await response.body.collect(upTo: 64 << 10)).map { Data($0.readableBytesView) } ?? Data()
            var error = S3Error.from(status: status, body: body, requestID: response.headers.first(name: "x-amz-request-id"), isObjectRequest: request.key != nil)
            error.retryAfter = response.headers.first(name: "Retry-After").flatMap { RetryPolicy.retryAfter($0) }
            throw error
        }
        if request.method == .HEAD || status == 304 {
            return Response(status: status, headers: response.headers, body: Data())
        }
        let expected = response.headers.first(name: "Content-Length").flatMap { Int($0) }
        if let limit = request.maximumSize, let expected, expected > limit {
            // Thrown before the body is read: the connection is closed instead of drained.
            throw S3Error(.tooLarge, statusCode: status, message: "Content-Length \(expected) is over the limit of \(limit) bytes")
        }
        var data = Data()
        data.reserveCapacity(min(expected ?? 64 << 10, request.maximumSize ?? Int.max))
        var received = 0
        for try await chunk in response.body {
            received += chunk.readableBytes
            if let limit = request.maximumSize, received > limit {
                throw S3Error(.tooLarge, statusCode: status, message: "the body passed the limit of \(limit) bytes")
            }
            chunk.withUnsafeReadableBytes { data.append(contentsOf: $0) }
            if let onBody = request.onBody {
                // The caller has these bytes now: a failure from here on is not retried. (A body
                // no handler saw is only a buffer, and a retry may start it again.)
                if received == chunk.readableBytes { record.markDeliveredBody() }
                onBody(request.wantsChunks ? Data(chunk.readableBytesView) : nil, received, expected)
            }
        }
        if let expected, received != expected {
            throw S3Error(.invalidResponse, statusCode: status, message: "received \(received) of \(expected) announced bytes")
        }
        return Response(status: status, headers: response.headers, body: data)
    }

    // MARK: Errors

    /// Whatever AsyncHTTPClient or NIO threw, as an ``S3Error``: no transport type leaks.
    static func s3Error(from error: any Error, cancelled: Bool, isObjectRequest: Bool) -> S3Error {
        if cancelled || error is CancellationError { return S3Error(.cancelled, message: "cancelled") }
        if let error = error as? S3Error { return error }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled, .requestStreamCancelled:
                return S3Error(.cancelled, message: "\(error)")
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout, .getConnectionFromPoolTimeout, .tlsHandshakeTimeout:
                return S3Error(.timeout, message: "\(error)")
            case .bodyLengthMismatch, .identityCodingIncorrectlyPresent, .contentLengthMissing:
                return S3Error(.invalidResponse, message: "\(error)")
            case .invalidURL, .emptyHost, .emptyScheme:
                return S3Error(.invalidConfiguration, message: "\(error)")
            default:
                return transportError(.lost, "\(error)")
            }
        }
        if let error = error as? NIOConnectionError {
            for failure in error.connectionErrors {
                if let io = failure.error as? IOError { return transportError(errno: io.errnoCode, "\(error)") }
                if let channel = failure.error as? ChannelError, case .connectTimeout = channel {
                    return S3Error(.timeout, message: "connect to \(error.host):\(error.port)")
                }
            }
            if error.connectionErrors.isEmpty { return transportError(.dns, "\(error.host) did not resolve") }
            return transportError(.other, "\(error)")
        }
        if let error = error as? IOError { return transportError(errno: error.errnoCode, "\(error)") }
        if let error = error as? ChannelError {
            if case .connectTimeout = error { return S3Error(.timeout, message: "\(error)") }
            return transportError(.lost, "\(error)")
        }
        if error is HTTPParserError { return S3Error(.invalidResponse, message: "\(error)") }
        if error is SocketAddressError { return transportError(.dns, "\(error)") }
        let typeName = String(reflecting: type(of: error))
        if typeName.hasPrefix("NIOSSL.") || typeName.contains("BoringSSL") || typeName.contains("TLS") {
            return transportError(.tls, "\(error)")
        }
        return transportError(.other, "\(error)")
    }

    private static func transportError(errno: Int32, _ message: String) -> S3Error {
        switch errno {
        case ECONNREFUSED: transportError(.refused, message)
        case ETIMEDOUT: S3Error(.timeout, message: message)
        case ECONNRESET, EPIPE, ECONNABORTED, ENOTCONN: transportError(.lost, message)
        default: transportError(.other, message)
        }
    }

    private static func transportError(_ transport: S3Error.Transport, _ message: String) -> S3Error {
        var error = S3Error(.connectionFailed, message: message)
        error.transport = transport
        return error
    }
}
