import Dispatch
import Foundation
import Testing
@_spi(Testing) import WebImageCore
import WebImage
import WebImageTestSupport

/// A prefetch counts an image once its bytes are on disk, and a prefetch that finds the work
/// already done counts no download of its own.
///
/// The disk cache's write is held half-way by its test hook (on an I/O thread, never the
/// cooperative pool) until the test lets it go, so that what happens during the write is seen
/// at a fixed point rather than by timing.
@Suite("Bytes on their way to the disk", .timeLimit(.minutes(1 * Deadlines.stretch)))
struct PrefetchDiskWriteTests {
    @Test("an image is counted only once its bytes are on disk; a second prefetch during the write downloads and counts nothing")
    func countsFollowTheDiskWrite() async throws {
        let setup = try await HeldWrites.start()
        let (manager, disk, url, jpeg) = (setup.manager, setup.disk, setup.url, setup.jpeg)
        let prefetcher = ImagePrefetcher(manager: manager)
        let key = ImageCacheKey(url.absoluteString)

        let first = prefetcher.startPrefetching([url])
        var writes = setup.reached.makeAsyncIterator()
        await writes.next()
        // The bytes arrived and are half written: not yet counted.
        #expect(first.current.completed == 0)
        #expect(!disk.contains(key))

        // The same URL again while the first write runs: it joins the finished work.
        let second = prefetcher.startPrefetching([url])
        while manager.activeJobs.image > 0 { await Task.yield() }
        #expect(second.current.completed == 0)

        setup.release.signal()
        let firstSummary = await first.summary
        #expect(firstSummary.finished == 1)
        #expect(firstSummary.bytes == jpeg.count)
        #expect(disk.contains(key))
        let secondSummary = await second.summary
        #expect(secondSummary.finished == 0)
        #expect(secondSummary.skipped == 1)
        #expect(secondSummary.bytes == 0)
        #expect(setup.origin.requestCount(path: "/photo.jpg") == 1)

        try await setup.stop()
    }

    @Test("a request that comes while bytes that arrived whole are being written uses them: no second download")
    func bytesBeingWrittenAreNotLoadedAgain() async throws {
        let setup = try await HeldWrites.start()
        let (manager, disk, url) = (setup.manager, setup.disk, setup.url)

        // The bytes alone: delivered, then written (held half-way).
        let bytes = try await manager.data(for: ImageRequest(url: url))
        var writes = setup.reached.makeAsyncIterator()
        await writes.next()
        // A decoded image of the same URL, while the write is held: from those bytes.
        let image = try await manager.image(for: ImageRequest(url: url))
        #expect(image.image.width == 128)
        #expect(image.cacheType == .memory)
        #expect(image.data == bytes.data)
        #expect(setup.origin.requestCount(path: "/photo.jpg") == 1)

        // Enough for every write that may come (one, unless the bytes were loaded again).
        for _ in 0..<4 { setup.release.signal() }
        await manager.waitUntilIdle()
        #expect(disk.contains(ImageCacheKey(url.absoluteString)))
        try await setup.stop()
    }
}

/// An origin serving one JPEG, and a manager whose disk cache holds every write half-way (on an
/// I/O thread) until the test signals `release`; `reached` yields as each write gets there.
private struct HeldWrites {
    let origin: TestOrigin
    let directory = TemporaryDirectory("held-writes")
    let jpeg: Data
    let url: URL
    let reached: AsyncStream<Void>
    let reachedContinuation: AsyncStream<Void>.Continuation
    let release = DispatchSemaphore(value: 0)
    let disk: DiskCache
    let manager: ImageManager

    static func start() async throws -> HeldWrites {
        try HeldWrites(origin: try await TestOrigin.start(), jpeg: try Fixture.data("hopper.jpg"))
    }

    private init(origin: TestOrigin, jpeg: Data) throws {
        self.origin = origin
        self.jpeg = jpeg
        origin.register("/photo.jpg", data: jpeg)
        url = origin.url("/photo.jpg")
        (reached, reachedContinuation) = AsyncStream<Void>.makeStream()
        var configuration = DiskCache.Configuration()
        configuration.afterPartialWrite = { [reachedContinuation, release] in
            reachedContinuation.yield()
            release.wait()
        }
        disk = try DiskCache(directory: directory.url, configuration: configuration)
        // The download deadline (15 s by default) only ends a hang: the body is read on the
        // cooperative pool, which the parallel suite on a loaded machine can keep longer.
        var http = HTTPImageLoader.Configuration(acceptedFormats: CoderRegistry.system().decodableFormats)
        http.timeout = .seconds(60 * Deadlines.stretch)
        manager = ImageManager(configuration: .standard(cache: ImageCache(disk: disk), http: http))
    }

    /// Waits for the manager's work (every held write must have been released), then stops.
    func stop() async throws {
        reachedContinuation.finish()
        await manager.shutdown()
        try await origin.shutdown()
        directory.remove()
    }
}
