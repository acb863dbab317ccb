import Foundation
import Testing
@_spi(Testing) import WebImageServer
import WebImage
import WebImageS3
import WebImageTestSupport

/// The proxy over real S3 servers on loopback (SeaweedFS and rclone, both checking signatures):
/// `s3://` sources, and the result store that instances share. Each test makes a bucket of its
/// own on the process-wide server; without the servers the tests are skipped (failed under CI=true).
@Suite("the proxy over S3")
struct ProxyS3Tests {
    /// A client of `server` and a fresh bucket on it.
    struct Bucket {
        let server: S3TestServer
        let client: S3Client
        let name: String

        static func make(_ kind: S3TestServer.Kind) async throws -> Bucket {
            let server = try await S3TestServer.shared(kind)
            let client = S3Client(configuration: Self.configuration(server))
            let name = "p-" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
            try await client.createBucket(name)
            return Bucket(server: server, client: client, name: name)
        }

        static func configuration(_ server: S3TestServer, secret: String? = nil) -> S3Configuration {
            S3Configuration(
                endpoint: server.endpoint, region: server.region,
                credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: secret ?? server.secretAccessKey))
        }

        var configuration: S3Configuration { Self.configuration(server) }

        /// The objects the result store wrote under `prefix`.
        func variantKeys(prefix: String) async throws -> [String] {
            try await client.listObjectsV2(bucket: name, prefix: prefix + "/variants/").objects.map(\.key)
        }

