import Foundation
import Synchronization
import Testing
import WebImage
@testable import WebImageS3
import WebImageTestSupport

/// An ``S3ImageLoader`` that counts its loads and records what they returned or threw and how
/// many bytes they saw: a thin test double around the real loader and the real client.
final class CountingS3Loader: ImageLoader {
    let inner: S3ImageLoader
    private struct State {
        var loads = 0
        var notModified = 0
        var bytesReturned = 0
        var errors: [ImageError] = []
        var received = 0
    }
    private let state = Mutex(State())

    init(_ inner: S3ImageLoader) { self.inner = inner }

    var loads: Int { state.withLock { $0.loads } }
    var notModified: Int { state.withLock { $0.notModified } }
    var bytesReturned: Int { state.withLock { $0.bytesReturned } }
    var errors: [ImageError] { state.withLock { $0.errors } }
    /// The most bytes any load reported receiving.
    var received: Int { state.withLock { $0.received } }

    func canLoad(_ url: URL) -> Bool { inner.canLoad(url) }

    func load(_ request: ImageLoadRequest, context: ImageLoadContext) async throws -> ImageLoadResponse {
        state.withLock { $0.loads += 1 }
        let observed = ImageLoadContext(priority: context.priority, wantsChunks: context.wantsChunks) { progress in
            self.state.withLock { $0.received = max($0.received, progress.received) }
            context.didReceive(progress.chunk, received: progress.received, expected: progress.expected)
        }
        do {
            let response = try await inner.load(request, context: observed)
            state.withLock {
                $0.bytesReturned += response.data.count
                if response.isNotModified { $0.notModified += 1 }
            }
            return response
        } catch let error as ImageError {
            state.withLock { $0.errors.append(error) }
            throw error
        }
    }
}

/// ImageManager over the S3 loader and the system codecs, against real S3 servers.
@Suite("S3ImageLoader under ImageManager")
struct S3ImageLoaderTests {
    struct Setup {
        let s3: S3Setup
        let loader: CountingS3Loader
        let manager: ImageManager
        let directory: TemporaryDirectory

        init(_ kind: S3TestServer.Kind, server: S3TestServer? = nil, allowedBuckets: [String]? = nil, maximumSize: Int? = nil) async throws {
            let s3 = try await S3Setup.make(kind, server: server)
            self.s3 = s3
            loader = CountingS3Loader(S3ImageLoader(client: s3.client, allowedBuckets: allowedBuckets ?? [s3.bucket], maximumSize: maximumSize))
            directory = TemporaryDirectory("s3-manager")
            let disk = try DiskCache(directory: directory.url.appendingPathComponent("cache"))
            manager = ImageManager(configuration: .init(cache: ImageCache(disk: disk), loaders: [loader], registry: CoderRegistry.system()))
        }

        func url(_ key: String) -> URL { URL(string: "s3://\(s3.bucket)/\(key)")! }

        func tearDown() async throws {
            await manager.waitUntilIdle()
            try await s3.tearDown()
            directory.remove()
        }
    }

