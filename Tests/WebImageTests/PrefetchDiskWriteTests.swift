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
@Suite("Prefetch and the disk write", .timeLimit(.minutes(1)))
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
}