        func shutdown() async {
            try? await client.shutdown()
        }
    }

    /// A proxy whose result store is `bucket`/`prefix`, in front of `origin`.
    func instance(_ bucket: Bucket, prefix: String = "fleet", origin: TestOrigin, configure: (inout ImageProxy.Configuration) -> Void = { _ in }) async throws -> ProxyHarness {
        try await ProxyHarness.start(origin: origin) { configuration in
            configuration.s3 = bucket.configuration
            configuration.resultStore = URL(string: "s3://\(bucket.name)/\(prefix)")
            // The default bound (2 s) is for production; here a store read that outlasts it on a
            // loaded machine (it did under ASan in CI) would count as a timeout, not the miss or
            // hit the tests look for. Tests of the bound itself set their own.
            configuration.resultStoreTimeout = .seconds(20 * Deadlines.stretch)
            configure(&configuration)
        }
    }

    /// A counter of `/metrics` whose line names every one of `labels` (0 when absent).
    static func counter(_ metrics: String, _ name: String, _ labels: [String] = []) -> Int {
        let line = metrics.split(separator: "\n").first { line in
            line.hasPrefix(name) && !line.hasPrefix("#") && labels.allSatisfy { line.contains($0) }
        }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? 0
    }

    /// An S3 service on a loopback `port` where no S3 server runs.
    static func unreachableStore(port: Int) -> S3Configuration {
        S3Configuration(
            endpoint: URL(string: "http://127.0.0.1:\(port)")!, region: "us-east-1",
            credentials: S3Credentials(accessKeyID: "key", secretAccessKey: "secret"))
    }

    // MARK: s3:// sources

    @Test("s3:// sources: served, missing, refused and malformed", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"), arguments: S3TestServer.Kind.allCases)
    func s3Sources(_ kind: S3TestServer.Kind) async throws {
        let bucket = try await Bucket.make(kind)
        defer { Task { await bucket.shutdown() } }
        try await bucket.client.putObject(bucket: bucket.name, key: "photos/elephants one.jpg", data: Fixture.elephants, contentType: "image/jpeg")
        let proxy = try await ProxyHarness.start { configuration in
            configuration.s3 = bucket.configuration
            configuration.allowedBuckets = [bucket.name]
        }
        defer { Task { await proxy.stop() } }

        let served = try await proxy.request(ProxyHarness.imagePath(url: "s3://\(bucket.name)/photos/elephants one.jpg", "w=100&format=png"))
        #expect(served.status == 200)
        #expect(served.header("X-Cache") == "miss")
        let image = try served.decoded()
        #expect(image.image.width == 100 && image.image.height == 56)

        let missing = try await proxy.request(ProxyHarness.imagePath(url: "s3://\(bucket.name)/photos/absent.jpg", "w=100"))
        #expect(missing.status == 404)
        let otherBucket = try await proxy.request(ProxyHarness.imagePath(url: "s3://another-bucket/photos/elephants one.jpg", "w=100"))
        #expect(otherBucket.status == 403)
        for malformed in ["s3://\(bucket.name)/photos/../secret.jpg", "s3://\(bucket.name)/", "s3://UPPER/a.jpg", "s3://\(bucket.name)"] {
            let reply = try await proxy.request(ProxyHarness.imagePath(url: malformed, "w=100"))
            #expect(reply.status == 400, "\(malformed)")
        }
        // Nothing of the above reached a loopback HTTP origin: s3:// never passes the SSRF guard.
        #expect(proxy.origin.allRequests.isEmpty)
    }

    @Test("s3:// sources are refused unless a bucket is allowed, even with an S3 service configured", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"))
    func s3SourcesNeedABucket() async throws {
        let bucket = try await Bucket.make(.rclone)
        defer { Task { await bucket.shutdown() } }
        try await bucket.client.putObject(bucket: bucket.name, key: "a.jpg", data: Fixture.elephants)
        let proxy = try await instance(bucket, origin: try await TestOrigin.start())
        defer { Task { await proxy.stop() } }
        let reply = try await proxy.request(ProxyHarness.imagePath(url: "s3://\(bucket.name)/a.jpg", "w=50"))
        #expect(reply.status == 400)
        #expect(reply.text.contains("--allow-bucket"))
    }

    @Test("wrong credentials for an s3:// source are a 502", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"), arguments: S3TestServer.Kind.allCases)
    func wrongCredentials(_ kind: S3TestServer.Kind) async throws {
        let bucket = try await Bucket.make(kind)
        defer { Task { await bucket.shutdown() } }
        try await bucket.client.putObject(bucket: bucket.name, key: "a.jpg", data: Fixture.elephants)
        let proxy = try await ProxyHarness.start { configuration in
            configuration.s3 = Bucket.configuration(bucket.server, secret: "not-the-secret")
            configuration.allowedBuckets = ["*"]
        }
        defer { Task { await proxy.stop() } }
        let reply = try await proxy.request(ProxyHarness.imagePath(url: "s3://\(bucket.name)/a.jpg", "w=50"))
        #expect(reply.status == 502)
    }

    // MARK: The result store

    @Test("a variant rendered by one instance is answered by another from the store, with no origin request and no decode", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"))
    func resultStoreSharesVariants() async throws {
        let bucket = try await Bucket.make(.seaweedFS)
        defer { Task { await bucket.shutdown() } }
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        origin.register("/elephants.jpg", data: try Fixture.elephants)

        let first = try await instance(bucket, origin: origin)
        let made = try await first.get("/elephants.jpg", "w=300", headers: [("Accept", "image/webp")])
        #expect(made.status == 200)
        #expect(made.header("X-Cache") == "miss")
        await first.proxy.resultStore?.waitForWrites()
        #expect(try await bucket.variantKeys(prefix: "fleet").count == 1)
        // The first look was a plain miss (S3's NoSuchKey), not an error, and the store is up.
        let firstMetrics = try await first.request("/metrics").text
        #expect(Self.counter(firstMetrics, "webimage_proxy_store_operations_total", [#"operation="variant""#, #"outcome="miss""#]) == 1)
        #expect(Self.counter(firstMetrics, "webimage_proxy_store_operations_total", [#"outcome="error""#]) == 0)
        #expect(first.proxy.resultStore?.currentHealth == .up)
        await first.stop(keepOrigin: true)

        // Several requests at once on a fresh instance: one store read, no origin, no decode.
        let second = try await instance(bucket, origin: origin)
        defer { Task { await second.stop(keepOrigin: true) } }
        let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
            for _ in 0..<6 { group.addTask { try await second.get("/elephants.jpg", "w=300", headers: [("Accept", "image/webp")]) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        // Requests that overlap the store read share it; later ones find the variant in memory.
        // Either way the store is read once.
        for reply in replies {
            #expect(reply.status == 200)
            #expect(reply.header("X-Cache") == "store" || reply.header("X-Cache") == "memory")
            #expect(reply.body == made.body)
            #expect(reply.header("ETag") == made.header("ETag"))
        }
        let fromStore = replies.filter { $0.header("X-Cache") == "store" }.count
        #expect(fromStore >= 1)
        #expect(origin.allRequests.count == 1)
        #expect(second.decodeCount == 0)
        let metrics = try await second.request("/metrics").text
        #expect(Self.counter(metrics, "webimage_proxy_store_operations_total", [#"operation="variant""#, #"outcome="hit""#]) == 1)
        #expect(Self.counter(metrics, "webimage_proxy_variants_total", [#"source="store""#]) == fromStore)
        #expect(Self.counter(metrics, "webimage_requests_total") == 0)

        // Then it is the instance's own: memory, with no second store read.
        let again = try await second.get("/elephants.jpg", "w=300", headers: [("Accept", "image/webp")])
        #expect(again.header("X-Cache") == "memory")
    }

    @Test("a stored variant whose bytes do not match its ETag is never served: the instance renders", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"))
    func corruptStoredVariant() async throws {
        let bucket = try await Bucket.make(.seaweedFS)
        defer { Task { await bucket.shutdown() } }
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        origin.register("/elephants.jpg", data: try Fixture.elephants)

        let first = try await instance(bucket, origin: origin)
        let made = try await first.get("/elephants.jpg", "w=200&format=jpeg")
        await first.proxy.resultStore?.waitForWrites()
        await first.stop(keepOrigin: true)

        // What a writer killed mid-upload would leave on a store without atomic uploads: the
        // first half of the bytes under the whole variant's name and metadata.
        let key = try #require(try await bucket.variantKeys(prefix: "fleet").first)
        let stored = try #require(try await bucket.client.getObject(bucket: bucket.name, key: key))
        try await bucket.client.putObject(
            bucket: bucket.name, key: key, data: stored.data.prefix(stored.data.count / 2),
            contentType: stored.contentType, metadata: stored.metadata)

        let second = try await instance(bucket, origin: origin)
        defer { Task { await second.stop(keepOrigin: true) } }
        let reply = try await second.get("/elephants.jpg", "w=200&format=jpeg")
        #expect(reply.status == 200)
        #expect(reply.header("X-Cache") == "miss")
        #expect(reply.body == made.body)
        #expect(second.decodeCount == 1)
        let metrics = try await second.request("/metrics").text
        #expect(Self.counter(metrics, "webimage_proxy_store_operations_total", [#"operation="variant""#, #"outcome="corrupt""#]) == 1)
    }

    @Test("a store that refuses connections degrades to rendering; /healthz says so and still answers 200; its retries are counted")
    func storeDown() async throws {
        let origin = try await TestOrigin.start()
        origin.register("/elephants.jpg", data: try Fixture.elephants)
        let port = try await TestOrigin.closedPort()
        let proxy = try await ProxyHarness.start(origin: origin) { configuration in
            var s3 = Self.unreachableStore(port: port)
            s3.retryPolicy.maximumAttempts = 2
            configuration.s3 = s3
            configuration.resultStore = URL(string: "s3://results/fleet")
            // Room for a loaded machine: the refusal must be what ends the read, not the bound
            // (stretched like the tests' deadlines: two refused attempts, waited for on a starved
            // pool, can outlast a fixed 30 s).
            configuration.resultStoreTimeout = .seconds(30 * Deadlines.stretch)
        }
        defer { Task { await proxy.stop() } }
        let reply = try await proxy.get("/elephants.jpg", "w=120")
        #expect(reply.status == 200)
        #expect(reply.header("X-Cache") == "miss")
        #expect(try reply.decoded().image.width == 120)
        await proxy.proxy.resultStore?.waitForWrites()

        let health = try await proxy.request("/healthz")
        #expect(health.status == 200)
        #expect(health.text.hasPrefix("ok\n"))
        #expect(health.text.contains("result-store s3://results/fleet: down"))
        let metrics = try await proxy.request("/metrics").text
        #expect(Self.counter(metrics, "webimage_proxy_store_operations_total", [#"operation="variant""#, #"outcome="error""#]) == 1)
        #expect(Self.counter(metrics, "webimage_proxy_store_operations_total", [#"operation="variant-put""#, #"outcome="error""#]) == 1)
        // Each request was tried twice (the policy above): one retry each, counted by reason.
        #expect(Self.counter(metrics, "webimage_proxy_store_retries_total", [#"operation="get""#, #"reason="connection_refused""#]) == 1)
        #expect(Self.counter(metrics, "webimage_proxy_store_retries_total", [#"operation="put""#, #"reason="connection_refused""#]) == 1)
    }

    /// A store that accepts connections and never answers: only the store timeout ends the read.
    /// The client's own timeout is a minute, so without the store's bound this test would pass
    /// its one-minute limit.
    @Test("a store that never answers degrades to rendering within the store timeout", .timeLimit(.minutes(1 * Deadlines.stretch)))
    func storeHangs() async throws {
        let origin = try await TestOrigin.start()
        origin.register("/elephants.jpg", data: try Fixture.elephants)
        let port = try #require(LoopbackPort.free())
        let silent = try #require(ListeningSocket(address: "127.0.0.1", port: port))
        defer { silent.close() }
        let proxy = try await ProxyHarness.start(origin: origin) { configuration in
            var s3 = Self.unreachableStore(port: port)
            s3.timeout = .seconds(60)
            s3.retryPolicy = .never
            configuration.s3 = s3
            configuration.resultStore = URL(string: "s3://results/fleet")
            configuration.resultStoreTimeout = .milliseconds(300)
        }
        let reply = try await proxy.get("/elephants.jpg", "w=120")
        #expect(reply.status == 200)
        #expect(reply.header("X-Cache") == "miss")
        let metrics = try await proxy.request("/metrics").text
        #expect(Self.counter(metrics, "webimage_proxy_store_operations_total", [#"operation="variant""#, #"outcome="timeout""#]) == 1)
        let health = try await proxy.request("/healthz")
        #expect(health.status == 200 && health.text.contains("down"))
        // The upload to the silent store gives up after ten times the read bound.
        await proxy.stop()
        #expect(Self.counter(proxy.proxy.metrics.exposition(), "webimage_proxy_store_operations_total", [#"operation="variant-put""#, #"outcome="error""#]) == 1)
    }

    @Test("--origin-store: a second instance making another variant of the source never reaches the origin", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"))
    func originStore() async throws {
        let bucket = try await Bucket.make(.rclone)
        defer { Task { await bucket.shutdown() } }
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        origin.register("/elephants.jpg", data: try Fixture.elephants, etag: "\"v1\"", cacheControl: "max-age=3600")

        let first = try await instance(bucket, origin: origin) { $0.keepsOriginalsInStore = true }
        #expect(try await first.get("/elephants.jpg", "w=100").status == 200)
        await first.proxy.resultStore?.waitForWrites()
        await first.stop(keepOrigin: true)

        let second = try await instance(bucket, origin: origin) { $0.keepsOriginalsInStore = true }
        defer { Task { await second.stop(keepOrigin: true) } }
        let other = try await second.get("/elephants.jpg", "w=160")
        #expect(other.status == 200)
        #expect(other.header("X-Cache") == "miss")
        #expect(try other.decoded().image.width == 160)
        #expect(origin.allRequests.count == 1)
        let metrics = try await second.request("/metrics").text
        #expect(Self.counter(metrics, "webimage_proxy_store_operations_total", [#"operation="original""#, #"outcome="hit""#]) == 1)

        // An instance under another origin policy (here an allowlist) never takes the stored
        // original: it would answer for a fetch, redirects included, that policy never judged.
        let stricter = try await instance(bucket, origin: origin) {
            $0.keepsOriginalsInStore = true
            $0.allowedHosts = ["127.0.0.1"]
        }
        defer { Task { await stricter.stop(keepOrigin: true) } }
        let judged = try await stricter.get("/elephants.jpg", "w=140")
        #expect(judged.status == 200)
        #expect(try judged.decoded().image.width == 140)
        #expect(origin.allRequests.count == 2)
        let stricterMetrics = try await stricter.request("/metrics").text
        #expect(Self.counter(stricterMetrics, "webimage_proxy_store_operations_total", [#"operation="original""#, #"outcome="miss""#]) == 1)
        #expect(Self.counter(stricterMetrics, "webimage_proxy_store_operations_total", [#"operation="original""#, #"outcome="hit""#]) == 0)
    }
}
