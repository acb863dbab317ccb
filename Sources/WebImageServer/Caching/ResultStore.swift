import Crypto
import Foundation
import Logging
import Synchronization
import WebImage
import WebImageS3

/// Rendered variants (and, when asked, originals) shared by every instance of a fleet, kept in
/// one S3 bucket under a prefix: a variant is rendered once per fleet, not once per instance.
///
/// The store is an optimisation, never a dependency: every read is bounded by ``timeout`` and
/// any failure (the store down, slow, refusing the credentials, or holding an object that does
/// not check out) is a miss, counted in the metrics, and the proxy renders as it would without
/// a store. Writes happen after the client has its answer, bounded by ten times ``timeout``, and
/// are awaited only by ``waitForWrites()`` (graceful shutdown).
///
/// Objects are named by the SHA-256 of the key, so no request text reaches an object name:
/// `PREFIX/variants/<hex>` and `PREFIX/originals/<hex>`. Each carries the proxy's strong ETag
/// (a digest of the bytes) as user metadata, and a read recomputes it: an object cut short (a
/// writer killed mid-upload on a store without atomic uploads) or altered is never served.
package final class ResultStore: Sendable {
    /// Where the objects go: a bucket and a key prefix, from `s3://bucket/prefix`.
    package struct Location: Sendable, Hashable, CustomStringConvertible {
        package var bucket: String
        /// Without a trailing `/`; empty for the bucket's root.
        package var prefix: String

        /// Parses `s3://bucket` or `s3://bucket/some/prefix`.
        package init?(_ url: URL) {
            guard url.scheme?.lowercased() == "s3", let bucket = url.host(percentEncoded: false), !bucket.isEmpty else { return nil }
            self.bucket = bucket
            prefix = url.path(percentEncoded: false).split(separator: "/").joined(separator: "/")
        }

        package var description: String { "s3://\(bucket)/\(prefix)" }

        func objectKey(_ kind: String, _ key: String) -> String {
            (prefix.isEmpty ? "" : prefix + "/") + kind + "/" + ResultStore.digest(Data(key.utf8))
        }
    }

    /// What `/healthz` says about the store.
    package enum Health: Sendable, Equatable {
        /// Nothing has been asked of the store yet.
        case unknown
        case up
        /// The last operation failed; the proxy renders instead.
        case down(String)
    }

    let client: S3Client
    let location: Location
    let timeout: Duration
    let metrics: ProxyMetrics
    let logger: Logger
    private let health = Mutex(Health.unknown)
    /// Uploads under way, so that a graceful shutdown can let them finish.
    private let writes = Mutex<[UInt64: Task<Void, Never>]>([:])
    private let nextWrite = Atomic<UInt64>(0)

    package init(client: S3Client, location: Location, timeout: Duration, metrics: ProxyMetrics, logger: Logger) {
        self.client = client
        self.location = location
        self.timeout = timeout
        self.metrics = metrics
        self.logger = logger
    }

    /// The store's state as its last operation left it.
    package var currentHealth: Health { health.withLock { $0 } }

    // MARK: Variants

    /// The variant stored under `key`, or `nil` on a miss or any failure.
    package func variant(forKey key: String) async -> EncodedImage? {
        guard let object = await read(location.objectKey("variants", key), operation: "variant") else { return nil }
        guard let contentType = object.contentType, let etag = object.metadata["etag"] else {
            record(.corrupt, operation: "variant", detail: "an object without its content type or ETag")
            return nil
        }
        let image = EncodedImage(data: object.data, contentType: contentType)
        guard image.etag == etag else {
            record(.corrupt, operation: "variant", detail: "an object whose bytes do not match its ETag")
            return nil
        }
        record(.hit, operation: "variant")
        return image
    }

    /// Uploads `image` under `key` in the background.
    package func store(_ image: EncodedImage, forKey key: String) {
        write(location.objectKey("variants", key), image.data, contentType: image.contentType, metadata: ["etag": image.etag], operation: "variant")
    }

    // MARK: Originals

    /// An original kept by ``storeOriginal(_:forURL:)``, unless it has expired.
    package func original(forURL url: String, now: Date = Date()) async -> (data: Data, metadata: DiskCache.Metadata)? {
        guard let object = await read(location.objectKey("originals", url), operation: "original") else { return nil }
        let digest = Self.digest(object.data)
        guard object.metadata["sha256"] == digest else {
            record(.corrupt, operation: "original", detail: "an object whose bytes do not match their digest")
            return nil
        }
        var metadata = DiskCache.Metadata(contentType: object.contentType)
        metadata.etag = object.metadata["origin-etag"]
        metadata.lastModified = object.metadata["origin-last-modified"]
        if let seconds = object.metadata["expires"].flatMap(Double.init) {
            let expiresAt = Date(timeIntervalSince1970: seconds)
            guard expiresAt > now else {
                record(.miss, operation: "original")
                return nil
            }
            metadata.expiresAt = expiresAt
        }
        record(.hit, operation: "original")
        return (object.data, metadata)
    }

    /// Uploads an original fetched from `url` in the background, with the origin's validators
    /// and expiry.
    package func storeOriginal(_ data: Data, forURL url: String, metadata: DiskCache.Metadata) {
        var fields = ["sha256": Self.digest(data)]
        fields["origin-etag"] = metadata.etag
        fields["origin-last-modified"] = metadata.lastModified
        fields["expires"] = metadata.expiresAt.map { String(Int($0.timeIntervalSince1970)) }
        write(location.objectKey("originals", url), data, contentType: metadata.contentType, metadata: fields, operation: "original")
    }

    // MARK: Health and shutdown

    /// Asks the store for one key under the prefix, within ``timeout``, and returns what that
    /// says: `/healthz` calls it, and never fails because of the answer.
    package func probe() async -> Health {
        let prefix = location.prefix.isEmpty ? nil : location.prefix + "/"
        do {
            _ = try await bounded { [client, location] in
                try await client.listObjectsV2(bucket: location.bucket, prefix: prefix, maxKeys: 1)
            }
            health.withLock { $0 = .up }
        } catch {
            health.withLock { $0 = .down("\(error)") }
        }
        return currentHealth
    }

    /// Returns once every upload started so far has finished.
    package func waitForWrites() async {
        while let task = writes.withLock({ $0.values.first }) {
            await task.value
        }
    }

    // MARK: Reading and writing

    enum Outcome: String {
        case hit, miss, error, corrupt, timeout, stored
    }

    private func read(_ objectKey: String, operation: String) async -> S3Object? {
        let started = ContinuousClock.now
        defer { metrics.recordStoreLatency(operation: "get", ContinuousClock.now - started) }
        do {
            let object = try await bounded { [client, location, metrics] in
                try await RetryObserver.$current.withValue(RetryObserver { metrics.recordStoreRetry(operation: "get", reason: $0.reason) }) {
                    try await client.getObject(bucket: location.bucket, key: objectKey)
                }
            }
            health.withLock { $0 = .up }
            if object == nil { record(.miss, operation: operation) }
            return object
        } catch let error as S3Error where error.kind == .noSuchKey {
            health.withLock { $0 = .up }
            record(.miss, operation: operation)
            return nil
        } catch is StoreTimeout {
            fail(.timeout, operation: operation, detail: "no answer within \(timeout)")
            return nil
        } catch {
            fail(.error, operation: operation, detail: "\(error)")
            return nil
        }
    }

    private func write(_ objectKey: String, _ data: Data, contentType: String?, metadata: [String: String], operation: String) {
        let id = nextWrite.add(1, ordering: .relaxed).newValue
        writes.withLock { table in
            table[id] = Task { [self] in
                defer { _ = writes.withLock { $0.removeValue(forKey: id) } }
                let started = ContinuousClock.now
                do {
                    // Bounded too, more loosely (an upload carries the bytes), so that a store that
                    // hangs cannot hold a graceful shutdown for the client's whole timeout.
                    _ = try await bounded(within: timeout * 10) { [client, location, metrics] in
                        try await RetryObserver.$current.withValue(RetryObserver { metrics.recordStoreRetry(operation: "put", reason: $0.reason) }) {
                            try await client.putObject(bucket: location.bucket, key: objectKey, data: data, contentType: contentType, metadata: metadata)
                        }
                    }
                    health.withLock { $0 = .up }
                    record(.stored, operation: operation)
                } catch {
                    fail(.error, operation: operation + "-put", detail: "\(error)")
                }
                metrics.recordStoreLatency(operation: "put", ContinuousClock.now - started)
            }
        }
    }

    private func record(_ outcome: Outcome, operation: String, detail: String? = nil) {
        metrics.recordStore(operation: operation, outcome: outcome.rawValue)
        if let detail { logger.warning("result store: \(operation) \(outcome.rawValue): \(detail)") }
    }

    private func fail(_ outcome: Outcome, operation: String, detail: String) {
        health.withLock { $0 = .down(detail) }
        record(outcome, operation: operation, detail: detail)
    }

    private struct StoreTimeout: Error {}

    /// Runs `operation`, giving up after `limit` (default ``timeout``): the operation is then
    /// cancelled.
    private func bounded<T: Sendable>(within limit: Duration? = nil, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let timeout = limit ?? timeout
        return try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw StoreTimeout()
            }
            defer { group.cancelAll() }
            guard let result = try await group.next() else { throw CancellationError() }
            return result
        }
    }

    /// The hex SHA-256 of `data`: object names and the originals' checks. (Error descriptions,
    /// logged and shown by `/healthz`, never hold the credentials: S3Error's promise.)
    static func digest(_ data: Data) -> String {
        Hex.encode(SHA256.hash(data: data))
    }
}
