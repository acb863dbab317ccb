import Foundation
import Synchronization
import Testing
import WebImageS3
import WebImageTestSupport

/// A client on one of the shared test servers, with a bucket of its own.
struct S3Setup {
    let server: S3TestServer
    let client: S3Client
    let bucket: String

    /// A bucket of its own on `server`, or on the shared server of `kind`.
    static func make(_ kind: S3TestServer.Kind, server: S3TestServer? = nil, configure: (inout S3Configuration) -> Void = { _ in }) async throws -> S3Setup {
        let server = if let server { server } else { try await S3TestServer.shared(kind) }
        let client = S3Client(configuration: configuration(for: server, configure: configure))
        let bucket = uniqueBucketName()
        try await client.createBucket(bucket)
        return S3Setup(server: server, client: client, bucket: bucket)
    }

    static func configuration(for server: S3TestServer, configure: (inout S3Configuration) -> Void = { _ in }) -> S3Configuration {
        var configuration = S3Configuration(
            endpoint: server.endpoint, region: server.region,
            credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: server.secretAccessKey))
        // Each request's deadline, stretched like the tests' others: the servers are processes
        // of their own, slow on a loaded machine. Tests of the timeout set their own.
        configuration.timeout = .seconds(60 * Deadlines.stretch)
        configure(&configuration)
        return configuration
    }

    /// A DNS-compatible bucket name no other test uses.
    static func uniqueBucketName() -> String {
        "t-" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
    }

    func tearDown() async throws {
        try await client.shutdown()
    }
}

/// The repository's fixtures.
enum S3Fixture {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func data(_ name: String) throws -> Data { try Data(contentsOf: directory.appendingPathComponent(name)) }
}

/// The ``S3Error`` `operation` throws, or `nil` (and a recorded issue) when it succeeds.
func s3Failure<T>(_ operation: () async throws -> T, sourceLocation: SourceLocation = #_sourceLocation) async -> S3Error? {
    do {
        _ = try await operation()
        Issue.record("expected an S3Error", sourceLocation: sourceLocation)
        return nil
    } catch let error as S3Error {
        return error
    } catch {
        Issue.record("expected an S3Error, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Collects values from concurrent callbacks.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}
