import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization
import Tracing
import WebImageCore

/// Downloads images over HTTP and HTTPS with AsyncHTTPClient: a bounded, prioritised queue,
/// a whole-download timeout, a size limit, redirects followed (and checked) one hop at a time,
/// revalidation with `304`, cookies, progress per chunk, and retries of the failures that may
/// pass (``Configuration/retryPolicy``: a `503`, a reset connection, a timeout, before any of
/// the body arrived).
///
/// One loader owns one `HTTPClient` (a second, lazily, for requests that accept invalid
/// certificates); share the loader, and call ``shutdown()`` before dropping it.
///
/// ```swift
/// let loader = HTTPImageLoader(configuration: .init(acceptedFormats: registry.decodableFormats))
/// let context = ImageLoadContext(priority: .high) { progress in
///     print(progress.received, progress.expected ?? -1)
/// }
/// let response = try await loader.load(ImageLoadRequest(url: url), context: context)
/// try await loader.shutdown()
/// ```
public final class HTTPImageLoader: ImageLoader {
    public let configuration: Configuration
    private let client: HTTPClient
    /// Created on first use by a request with ``ImageOptions/allowInvalidSSLCertificates``:
    /// most processes never need it.
    private let insecureClient = Mutex<HTTPClient?>(nil)
    private let isShutDown = Mutex(false)
    let queue: DownloadQueue
    private let logger = Logger(label: "webimage.http")

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.queue = DownloadQueue(limit: configuration.maximumConcurrentDownloads, order: configuration.order)
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: Self.clientConfiguration(configuration, verifyCertificates: true))
    }

    deinit {
        // AsyncHTTPClient traps in debug builds when a client is released without a
        // shutdown; a loader dropped without ``shutdown()`` still shuts its clients down.
        // The task keeps them alive until then. After an explicit shutdown this does nothing.
        guard !isShutDown.withLock({ $0 }) else { return }
        let clients = [client] + (insecureClient.withLock { $0 }.map { [$0] } ?? [])
        Task { for client in clients { try? await client.shutdown() } }
    }

    /// Shuts the HTTP clients down; loads after this fail. Waits for running requests to end.
    public func shutdown() async throws {
        let alreadyShutDown = isShutDown.withLock { state in
            defer { state = true }
            return state
        }
        guard !alreadyShutDown else { return }
        try await client.shutdown()
        if let insecure = insecureClient.withLock({ $0 }) { try await insecure.shutdown() }
    }

    /// Downloads waiting for a slot now: lets tests (the manager's too) wait until a request
    /// is queued before changing its priority or cancelling it.
    package var waitingDownloadCount: Int { queue.waitingCount }

    /// The priorities of the downloads waiting for a slot, highest first: lets tests wait
    /// until a priority change has reached the queue.
    package var waitingDownloadPriorities: [ImagePriority] { queue.waitingPriorities }

    /// Downloads holding a slot now.
    package var runningDownloadCount: Int { queue.runningCount }

    public func canLoad(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        return scheme == "http" || scheme == "https"
    }

    /// Downloads `request.url`: waits for a slot in the queue at `context.priority` (following
    /// later priority changes), then requests it, following redirects, within
    /// ``Configuration/timeout``. A failure that may pass, before any of the body reached
    /// `context`, is tried again as the request's ``ImageLoadRequest/retryPolicy`` or else
    /// ``Configuration/retryPolicy`` says: the whole exchange, modifiers and redirects included,
    /// from a fresh place in the queue (a download waiting to retry holds no slot).
    ///
    /// - Returns: the body and its metadata, or for a revalidation answered `304`, an empty
    ///   body with ``ImageLoadResponse/isNotModified`` and the refreshed metadata.
    /// - Throws: an ``ImageError``, never a transport error: the last attempt's failure.
    public func load(_ request: ImageLoadRequest, context: ImageLoadContext) async throws -> ImageLoadResponse {
        guard canLoad(request.url), request.url.host?.isEmpty == false else {
            throw ImageError.invalidURL(request.url.absoluteString)
        }
        let policy = request.retryPolicy ?? configuration.retryPolicy
        // One timeout for the whole load, retries included: a retry never takes a load past it.
        let deadline = ContinuousClock.now + configuration.timeout
        do throws(AttemptFailure) {
            return try await policy.run(until: deadline) { (number: Int) async throws(AttemptFailure) -> ImageLoadResponse in
                try await self.runAttempt(request, context: context, number: number, deadline: deadline)
            } transient: { failure in
                failure.attempt.retryReason(for: failure.error).map { (reason: $0, retryAfter: failure.attempt.retryAfter) }
            } cancelled: {
                AttemptFailure(error: .cancelled, attempt: RetryPolicy.Attempt())
            } onRetry: { retry in
                self.logger.debug("retrying", metadata: [
                    "url": "\(request.url)", "attempt": "\(retry.attempt)", "reason": "\(retry.reason)", "delay": "\(retry.delay)",
                ])
                context.didRetry(retry)
            }
        } catch {
            throw error.error
        }
    }

    /// A failed attempt: its error, and what the retry decision reads beside it.
    struct AttemptFailure: Error {
        var error: ImageError
        var attempt: RetryPolicy.Attempt
    }

    /// One attempt: a slot, then the exchange within what is left of the load's `deadline`
    /// (``Configuration/timeout`` from the first attempt's start). Each attempt queues anew at
    /// the context's priority of the moment.
    private func runAttempt(
        _ request: ImageLoadRequest, context: ImageLoadContext, number: Int, deadline: ContinuousClock.Instant
    ) async throws(AttemptFailure) -> ImageLoadResponse {
        let attempt = RetryPolicy.Attempt()
        do {
            let slot = try await acquireSlot(for: context)
            defer { queue.release(slot) }
            guard !Task.isCancelled else { throw ImageError.cancelled }

            let started = ContinuousClock.now
            let remaining = deadline - started
            guard remaining > .zero else { throw ImageError.timeout("the download took longer than \(configuration.timeout)") }
            logger.debug("download started", metadata: ["url": "\(request.url)", "attempt": "\(number)"])
            // A client span per attempt, as OpenTelemetry's HTTP conventions have it: its context
            // is the `traceparent` the origin sees.
            let response = try await withSpan("GET", ofKind: .client) { span in
                span.attributes["http.request.method"] = "GET"
                span.attributes["url.full"] = request.url.absoluteString
                if number > 1 { span.attributes["http.request.resend_count"] = number - 1 }
                let response = try await withTimeout(remaining) {
                    try await self.perform(request, context: context, attempt: attempt, within: remaining)
                }
                span.attributes["http.response.status_code"] = response.statusCode
                return response
            }
            logger.debug("download finished", metadata: [
                "url": "\(request.url)", "status": "\(response.statusCode ?? 0)", "bytes": "\(response.data.count)",
                "elapsed": "\(ContinuousClock.now - started)",
            ])
            return response
        } catch {
            let mapped = Self.imageError(from: error, cancelled: Task.isCancelled)
            logger.debug("download failed", metadata: ["url": "\(request.url)", "attempt": "\(number)", "error": "\(mapped)"])
            throw AttemptFailure(error: mapped, attempt: attempt)
        }
    }

    /// A slot in the queue, waited for at the context's priority and following its changes;
    /// once granted, changes no longer reach the queue: an HTTP/1.1 request has no priority.
    private func acquireSlot(for context: ImageLoadContext) async throws -> DownloadQueue.Slot {
        defer { context.onPriorityChange(nil) }
        return try await queue.acquire(priority: { context.priority }) { slot in
            context.onPriorityChange { [queue] priority in queue.setPriority(priority, of: slot) }
        }
    }

    // MARK: The download

    /// Runs `operation`, failing with ``ImageError/timeout(_:)`` when it takes longer than
    /// `timeout`; the operation is then cancelled, which closes its connection.
    private func withTimeout<T: Sendable>(
        _ timeout: Duration, waitingFor what: String = "the download", _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw ImageError.timeout("\(what) took longer than \(timeout)")
            }
            defer { group.cancelAll() }
            guard let result = try await group.next() else { throw ImageError.cancelled }
            return result
        }
    }

    /// Sends `request` and waits for the response's head within ``Configuration/headTimeout``
    /// (or the load's `deadline`, when sooner): a stalled server fails the attempt with a
    /// timeout, which the retry policy may try again.
    private func head(of request: HTTPClientRequest, client: HTTPClient, deadline: NIODeadline) async throws -> HTTPClientResponse {
        let left = Duration.nanoseconds((deadline - NIODeadline.now()).nanoseconds)
        let limit = configuration.resolvedHeadTimeout
        guard limit < left else { return try await client.execute(request, deadline: deadline) }
        return try await withTimeout(limit, waitingFor: "the response's head") {
            try await client.execute(request, deadline: deadline)
        }
    }

    private func perform(
        _ original: ImageLoadRequest, context: ImageLoadContext, attempt: RetryPolicy.Attempt, within remaining: Duration
    ) async throws -> ImageLoadResponse {
        var request = original
        if let modifier = configuration.requestModifier { request = try await modifier(request) }
        if let modifier = request.modifier { request = try await modifier(request) }

        let deadline = NIODeadline.now() + TimeAmount(remaining)
        let handlesCookies = configuration.handlesCookies || request.options.contains(.handleCookies)
        let client = try self.client(for: request.options)
        let firstOrigin = Self.origin(of: request.url)
        var url = request.url
        var seen: Set<String> = [url.absoluteString]
        var redirects = 0

        while true {
            if let policy = configuration.redirectPolicy {
                do { try await policy(url) } catch let error as ImageError { throw error } catch {
                    throw ImageError.invalidURL("\(url) refused: \(error)")
                }
            }
            let httpRequest = makeRequest(request, url: url, sameOrigin: Self.origin(of: url) == firstOrigin, handlesCookies: handlesCookies)
            let response = try await head(of: httpRequest, client: client, deadline: deadline)
            let status = Int(response.status.code)
            if handlesCookies {
                configuration.cookieJar.store(setCookie: response.headers["Set-Cookie"], from: url)
            }

            if [301, 302, 303, 307, 308].contains(status), let location = response.headers.first(name: "Location") {
                await Self.discard(response)
                guard let next = URL(string: location, relativeTo: url)?.absoluteURL, canLoad(next) else {
                    throw ImageError.network(.init(.invalidResponse, "redirect to an unusable location \(location)"))
                }
                guard seen.insert(next.absoluteString).inserted else {
                    throw ImageError.network(.init(.redirects, "redirect cycle back to \(next)"))
                }
                redirects += 1
                guard redirects <= configuration.maximumRedirects else {
                    throw ImageError.network(.init(.redirects, "more than \(configuration.maximumRedirects) redirects"))
                }
                logger.debug("following redirect", metadata: ["from": "\(url)", "to": "\(next)"])
                url = next
                continue
            }
            return try await receive(response, status: status, request: request, finalURL: url, context: context, attempt: attempt)
        }
    }

    private func receive(
        _ response: HTTPClientResponse, status: Int, request: ImageLoadRequest, finalURL: URL, context: ImageLoadContext, attempt: RetryPolicy.Attempt
    ) async throws -> ImageLoadResponse {
        let metadata = Self.metadata(of: response.headers, url: request.url)
        if status == 304, request.validators != nil {
            await Self.discard(response)
            return ImageLoadResponse(data: Data(), url: finalURL, statusCode: status, isNotModified: true, metadata: metadata)
        }
        guard (200..<300).contains(status) else {
            attempt.noteRetryAfter(response.headers.first(name: "Retry-After"))
            await Self.discard(response)
            throw ImageError.httpStatus(status)
        }
        if configuration.validatesContentType, let type = metadata.contentType?.lowercased(),
           !type.hasPrefix("image/"), !type.hasPrefix("application/octet-stream") {
            throw ImageError.unsupportedFormat("the server sent \(type), not an image")
        }
        let limit = configuration.maximumResponseSize
        let expected = response.headers.first(name: "Content-Length").flatMap { Int($0) }
        if let expected, expected > limit {
            // Thrown before the body is read: AsyncHTTPClient then closes the connection
            // instead of draining megabytes nobody wants.
            throw ImageError.tooLarge("Content-Length \(expected) is over the limit of \(limit) bytes")
        }

        // One buffer, sized up front when the length is known, so the body is copied once.
        var data = Data()
        data.reserveCapacity(min(expected ?? 256 << 10, limit))
        var received = 0
        for try await chunk in response.body {
            // From the first chunk on, a failure is final: the caller has had these bytes.
            if received == 0 { attempt.markDeliveredBody() }
            received += chunk.readableBytes
            guard received <= limit else {
                throw ImageError.tooLarge("the body passed the limit of \(limit) bytes")
            }
            chunk.withUnsafeReadableBytes { data.append(contentsOf: $0) }
            context.didReceive(context.wantsChunks ? Data(chunk.readableBytesView) : nil, received: received, expected: expected)
        }
        if let expected, received != expected {
            throw ImageError.network(.init(.invalidResponse, "received \(received) of \(expected) announced bytes"))
        }
        return ImageLoadResponse(data: data, url: finalURL, statusCode: status, metadata: metadata)
    }

    private func makeRequest(_ request: ImageLoadRequest, url: URL, sameOrigin: Bool, handlesCookies: Bool) -> HTTPClientRequest {
        var httpRequest = HTTPClientRequest(url: url.absoluteString)
        httpRequest.method = .GET
        var headers = HTTPHeaders()
        headers.add(name: "Accept", value: configuration.accept)
        headers.add(name: "User-Agent", value: configuration.userAgent)
        for (name, value) in configuration.headers { headers.replaceOrAdd(name: name, value: value) }
        if sameOrigin, let credentials = configuration.credentials {
            headers.replaceOrAdd(name: "Authorization", value: credentials.headerValue)
        }
        for (name, value) in request.headers {
            // Credentials a request carries are for the host it names, not for wherever a
            // redirect leads.
            if !sameOrigin, ["authorization", "cookie"].contains(name.lowercased()) { continue }
            headers.replaceOrAdd(name: name, value: value)
        }
        if let validators = request.validators {
            if let etag = validators.etag { headers.replaceOrAdd(name: "If-None-Match", value: etag) }
            if let lastModified = validators.lastModified { headers.replaceOrAdd(name: "If-Modified-Since", value: lastModified) }
        }
        if handlesCookies, let cookies = configuration.cookieJar.cookieHeader(for: url) {
            let existing = headers["Cookie"]
            headers.replaceOrAdd(name: "Cookie", value: (existing + [cookies]).joined(separator: "; "))
        }
        for field in TraceContextFields.current() { headers.replaceOrAdd(name: field.name, value: field.value) }
        httpRequest.headers = headers
        return httpRequest
    }

    /// Reads and drops a small body (a redirect's, an error page) so the connection goes back
    /// to the pool; a large one is abandoned, which closes the connection instead.
    private static func discard(_ response: HTTPClientResponse) async {
        _ = try? await response.body.collect(upTo: 64 << 10)
    }

    private static func metadata(of headers: HTTPHeaders, url: URL) -> DiskCache.Metadata {
        var expiresAt: Date?
        if let cacheControl = headers.first(name: "Cache-Control") {
            expiresAt = DiskCache.Metadata.expiration(cacheControl: cacheControl)
        }
        if expiresAt == nil, let expires = headers.first(name: "Expires") {
            // An unparsable Expires ("0", "-1") means "already expired" (RFC 9111 §5.3).
            expiresAt = HTTPDate.parse(expires) ?? Date()
        }
        return DiskCache.Metadata(
            contentType: headers.first(name: "Content-Type"), url: url.absoluteString,
            etag: headers.first(name: "ETag"), lastModified: headers.first(name: "Last-Modified"),
            expiresAt: expiresAt)
    }

    private static func origin(of url: URL) -> String {
        "\(url.scheme?.lowercased() ?? "")://\(url.host?.lowercased() ?? ""):\(url.port ?? -1)"
    }

    // MARK: Clients

    private func client(for options: ImageOptions) throws -> HTTPClient {
        guard options.contains(.allowInvalidSSLCertificates) else { return client }
        return try insecureClient.withLock { insecure in
            if let insecure { return insecure }
            guard !isShutDown.withLock({ $0 }) else { throw ImageError.cancelled }
            let created = HTTPClient(eventLoopGroupProvider: .singleton, configuration: Self.clientConfiguration(configuration, verifyCertificates: false))
            insecure = created
            return created
        }
    }

    private static func clientConfiguration(_ configuration: Configuration, verifyCertificates: Bool) -> HTTPClient.Configuration {
        var client = verifyCertificates ? HTTPClient.Configuration() : HTTPClient.Configuration(certificateVerification: .none)
        // Redirects are followed by the loader, hop by hop, so every hop is checked.
        client.redirectConfiguration = .disallow
        // Images are already compressed; decompressing would also defeat the size limit.
        client.decompression = .disabled
        client.timeout = .init(connect: TimeAmount(configuration.connectTimeout))
        client.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(8, configuration.maximumConcurrentDownloads)
        // Without this, AsyncHTTPClient retries a refused or unresolvable connection with
        // back-off until the request's deadline, and a closed port looks like a 15-second
        // timeout instead of failing at once with the real cause.
        client.connectionPool.retryConnectionEstablishment = false
        // The loader makes the client span of each attempt and sends its trace itself, whether
        // the tracer was bootstrapped before this client or after: AsyncHTTPClient's own span
        // (made only with a tracer bootstrapped first) would be a second one.
        client.tracing.tracer = nil
        if let socks = configuration.socksProxy {
            client.proxy = .socksServer(host: socks.host, port: socks.port)
        }
        if verifyCertificates, !configuration.additionalTrustRoots.isEmpty {
            // The default client configuration (system roots, full verification), plus roots.
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.additionalTrustRoots = configuration.additionalTrustRoots.map { .file($0.path) }
            client.tlsConfiguration = tls
        }
        return client
    }
}
