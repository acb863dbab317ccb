import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// Hostile-input finding 1: a grid's tiles are counted and sized from the item boxes before
/// libavif or libheif decodes any of them. A 450 KB AVIF declaring a 96 × 64 image made of 100 ×
/// 100 tiles passed every limit, and libavif 0.11 decoded every tile (an AV1 decoder each) before
/// it looked at the grid: 4 GB and 19 s in avifdec.
@Suite(.timeLimit(.minutes(5 * Sanitizers.slowdown))) struct ISOBMFFGridLimitTests {
    /// The builder's grids are real AVIF: a 2 × 2 grid decodes to avifdec's pixels, so the
    /// refusals below are the limits', not a broken file's.
    @Test func builtGridsDecodeAsAvifdecDecodesThem() throws {
        let file = try AVIFGridBuilder.fixtureTile().file(rows: 2, columns: 2, width: 128, height: 128)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("grid-\(UUID().uuidString).avif")
        try file.write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }
        let reference = try ISOBMFFTestFiles.referenceDecode("avifdec", [], path: path.path)
        let image = try AVIFDecoder().decode(file, options: .preservingColor).image
        #expect(image.width == 128 && image.height == 128)
        #expect(reference.width == 128 && reference.height == 128 && reference.depth == 8)
        let ours = image.pixels.enumerated().filter { image.pixelFormat == .rgba8 ? $0.offset % 4 != 3 : true }.map { Int($0.element) }
        let theirs = reference.channels == 4 ? reference.values.enumerated().filter { $0.offset % 4 != 3 }.map(\.element) : reference.values
        #expect(ours.count == theirs.count)
        #expect(zip(ours, theirs).allSatisfy { abs($0 - $1) <= 1 }, "a built grid decodes to avifdec's pixels")
    }

    /// The finding's file: 100 × 100 tiles under a 96 × 64 canvas, 450 KB. Decoded in a child
    /// process limited to 1 GiB of address space and 20 seconds (finding 1 took 4 GB), it must
    /// report a typed error naming the tiles; in this process too, as `tooLarge`.
    @Test(.disabled(if: Sanitizers.reservesShadowMemory, "an ASan or TSan process reserves terabytes of address space for its shadow memory: the child's 1 GiB limit stops it at start"))
    func theFindingsGridIsRefusedBeforeAnyTileIsDecoded() throws {
        let builder = try AVIFGridBuilder.fixtureTile()
        // The finding's grid is refused by its item count (10,001 items, more than the parser
        // reads); one of 60 × 60 tiles (3,601 items) by its tile count.
        for (side, words) in [(100, "10001 items"), (60, "3600 tiles")] {
            let file = builder.file(rows: side, columns: side, width: 96, height: 64)
            #expect(side != 100 || file.count < 500_000)
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("grid-bomb-\(UUID().uuidString).avif")
            try file.write(to: path)
            defer { try? FileManager.default.removeItem(at: path) }
            let output = try runProbeLimited(["decode", path.path], addressSpaceKiB: 1 << 20, seconds: 20)
            #expect(output.hasPrefix("error ") && output.contains(words), "\(side)²: \(output)")
        }
    }

    @Test func tilesPastTheLimitAreRefusedInProcess() throws {
        let builder = try AVIFGridBuilder.fixtureTile()
        let file = builder.file(rows: 16, columns: 16, width: 1024, height: 1024)
        var options = ImageDecodingOptions()
        options.maximumTileCount = 255
        for decode in [{ try AVIFDecoder().decode(file, options: options) }, { try CoderRegistry.system().decode(file, options: options) }] {
            #expect { try decode() } throws: { error in
                guard case ImageError.tooLarge(let message) = error else { return false }
                return message.contains("256 tiles") && message.contains("255")
            }
        }
        // Arriving a chunk at a time, refused as soon as the boxes are in.
        let incremental = try #require(AVIFDecoder().makeIncrementalDecoder(options: options))
        #expect(throws: ImageError.self) {
            for start in stride(from: 0, to: file.count, by: 4096) {
                try incremental.append(file[start..<min(start + 4096, file.count)])
            }
            _ = try incremental.finish()
        }
        // At the default limit (256) the same grid decodes.
        #expect(try AVIFDecoder().decode(file, options: .init()).image.width == 1024)
    }

    /// Tiles whose `ispe` claims far more than the canvas: the tiles' pixels together are
    /// bounded by twice the pixel limit, whatever the canvas says.
    @Test func tilesLargerThanTheirCanvasAreRefused() throws {
        var builder = try AVIFGridBuilder.fixtureTile()
        builder.tileWidth = 8000
        builder.tileHeight = 8000
        let file = builder.file(rows: 2, columns: 2, width: 128, height: 128)
        #expect { try AVIFDecoder().decode(file, options: .init()) } throws: { error in
            guard case ImageError.tooLarge(let message) = error else { return false }
            return message.contains("256000000 pixels")
        }
    }

    /// More items than the parser reads (4,096): libavif's parse of 65k items took 35 s.
    @Test func moreItemsThanTheParserReadsAreRefused() throws {
        let file = try AVIFGridBuilder.fixtureTile().file(rows: 65, columns: 65, width: 4160, height: 4160)
        var options = ImageDecodingOptions()
        options.maximumTileCount = .max
        #expect { try AVIFDecoder().decode(file, options: options) } throws: { error in
            guard case ImageError.tooLarge(let message) = error else { return false }
            return message.contains("4226 items")
        }
    }

    /// libheif decodes every tile of a HEIC grid too: the same census refuses it.
    @Test func heicGridsObeyTheTileLimit() throws {
        let file = try ISOBMFFTestFiles.fixture("heic-grid.heic")
        let census = try #require(file.withUnsafeBytes { ISOBMFFItems.tileCensus($0) })
        #expect(census.largestTileCount == 2 && census.declaredItems == 3)
        var options = ImageDecodingOptions()
        options.maximumTileCount = 1
        #expect { try HEIFDecoder().decode(file, options: options) } throws: { error in
            guard case ImageError.tooLarge(let message) = error else { return false }
            return message.contains("2 tiles")
        }
        #expect(try HEIFDecoder().decode(file, options: .init()).image.width > 0)
    }

    /// The decode-memory estimate counts an AV1 decoder per tile, so a memory budget waits for
    /// (or refuses) a grid by what libavif really holds, not by its small canvas.
    @Test func theMemoryEstimateCountsTheTiles() throws {
        let file = try AVIFGridBuilder.fixtureTile().file(rows: 16, columns: 16, width: 1024, height: 1024)
        let header = try #require(file.withUnsafeBytes { ImageHeader(sniffing: $0) })
        #expect(header.tileCount == 256)
        let estimate = try #require(header.estimatedDecodeMemory(options: .init()))
        #expect(estimate >= 256 * (400 << 10), "avifdec's peak for this grid: 120 MB")
    }

    /// Fuzz finding #17 (`fuzz-grid`, Tests/Fixtures/fuzz/fuzz-grid/ispe-product-overflows): a
    /// 724-byte AVIF whose tile `ispe` states 4,294,967,044 × 2,264,924,224: the census multiplied
    /// the two sides and trapped on the overflow, a crash any client could send. The product now
    /// saturates: that file ends in a typed error, and a grid whose tiles state the largest sides
    /// is refused as too large.
    @Test func anISPEProductThatOverflowsIsTooLarge() throws {
        let data = try ISOBMFFTestFiles.fixture("fuzz/fuzz-grid/ispe-product-overflows")
        _ = data.withUnsafeBytes { ISOBMFFItems.tileCensus($0) }
        #expect(throws: ImageError.self) { try AVIFDecoder().decode(data, options: .init()) }
        var builder = try AVIFGridBuilder.fixtureTile()
        (builder.tileWidth, builder.tileHeight) = (0xFFFF_FFFF, 0xFFFF_FFFF)
        let huge = builder.file(rows: 1, columns: 2, width: 128, height: 64)
        let census = try #require(huge.withUnsafeBytes { ISOBMFFItems.tileCensus($0) })
        #expect(census.largestTilePixels == .max)
        #expect { try AVIFDecoder().decode(huge, options: .init()) } throws: { error in
            if case ImageError.tooLarge = error { true } else { false }
        }
    }

    /// Fuzz finding #18 (`fuzz-grid`, Tests/Fixtures/fuzz/fuzz-grid/heif-dav1d-frame-size-unbounded):
    /// an AVIF given to `HEIFDecoder` directly (the registry gives AVIF to `AVIFDecoder`) reached
    /// libheif 1.15's dav1d plugin, which sets no frame-size limit: dav1d allocated 619 MB for
    /// the frame the sequence header claimed. `HEIFDecoder` now refuses every AV1 image; the
    /// AVIF decoder, which bounds dav1d by the pixel limit, answers the file.
    @Test func av1ThroughTheHEIFDecoderIsRefused() throws {
        let data = try ISOBMFFTestFiles.fixture("fuzz/fuzz-grid/heif-dav1d-frame-size-unbounded")
        #expect { try HEIFDecoder().decode(data, options: .init()) } throws: { error in
            if case ImageError.unsupportedFormat(let message) = error { message.contains("AV1") } else { false }
        }
        var options = ImageDecodingOptions()
        options.maximumPixelCount = 1 << 20
        do {
            let image = try AVIFDecoder().decode(data, options: options).image
            #expect(image.width * image.height <= 1 << 20)
        } catch is ImageError {
            // A typed error is as good an answer as an image within the limit.
        }
        for fixture in ISOBMFFTestFiles.avifFixtures {
            #expect(throws: ImageError.self) { try HEIFDecoder().decode(try ISOBMFFTestFiles.fixture(fixture), options: .init()) }
        }
    }

    /// Fuzz finding #19 (`fuzz-grid`, Tests/Fixtures/fuzz/fuzz-grid/heic-grid-among-its-own-tiles):
    /// a 666-byte HEIC whose grid names itself among its tiles. libheif 1.15 decodes the grid's
    /// tiles on threads of their own and recursed into the grid again and again: 1.5 GB in 8 s,
    /// then `std::thread` could not start one more and the process aborted (`webimage convert`,
    /// and the proxy for any client). A grid whose inputs are derived images is now refused
    /// before libheif reads it.
    @Test func aGridAmongItsOwnTilesIsRefused() throws {
        let data = try ISOBMFFTestFiles.fixture("fuzz/fuzz-grid/heic-grid-among-its-own-tiles")
        let census = try #require(data.withUnsafeBytes { ISOBMFFItems.tileCensus($0) })
        #expect(census.hasNestedDerivation)
        #expect { try CoderRegistry.system().decode(data) } throws: { error in
            if case ImageError.corruptData(let message) = error { message.contains("derived images") } else { false }
        }
        // The real grids' tiles are coded images.
        for fixture in ["heic-grid.heic", "avif-grid.avif"] {
            #expect(try ISOBMFFTestFiles.fixture(fixture).withUnsafeBytes { ISOBMFFItems.tileCensus($0) }?.hasNestedDerivation == false)
        }
    }
}
