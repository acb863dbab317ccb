import Foundation
import Testing
@testable import WebImageCore

/// Sniffing over every file of `../shared/corpus`, checked against what Pillow reported in
/// `reference.json`. Skipped, with a printed notice, when the corpus is absent.
@Suite(.enabled(if: TestFiles.corpusIsPresent, "../shared/corpus is absent (a clone without the shared test images)"))
struct CorpusTests {
    /// One entry of `reference.json`; only the fields sniffing can check.
    struct Entry: Decodable, Sendable, CustomTestStringConvertible {
        var file: String
        var bytes: Int
        var format: String?
        var mode: String?
        var size: [Int]?
        var frames: Int?
        var decodable: Bool

        var testDescription: String { file }
    }

    struct Reference: Decodable {
        var images: [Entry]
    }

    static let entries: [Entry] = {
        guard TestFiles.corpusIsPresent,
              let data = try? Data(contentsOf: TestFiles.corpus.appendingPathComponent("reference.json")),
              let reference = try? JSONDecoder().decode(Reference.self, from: data)
        else { return [] }
        return reference.images
    }()

    /// What sniffing says about the files Pillow could not identify (format null), with the
    /// bytes that make it so, from `xxd`:
    static let unidentified: [String: ImageHeader] = [
        // 89 50 4E 47 0D 0A 1A 0A 2F C5 7D 50 F4 A8 81 E1 …: the PNG signature, then 72 random
        // bytes where IHDR should be. A PNG by its signature; nothing else is readable.
        "edge/broken.png": .init(format: .png),
        // 47 49 46 38 39 61 20 00 20 00 F1 …: GIF89a with a 32×32 screen; the one image
        // descriptor (2C 0000 00FF FFFF 2905) places a 65535×1321 frame at y 65280, which Pillow
        // refuses as a bomb. The data ends inside that frame.
        "edge/decompression_bomb.gif": .init(format: .gif, hasAlpha: true, pixelWidth: 32, pixelHeight: 32),
        // 47 49 46 38 39 61 00 00 20 00 F1 …: GIF89a with a 0×32 screen, otherwise the same
        // bytes as decompression_bomb.gif. A GIF by magic; the zero width is reported as stored.
        "edge/zero_width.gif": .init(format: .gif, hasAlpha: true, pixelWidth: 0, pixelHeight: 32),
        // 89 50 4E 47 0D 0A 1A 0A 00 00 00 0D 49 48 44 52 00 00 00 01 00 00 00 01 08 00 …: a valid
        // 1×1 grey PNG whose three zTXt chunks inflate past Pillow's text limit. The header is
        // fine; the bomb is in the metadata.
        "edge/png_decompression_dos.png": .init(format: .png, isAnimated: false, hasAlpha: false, pixelWidth: 1, pixelHeight: 1),
    ]

    static let pillowFormats: [String: ImageFormat] = ["JPEG": .jpeg, "PNG": .png, "GIF": .gif, "WEBP": .webp]

    @Test(arguments: entries)
    func sniffsLikeTheReference(entry: Entry) throws {
        let data = try Data(contentsOf: TestFiles.corpus.appendingPathComponent(entry.file))
        #expect(data.count == entry.bytes, "the corpus file is the one the reference describes")
        let header = try #require(ImageHeader(sniffing: data), "\(entry.file) sniffs as some format")
        #expect(ImageFormat(sniffing: data) == header.format)

        guard let pillowFormat = entry.format else {
            let expected = try #require(Self.unidentified[entry.file], "a decision for \(entry.file), which Pillow could not identify")
            #expect(header == expected)
            return
        }
        let family = try #require(Self.pillowFormats[pillowFormat], "a Pillow format we map: \(pillowFormat)")
        let frames = try #require(entry.frames)

        // Pillow calls APNG "PNG". An APNG has an acTL chunk; its frame count in Pillow also
        // counts a default image kept out of the animation, so "frames > 1" is APNG, and a
        // one-frame APNG (edge/apng/single_frame.png) is APNG but not animated.
        if family == .png, entry.file.hasPrefix("edge/apng/") {
            #expect(header.format == .apng)
        } else if family == .png {
            #expect(header.format == .png)
        } else {
            #expect(header.format == family)
        }
        if family == .png, frames > 1 { #expect(header.format == .apng) }

        // Stored dimensions: every one of these formats has them in its header, including
        // the truncated files Pillow identified but could not decode.
        if let size = entry.size {
            #expect(header.pixelWidth == size[0], "width of \(entry.file)")
            #expect(header.pixelHeight == size[1], "height of \(entry.file)")
        }

        // Animation, where the whole file is there to tell.
        if entry.decodable {
            #expect(header.isAnimated == (frames > 1), "\(entry.file): \(frames) frames in Pillow")
        }
        // Pillow's modes with an alpha channel must be declared by the header.
        if let mode = entry.mode, ["RGBA", "LA", "PA"].contains(mode) {
            #expect(header.hasAlpha == true, "\(entry.file) is \(mode) in Pillow")
        }
        if header.format == .jpeg { #expect(header.hasAlpha == false) }
    }

    @Test func theReferenceCoversEveryCorpusFile() throws {
        let root = TestFiles.corpus
        let enumerator = try #require(FileManager.default.enumerator(atPath: root.path))
        var images: Set<String> = []
        while let path = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory)
            if !exists || isDirectory.boolValue || path.hasPrefix("licenses/") || path == "README.md" || path == "reference.json" { continue }
            images.insert(path)
        }
        let referenced = Set(Self.entries.map(\.file))
        // Every reference entry names a file that is there.
        #expect(referenced.subtracting(images).isEmpty, "\(referenced.subtracting(images).sorted())")
        // A file the reference does not describe (the corpus is not ours to edit) is still
        // sniffed, so it is noticed and checked, never skipped in silence.
        let unreferenced = images.subtracting(referenced).sorted()
        for path in unreferenced {
            let data = try Data(contentsOf: root.appendingPathComponent(path))
            #expect(ImageHeader(sniffing: data) != nil, "\(path) is in the corpus without a reference entry and is not an image")
        }
        if !unreferenced.isEmpty {
            print("corpus: \(unreferenced.count) file(s) without a reference entry, sniffed only: \(unreferenced.joined(separator: ", "))")
        }
        #expect(Self.entries.count > 80, "the whole corpus was read, not a stub")
        print("corpus: sniffed \(Self.entries.count) files from \(root.path)")
    }

    @Test func prefixesOfEveryCorpusFile() throws {
        for entry in Self.entries {
            let data = try Data(contentsOf: TestFiles.corpus.appendingPathComponent(entry.file))
            HostileInputTests.checkPrefixes(of: data, name: entry.file, lengths: 0...64)
        }
    }
}