    @Test("the loader alone: bytes, metadata for the disk cache, progress, 304 on a matching ETag", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"), arguments: S3TestServer.Kind.allCases)
    func loaderAlone(kind: S3TestServer.Kind) async throws {
        let s3 = try await S3Setup.make(kind)
        let png = try S3Fixture.data("hopper.png")
        let etag = try await s3.client.putObject(bucket: s3.bucket, key: "icons/hopper.png", data: png, contentType: "image/png")
        let loader = S3ImageLoader(client: s3.client)
        let url = URL(string: "s3://\(s3.bucket)/icons/hopper.png")!
        #expect(loader.canLoad(url))
        #expect(!loader.canLoad(URL(string: "https://example.com/a.png")!))

        let progress = Recorder<Int>()
        let response = try await loader.load(ImageLoadRequest(url: url), context: ImageLoadContext { progress.append($0.received) })
        #expect(response.data == png)
        #expect(!response.isNotModified)
        #expect(response.metadata.contentType == "image/png")
        #expect(response.metadata.etag == etag)
        #expect(response.metadata.lastModified != nil)
        #expect(progress.all.last == png.count)

        let revalidated = try await loader.load(ImageLoadRequest(url: url, validators: .init(etag: etag)), context: ImageLoadContext())
        #expect(revalidated.isNotModified)
        #expect(revalidated.data.isEmpty)

        await #expect(throws: ImageError.httpStatus(404)) {
            try await loader.load(ImageLoadRequest(url: URL(string: "s3://\(s3.bucket)/icons/none.png")!), context: ImageLoadContext())
        }
        do {
            _ = try await S3ImageLoader(client: s3.client, maximumSize: 100).load(ImageLoadRequest(url: url), context: ImageLoadContext())
            Issue.record("a body over maximumSize was accepted")
        } catch let error as ImageError {
            guard case .tooLarge = error else { Issue.record("expected tooLarge, got \(error)"); return }
        }
        await #expect(throws: ImageError.invalidURL("s3://\(s3.bucket) does not name a bucket and a key")) {
            try await loader.load(ImageLoadRequest(url: URL(string: "s3://\(s3.bucket)")!), context: ImageLoadContext())
        }
        try await s3.tearDown()
    }

    @Test("N concurrent requests for one s3:// URL: one GetObject, every caller gets the image", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"), arguments: S3TestServer.Kind.allCases)
    func coalescing(kind: S3TestServer.Kind) async throws {
        let setup = try await Setup(kind)
        let jpeg = try S3Fixture.data("hopper.jpg")
        try await setup.s3.client.putObject(bucket: setup.s3.bucket, key: "hopper.jpg", data: jpeg, contentType: "image/jpeg")
        let url = setup.url("hopper.jpg")
        let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask { try await setup.manager.image(for: ImageRequest(url: url)).image.width }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(sizes.count == 8)
        #expect(Set(sizes).count == 1 && sizes[0] > 0)
        #expect(setup.loader.loads == 1)
        #expect(setup.loader.bytesReturned == jpeg.count)
        try await setup.tearDown()
    }

    @Test("a revalidation: the cached ETag goes out, S3 answers 304, the bytes are not downloaded again", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"), arguments: S3TestServer.Kind.allCases)
    func revalidation(kind: S3TestServer.Kind) async throws {
        let setup = try await Setup(kind)
        let png = try S3Fixture.data("hopper.png")
        try await setup.s3.client.putObject(bucket: setup.s3.bucket, key: "avatar.png", data: png, contentType: "image/png")
        let url = setup.url("avatar.png")
        let first = try await setup.manager.image(for: ImageRequest(url: url))
        #expect(first.cacheType == .none)
        await setup.manager.waitUntilIdle()

        let again = try await setup.manager.image(for: ImageRequest(url: url, options: .refreshCached))
        #expect(again.isRevalidated)
        #expect(again.image.pixels == first.image.pixels)
        #expect(setup.loader.loads == 2)
        #expect(setup.loader.notModified == 1)
        #expect(setup.loader.bytesReturned == png.count)   // the first download only

        // A new object under the key: a new ETag, so the refresh downloads it.
        let jpeg = try S3Fixture.data("hopper.jpg")
        try await setup.s3.client.putObject(bucket: setup.s3.bucket, key: "avatar.png", data: jpeg, contentType: "image/jpeg")
        await setup.manager.waitUntilIdle()
        let changed = try await setup.manager.image(for: ImageRequest(url: url, options: .refreshCached))
        #expect(!changed.isRevalidated)
        #expect(changed.container.format == .jpeg)
        #expect(setup.loader.bytesReturned == png.count + jpeg.count)
        try await setup.tearDown()
    }

    @Test("a bucket outside the allowlist is an invalid URL, and nothing is requested", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"), arguments: S3TestServer.Kind.allCases)
    func allowlist(kind: S3TestServer.Kind) async throws {
        let setup = try await Setup(kind, allowedBuckets: ["some-other-bucket"])
        try await setup.s3.client.putObject(bucket: setup.s3.bucket, key: "hopper.png", data: try S3Fixture.data("hopper.png"))
        await #expect(throws: ImageError.invalidURL("the bucket \(setup.s3.bucket) is not allowed")) {
            try await setup.manager.image(for: ImageRequest(url: setup.url("hopper.png")))
        }
        #expect(setup.loader.loads == 1)
        #expect(setup.loader.received == 0)
        try await setup.tearDown()
    }

    @Test("a missing object fails with 404 through the manager", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"), arguments: S3TestServer.Kind.allCases)
    func missingObject(kind: S3TestServer.Kind) async throws {
        let setup = try await Setup(kind)
        await #expect(throws: ImageError.httpStatus(404)) {
            try await setup.manager.image(for: ImageRequest(url: setup.url("nothing.png")))
        }
        try await setup.tearDown()
    }

    @Test("cancelling the task while the object is being read stops the download with .cancelled", .enabled(if: Requirement.met(S3TestServer.allInstalled), "SeaweedFS or rclone is not installed (scripts/deps.sh --test)"))
    func cancellationMidDownload() async throws {
        // A private rclone server limited to 256 KiB/s: a 2 MiB object takes seconds to read,
        // so the cancel lands while the body is arriving, on every machine.
        let server = try await S3TestServer.start(.rclone, extraArguments: ["--bwlimit", "256k"])
        let setup = try await Setup(.rclone, server: server)
        let size = 2 << 20
        // Written straight into rclone's folder for the bucket: uploading it would be throttled too.
        try testPayload(forKey: "large", size: size).write(to: server.dataDirectory.appendingPathComponent("\(setup.s3.bucket)/large.bin"))

        let task = setup.manager.loadImage(with: ImageRequest(url: setup.url("large.bin")))
        var outcome: Result<ImageResponse, ImageError>?
        for await event in task.events {
            switch event {
            case .progress: task.cancel()
            case .finished(let result): outcome = result
            case .preview, .cached: break
            }
        }
        guard case .failure(let error) = outcome else {
            Issue.record("expected a failure, got \(String(describing: outcome))")
            return
        }
        #expect(error == .cancelled)
        await setup.manager.waitUntilIdle()
        #expect(setup.loader.errors == [.cancelled])
        #expect(setup.loader.received > 0)
        #expect(setup.loader.received < size)
        try await setup.tearDown()
        server.stop()
    }
}
