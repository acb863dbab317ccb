import Foundation
import Testing
import WebImageTestSupport
@testable import WebImageCore

/// `Cache-Control` values a hostile origin sends, kept in Tests/Fixtures/fuzz/fuzz-cache-control
/// (from the fuzz-cache-control target): a lifetime so long that its expiry, in milliseconds,
/// overflowed `Int64` trapped the process when the entry was stored.
@Suite struct CacheControlHostileTests {
    static let fixtures: [String] = {
        let folder = TestFiles.fixtures.appendingPathComponent("fuzz/fuzz-cache-control")
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }()

    @Test func theFixturesArePresent() {
        #expect(Self.fixtures.count >= 2)
    }

    /// A lifetime counts as at most 2^31 seconds (RFC 9111 §1.2.2), and the entry stores and
    /// reads back with that expiry.
    @Test(arguments: fixtures)
    func anEnormousLifetimeIsCappedAndStored(fixture: String) throws {
        let header = String(decoding: try TestFiles.fixture("fuzz/fuzz-cache-control/\(fixture)"), as: UTF8.self)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let expiry = try #require(DiskCache.Metadata.expiration(cacheControl: header, now: now))
        #expect(expiry == now.addingTimeInterval(2_147_483_648))

        let directory = TemporaryDirectory("cache-control")
        var configuration = DiskCache.Configuration()
        configuration.sweepsOnOpen = false
        let cache = try DiskCache(directory: directory.url, configuration: configuration)
        try cache.blocking.store(Data([1, 2, 3]), forKey: "k", metadata: .init(expiresAt: expiry))
        let entry = try #require(cache.blocking.entry(forKey: "k"))
        #expect(entry.metadata.expiresAt.map(milliseconds) == milliseconds(expiry))
    }

    /// Dates no file can record (a caller's own `expiresAt`) saturate instead of trapping.
    @Test func millisecondsSaturate() {
        #expect(milliseconds(Date(timeIntervalSince1970: 1e300)) == .max)
        #expect(milliseconds(Date(timeIntervalSince1970: -1e300)) == .min)
        #expect(milliseconds(Date(timeIntervalSince1970: 1.5)) == 1500)
    }
}
