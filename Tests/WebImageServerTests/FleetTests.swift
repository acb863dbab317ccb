import AsyncHTTPClient
import Crypto
import Foundation
import Testing
import WebImage
import WebImageS3
import WebImageTestSupport

/// Two `webimage serve` processes sharing one SeaweedFS bucket as their result store, with nginx
/// as the HTTP origin: the set-up the proxy catalog's Fleet article describes, on loopback.
@Suite(
    "a fleet of two instances over one bucket",
    .enabled(if: WebImageExecutable.url != nil, "the webimage executable was not built beside the tests"),
    .enabled(if: Requirement.met(Nginx.executable != nil), "nginx is not installed (make test installs nginx-light)")
)
struct FleetTests {
    struct Fleet {
        let folder: TemporaryDirectory
        let bucket: ProxyS3Tests.Bucket
        let origin: Nginx

        /// The photo the origin serves, and its size.
        static let photo = "elephants.jpg"

        static func make() async throws -> Fleet {
            let bucket = try await ProxyS3Tests.Bucket.make(.seaweedFS)
            let folder = TemporaryDirectory("fleet")
            let root = folder.url.appendingPathComponent("origin")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try Fixture.elephants.write(to: root.appendingPathComponent(photo))
            let origin = try await Nginx.startOrigin(prefix: folder.url.appendingPathComponent("nginx"), root: root)
            return Fleet(folder: folder, bucket: bucket, origin: origin)
        }

        /// An instance with a cache folder of its own and the bucket as its result store.
        func instance(_ name: String) throws -> ServeProcess {
            let executable = try #require(WebImageExecutable.url)
            let server = bucket.server
            return try ServeProcess(executable, [
                "serve", "--port", "0", "--allow-loopback", "--cache-dir", folder.path + "/cache-" + name,
                "--result-store", "s3://\(bucket.name)/fleet",
            ], environment: [
                "AWS_ENDPOINT_URL": server.endpoint.absoluteString, "AWS_REGION": server.region,
                "AWS_ACCESS_KEY_ID": server.accessKeyID, "AWS_SECRET_ACCESS_KEY": server.secretAccessKey,
            ])
        }

        func imagePath(_ parameters: String) -> String {
            ProxyHarness.imagePath(url: "http://127.0.0.1:\(origin.port)/\(Self.photo)", parameters)
        }

        /// Requests for the photo in the origin's access log.
        var originRequests: Int { origin.requestedPaths().filter { $0 == "/" + Self.photo }.count }

        func stop() async {
            origin.stop()
            await bucket.shutdown()
            folder.remove()
        }
    }

    func get(_ port: Int, _ path: String) async throws -> (status: Int, cache: String?, body: Data) {
        let response = try await HTTPClient.tests.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: .seconds(60 * Int64(Deadlines.stretch)))
        let body = try await response.body.collect(upTo: 64 << 20)
        return (Int(response.status.code), response.headers.first(name: "X-Cache"), Data(body.readableBytesView))
    }

    func metrics(_ port: Int) async throws -> String {
        String(decoding: try await get(port, "/metrics").body, as: UTF8.self)
    }

    /// Waits (asking `/metrics`) until `port`'s instance has uploaded `count` variants, up to
    /// a request's deadline: 600 polls, a few seconds on a quiet machine, were a fixed bound on
    /// the upload's time, which a store process beside a loaded machine can pass.
    func waitForUploads(_ port: Int, count: Int) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(60 * Deadlines.stretch)
        repeat {
            let text = try await metrics(port)
            if ProxyS3Tests.counter(text, "webimage_proxy_store_operations_total", [#"operation="variant""#, #"outcome="stored""#]) >= count { return true }
            await Task.yield()
        } while ContinuousClock.now < deadline
        return false
    }

    @Test("a variant made by instance A is answered by instance B from the store: one origin request, no pipeline work on B", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"))
    func variantIsRenderedOncePerFleet() async throws {
        let fleet = try await Fleet.make()
        defer { Task { await fleet.stop() } }
        let a = try fleet.instance("a"), b = try fleet.instance("b")
        defer { a.terminate(); b.terminate() }
        let (portA, portB) = (try await a.port(), try await b.port())
        let path = fleet.imagePath("w=300&format=webp")

        let made = try await get(portA, path)
        #expect(made.status == 200)
        #expect(made.cache == "miss")
        #expect(try await waitForUploads(portA, count: 1))

        let shared = try await get(portB, path)
        #expect(shared.status == 200)
        #expect(shared.cache == "store")
        #expect(shared.body == made.body)
        #expect(fleet.originRequests == 1)
        let metricsB = try await metrics(portB)
        #expect(ProxyS3Tests.counter(metricsB, "webimage_requests_total") == 0, "B asked its pipeline (load, decode) for nothing")
        #expect(ProxyS3Tests.counter(metricsB, "webimage_proxy_variants_total", [#"source="store""#]) == 1)
        let health = String(decoding: try await get(portB, "/healthz").body, as: UTF8.self)
        #expect(health.contains("result-store s3://\(fleet.bucket.name)/fleet: up"))
    }

    /// Instance A is killed the moment its answer arrives, while its upload of a multi-megabyte
    /// PNG is under way (or about to start). Whatever the kill interrupted, B serves either a
    /// whole stored variant or one it makes itself, and every object in the bucket checks out.
    @Test("an instance killed while it uploads leaves nothing partial that another instance would serve", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"))
    func killedWriterLeavesNoPartialVariant() async throws {
        let fleet = try await Fleet.make()
        defer { Task { await fleet.stop() } }
        let a = try fleet.instance("a")
        let portA = try await a.port()
        let path = fleet.imagePath("format=png")
        let made = try await get(portA, path)
        kill(a.process.processIdentifier, SIGKILL)
        #expect(made.status == 200 && made.body.count > 1 << 20)
        #expect(await a.waitForExit() != 0)

        let b = try fleet.instance("b")
        defer { b.terminate() }
        let portB = try await b.port()
        let reply = try await get(portB, path)
        #expect(reply.status == 200)
        #expect(reply.cache == "store" || reply.cache == "miss")
        #expect(reply.body == made.body)

        for key in try await fleet.bucket.variantKeys(prefix: "fleet") {
            let object = try #require(try await fleet.bucket.client.getObject(bucket: fleet.bucket.name, key: key))
            let recomputed = EncodedImageDigest.etag(of: object.data)
            #expect(object.metadata["etag"] == recomputed, "\(key): \(object.data.count) bytes that do not match their ETag")
        }
    }
}

/// The proxy's ETag of some bytes, computed here from its definition (the first 16 bytes of
/// the SHA-256, in hex, quoted) rather than by the proxy's code.
enum EncodedImageDigest {
    static func etag(of data: Data) -> String {
        "\"" + SHA256.hash(data: data).prefix(16).map { String(format: "%02x", $0) }.joined() + "\""
    }
}
