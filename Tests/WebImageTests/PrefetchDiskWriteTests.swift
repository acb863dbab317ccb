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
@Suite("Bytes on their way to the disk", .timeLimit(.minutes(1)))
struct PrefetchDiskWriteTests {
    @Test("an image is counted only once its bytes are on disk; a second prefetch during the write downloads and counts nothing")
    func countsFollowTheDiskWrite() async throws {
        let origin = try await TestOrigin.start()
        let directory = TemporaryDirectory("prefetch-write")
        let jpeg = try Fixture.data("hopper.jpg")
        origin.register("/photo.jpg", data: jpeg)
        let url = origin.url("/photo.jpg")

        let (reached, reachedContinuation) = AsyncStream<Void>.makeStream()
        let release = DispatchSemaphore(value: 0)
        var diskConfiguration = DiskCache.Configuration()
        diskConfiguration.afterPartialWrite = {
            reachedContinuation.yield()
            release.wait()
        }
        let disk = try DiskCache(directory: directory.url, configuration: diskConfiguration)
        let manager = ImageManager(configuration: .standard(cache: ImageCache(disk: disk)))
        let prefetcher = ImagePrefetcher(manager: manager)
        let key = ImageCacheKey(url.absoluteString)

        let first = prefetcher.startPrefetching([url])
        var writes = reached.makeAsyncIterator()
        await writes.next()
        // The bytes arrived and are half written: not yet counted.
        #expect(first.current.completed == 0)
        #expect(!disk.contains(key))

        // The same URL again while the first write runs: it joins the finished work.
        let second = prefetcher.startPrefetching([url])
        while manager.activeJobs.image > 0 { await Task.yield() }
        #expect(second.current.completed == 0)

        release.signal()
        let firstSummary = await first.summary
        #expect(firstSummary.finished == 1)
        #expect(firstSummary.bytes == jpeg.count)
        #expect(disk.contains(key))
        let secondSummary = await second.summary
        #expect(secondSummary.finished == 0)
        #expect(secondSummary.skipped == 1)
        #expect(secondSummary.bytes == 0)
        #expect(origin.requestCount(path: "/photo.jpg") == 1)

        reachedContinuation.finish()
        await manager.shutdown()
        try await origin.shutdown()
        directory.remove()
    }

    @Test("a request that comes while bytes that arrived whole are being written uses them: no second download")
    func bytesBeingWrittenAreNotLoadedAgain() async throws {
        let origin = try await TestOrigin.start()
        let directory = TemporaryDirectory("pending-write")
        origin.register("/photo.jpg", data: try Fixture.data("hopper.jpg"))
        let url = origin.url("/photo.jpg")

        let (reached, reachedContinuation) = AsyncStream<Void>.makeStream()
        let release = DispatchSemaphore(value: 0)
        var diskConfiguration = DiskCache.Configuration()
        diskConfiguration.afterPartialWrite = {
            reachedContinuation.yield()
            release.wait()
        }
        let disk = try DiskCache(directory: directory.url, configuration: diskConfiguration)
        let manager = ImageManager(configuration: .standard(cache: ImageCache(disk: disk)))

        // The bytes alone: delivered, then written (held half-way).
        let bytes = try await manager.data(for: ImageRequest(url: url))
        var writes = reached.makeAsyncIterator()
        await writes.next()
        // A decoded image of the same URL, while the write is held: from those bytes.
        let image = try await manager.image(for: ImageRequest(url: url))
        #expect(image.image.width == 128)
        #expect(image.cacheType == .memory)
        #expect(image.data == bytes.data)
        #expect(origin.requestCount(path: "/photo.jpg") == 1)

        // Enough for every write that may come (one, unless the bytes were loaded again).
        for _ in 0..<4 { release.signal() }
        reachedContinuation.finish()
        await manager.shutdown()
        #expect(disk.contains(ImageCacheKey(url.absoluteString)))
        try await origin.shutdown()
        directory.remove()
    }
}
