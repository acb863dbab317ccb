import AsyncHTTPClient
import Foundation
import Synchronization
import Testing
import WebImage
@testable import WebImageS3
import WebImageTestSupport

/// Every client call against two real S3-compatible servers on loopback (SeaweedFS and rclone),
/// both checking signatures.
@Suite("S3Client against real servers")
struct S3ClientTests {
    @Test("put, head, get, list, delete and create bucket", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"), arguments: S3TestServer.Kind.allCases)
    func objectLifecycle(kind: S3TestServer.Kind) async throws {
        let setup = try await S3Setup.make(kind)
        let client = setup.client, bucket = setup.bucket
        let jpeg = try S3Fixture.data("hopper.jpg")
        let key = "photos/2024/hopper é+$.jpg"   // a key that needs encoding in path and signature

        let etag = try await client.putObject(bucket: bucket, key: key, data: jpeg, contentType: "image/jpeg", metadata: ["Owner": "Ada", "source": "fixtures"])
        #expect(etag?.isEmpty == false)

        let info = try await client.headObject(bucket: bucket, key: key)
        #expect(info.size == jpeg.count)
        #expect(info.etag == etag)
        #expect(info.contentType == "image/jpeg")
        #expect(info.lastModified != nil)
        #expect(info.metadata == ["owner": "Ada", "source": "fixtures"])

        let object = try #require(try await client.getObject(bucket: bucket, key: key))
        #expect(object.data == jpeg)
        #expect(object.etag == etag)
        #expect(object.contentType == "image/jpeg")
        #expect(object.metadata["owner"] == "Ada")

        try await client.deleteObject(bucket: bucket, key: key)
        let missing = await s3Failure { try await client.headObject(bucket: bucket, key: key) }
        #expect(missing?.kind == .noSuchKey)
        #expect(missing?.statusCode == 404)
        try await setup.tearDown()
    }

    @Test("GetObject: If-None-Match answered with nil, Range, a size limit, progress", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"), arguments: S3TestServer.Kind.allCases)
    func conditionalAndPartialGets(kind: S3TestServer.Kind) async throws {
        let setup = try await S3Setup.make(kind)
        let client = setup.client, bucket = setup.bucket
        let bytes = testPayload(forKey: "range", size: 300_000)
        let etag = try #require(try await client.putObject(bucket: bucket, key: "blob", data: bytes))

        #expect(try await client.getObject(bucket: bucket, key: "blob", ifNoneMatch: etag) == nil)
        let changed = try await client.getObject(bucket: bucket, key: "blob", ifNoneMatch: "\"not-the-etag\"")
        #expect(changed?.data == bytes)

        let range = try #require(try await client.getObject(bucket: bucket, key: "blob", range: 1000...1999))
        #expect(range.data == bytes[1000...1999])

        let tooLarge = await s3Failure { try await client.getObject(bucket: bucket, key: "blob", maximumSize: 1000) }
        #expect(tooLarge?.kind == .tooLarge)
        #expect(try await client.getObject(bucket: bucket, key: "blob", maximumSize: bytes.count)?.data == bytes)

        let reports = Recorder<(Int, Int?)>()
        _ = try await client.getObject(bucket: bucket, key: "blob") { received, expected in reports.append((received, expected)) }
        #expect(reports.all.last?.0 == bytes.count)
        #expect(reports.all.allSatisfy { $0.1 == bytes.count })
        #expect(zip(reports.all, reports.all.dropFirst()).allSatisfy { $0.0 < $1.0 })
        try await setup.tearDown()
    }

    @Test("ListObjectsV2: prefix, max keys, continuation tokens", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"), arguments: S3TestServer.Kind.allCases)
    func listing(kind: S3TestServer.Kind) async throws {
        let setup = try await S3Setup.make(kind)
        let client = setup.client, bucket = setup.bucket
        let keys = (0..<5).map { "list/item-\($0).txt" }
        for key in keys { try await client.putObject(bucket: bucket, key: key, data: Data(key.utf8), contentType: "text/plain") }
        try await client.putObject(bucket: bucket, key: "other/outside.txt", data: Data("x".utf8))

        var listed: [S3ObjectList.Entry] = []
        var token: String?
        var pages = 0
        repeat {
            let page = try await client.listObjectsV2(bucket: bucket, prefix: "list/", continuationToken: token, maxKeys: 2)
            #expect(page.objects.count <= 2)
            #expect(page.isTruncated == (page.nextContinuationToken != nil))
            listed += page.objects
            token = page.nextContinuationToken
            pages += 1
        } while token != nil && pages < 10
        #expect(listed.map(\.key) == keys)
        #expect(pages == 3)
        #expect(listed.allSatisfy { $0.size == $0.key.utf8.count && $0.etag != nil && $0.lastModified != nil })

        let everything = try await client.listObjectsV2(bucket: bucket)
        #expect(Set(everything.objects.map(\.key)) == Set(keys + ["other/outside.txt"]))
        #expect(!everything.isTruncated)
        try await setup.tearDown()
    }

    @Test("a missing key, a missing bucket, and an existing bucket", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"), arguments: S3TestServer.Kind.allCases)
    func missing(kind: S3TestServer.Kind) async throws {
        let setup = try await S3Setup.make(kind)
        let client = setup.client
        let noKey = await s3Failure { try await client.getObject(bucket: setup.bucket, key: "nothing-here.jpg") }
        #expect(noKey?.kind == .noSuchKey)
        #expect(noKey?.statusCode == 404)
        #expect(noKey?.attempts == 1)

        let noBucket = await s3Failure { try await client.listObjectsV2(bucket: S3Setup.uniqueBucketName()) }
        #expect(noBucket?.kind == .noSuchBucket)
        #expect(noBucket?.statusCode == 404)

        let again = await s3Failure { try await client.createBucket(setup.bucket) }
        #expect(again?.kind == .bucketAlreadyOwnedByYou || again?.kind == .bucketAlreadyExists)
        try await setup.tearDown()
    }

    @Test("wrong credentials: a typed 403, never retried", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"), arguments: S3TestServer.Kind.allCases)
    func wrongCredentials(kind: S3TestServer.Kind) async throws {
        let setup = try await S3Setup.make(kind)
        try await setup.client.putObject(bucket: setup.bucket, key: "a.txt", data: Data("a".utf8))

        let unknownKey = S3Client(configuration: S3Setup.configuration(for: setup.server) {
            $0.credentials = S3Credentials(accessKeyID: "NOSUCHACCESSKEY", secretAccessKey: setup.server.secretAccessKey)
        })
        let unknown = await s3Failure { try await unknownKey.getObject(bucket: setup.bucket, key: "a.txt") }
        #expect(unknown?.kind == .invalidAccessKeyID, "\(String(describing: unknown))")
        #expect(unknown?.statusCode == 403)
        #expect(unknown?.attempts == 1)
        try await unknownKey.shutdown()

        let wrongSecret = S3Client(configuration: S3Setup.configuration(for: setup.server) {
            $0.credentials = S3Credentials(accessKeyID: setup.server.accessKeyID, secretAccessKey: "not-the-secret")
        })
        let mismatch = await s3Failure { try await wrongSecret.getObject(bucket: setup.bucket, key: "a.txt") }
        #expect(mismatch?.kind == .signatureDoesNotMatch, "\(String(describing: mismatch))")
        #expect(mismatch?.statusCode == 403)
        #expect(!(mismatch?.description.contains("not-the-secret") ?? true))
        let put = await s3Failure { try await wrongSecret.putObject(bucket: setup.bucket, key: "b.txt", data: Data("b".utf8)) }
        #expect(put?.statusCode == 403)
        try await wrongSecret.shutdown()
        try await setup.tearDown()
    }

    @Test("a presigned URL works from a plain HTTP GET; altered, it is refused", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"), arguments: S3TestServer.Kind.allCases)
    func presigned(kind: S3TestServer.Kind) async throws {
        let setup = try await S3Setup.make(kind)
        let png = try S3Fixture.data("hopper.png")
        try await setup.client.putObject(bucket: setup.bucket, key: "shared/hopper.png", data: png, contentType: "image/png")
        let url = setup.client.presignedURL(bucket: setup.bucket, key: "shared/hopper.png", expires: .seconds(600))
        #expect(url.query?.contains("X-Amz-Signature=") == true)

        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        // Deadlines as long as the S3 client's (S3Setup): only a hang should reach them.
        let response = try await http.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(60 * Int64(Deadlines.stretch)))
        #expect(response.status.code == 200)
        let body = try await response.body.collect(upTo: 1 << 24)
        #expect(Data(body.readableBytesView) == png)

        // Another key under the same signature.
        let altered = url.absoluteString.replacingOccurrences(of: "hopper.png", with: "hopper.jpg")
        let refused = try await http.execute(HTTPClientRequest(url: altered), timeout: .seconds(60 * Int64(Deadlines.stretch)))
        #expect(refused.status.code == 403)
        _ = try? await refused.body.collect(upTo: 1 << 20)
        try await http.shutdown()
        try await setup.tearDown()
    }

    @Test("a closed port: a connection failure after exactly maximumAttempts tries")
    func serverDown() async throws {
        let port = try #require(LoopbackPort.refusing())
        var configuration = S3Configuration(
            endpoint: URL(string: "http://127.0.0.1:\(port)")!, region: "us-east-1",
            credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"))
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 3, baseDelay: .milliseconds(10))
        let client = S3Client(configuration: configuration)
        let failure = await s3Failure { try await client.getObject(bucket: "b", key: "k") }
        #expect(failure?.kind == .connectionFailed)
        #expect(failure?.transport == .refused)
        #expect(failure?.attempts == 3)
        #expect(failure?.isRetryable == true)
        try await client.shutdown()
    }

    @Test("500, 502, 503 and 504 are retried up to maximumAttempts; 501 and 4xx never")
    func retriesFollowTheStatus() async throws {
        // The repository's loopback origin answers /status/<code> with that status: the client's
        // path-style "bucket" and "key" are chosen to name it.
        let origin = try await TestOrigin.start()
        var configuration = S3Configuration(
            endpoint: origin.url("/"), region: "us-east-1", credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"))
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 4, baseDelay: .milliseconds(5))
        let client = S3Client(configuration: configuration)

        let unavailable = await s3Failure { try await client.getObject(bucket: "status", key: "503") }
        #expect(unavailable?.kind == .slowDown)
        #expect(unavailable?.statusCode == 503)
        #expect(unavailable?.attempts == 4)
        #expect(origin.requestCount(path: "/status/503") == 4)

        let serverError = await s3Failure { try await client.getObject(bucket: "status", key: "500") }
        #expect(serverError?.statusCode == 500)
        #expect(origin.requestCount(path: "/status/500") == 4)

        let forbidden = await s3Failure { try await client.getObject(bucket: "status", key: "403") }
        #expect(forbidden?.kind == .accessDenied)
        #expect(origin.requestCount(path: "/status/403") == 1)

        // A server that does not implement the call will not implement it a moment later.
        let notImplemented = await s3Failure { try await client.getObject(bucket: "status", key: "501") }
        #expect(notImplemented?.isRetryable == false)
        #expect(origin.requestCount(path: "/status/501") == 1)
        try await client.shutdown()
        try await origin.shutdown()
    }

    @Test("the timeout bounds each attempt at a server that never answers; one that timed out before any byte is retried")
    func timeout() async throws {
        // A socket that listens and never accepts: the connection opens (the kernel completes
        // it) and no answer ever comes.
        let port = try #require(LoopbackPort.free())
        let silent = try #require(ListeningSocket(address: "127.0.0.1", port: port))
        var configuration = S3Configuration(
            endpoint: URL(string: "http://127.0.0.1:\(port)")!, region: "us-east-1", credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"))
        configuration.timeout = .milliseconds(300)
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 3, baseDelay: .milliseconds(10))
        let client = S3Client(configuration: configuration)
        let failure = await s3Failure { try await client.headObject(bucket: "b", key: "k") }
        #expect(failure?.kind == .timeout)
        #expect(failure?.attempts == 3)
        try await client.shutdown()
        silent.close()
    }
}

