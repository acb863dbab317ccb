import Foundation
import Testing
import WebImageCore
import WebImageTestSupport

/// `webimage info`, run as the built executable: the test target cannot link an executable
/// module without changing the package manifest, and the process boundary (arguments, exit
/// status, stdout versus stderr) is what users see anyway. Skipped with a notice when the
/// executable was not built beside the tests (`swift build --build-tests` builds it).
@Suite(.enabled(if: WebImageExecutable.url != nil, "the webimage executable was not built beside the tests"))
struct InfoCommandTests {
    static func run(_ arguments: [String]) throws -> CommandRun {
        try CommandRun(try #require(WebImageExecutable.url), arguments, in: Fixture.repository)
    }

    /// Fixtures copied from the corpus's undecodable files: they sniff, but do not decode.
    static let undecodable: Set = ["broken.png", "decompression_bomb.gif", "zero_width.gif"]

    /// `info` reads metadata without decoding, so files that would not decode are still listed
    /// with what their headers say; the ones cut short say so.
    @Test func undecodableFilesAreListedFromTheirHeaders() throws {
        let names = Self.undecodable.sorted()
        let run = try Self.run(["info", "--json"] + names.map { "Tests/Fixtures/\($0)" })
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.isEmpty)
        let objects = try run.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.count == names.count)
        for (name, object) in zip(names, objects) {
            #expect(object["truncated"] as? Bool == true, "\(name) stops inside its structure")
        }
        // decompression_bomb.gif: a 32×32 screen whose one frame is cut short; a first frame
        // cut short still counts, as the GIF decoder shows its rows that arrived.
        let bomb = try #require(objects.first { ($0["file"] as? String)?.hasSuffix("decompression_bomb.gif") == true })
        #expect(bomb["width"] as? Int == 32 && bomb["frames"] as? Int == 1)
    }

    @Test func jsonLinesCarryTheMetadata() throws {
        let names = try Fixture.imageNames()
        let run = try Self.run(["info", "--json"] + names.map { "Tests/Fixtures/\($0)" })
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == names.count)
        for (name, line) in zip(names, lines) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let data = try Fixture.data(name)
            let header = try #require(ImageHeader(sniffing: data))
            let metadata = try ImageMetadata(reading: data)
            #expect(object["file"] as? String == "Tests/Fixtures/\(name)")
            #expect(object["format"] as? String == header.format.rawValue)
            #expect(object["mime"] as? String == header.format.mimeType)
            #expect(object["bytes"] as? Int == data.count)
            // The size after orientation: the header's, swapped for orientations 5–8.
            var expectedKeys: Set = ["file", "format", "mime", "bytes"]
            let orientation = (object["orientation"] as? Int).flatMap(ImageOrientation.init(exifValue:))
            let swaps = orientation?.swapsDimensions ?? false
            #expect(object["width"] as? Int == (swaps ? header.pixelHeight : header.pixelWidth), "\(name)")
            #expect(object["height"] as? Int == (swaps ? header.pixelWidth : header.pixelHeight), "\(name)")
            if header.pixelWidth != nil { expectedKeys.formUnion(["width", "height"]) }
            if orientation != nil { expectedKeys.insert("orientation") }
            if let frames = object["frames"] as? Int {
                // Durations for each frame of an animation; none for a still image.
                let durations = try #require(object["durations"] as? [Int])
                #expect(frames >= 1 && durations.count == (metadata.isAnimated == true ? frames : 0), "\(name)")
                expectedKeys.formUnion(["frames", "durations"])
                if metadata.isAnimated == true { expectedKeys.insert("loopCount") }
            }
            if metadata.isTruncated { expectedKeys.insert("truncated") }
            #expect(object["bitDepth"] as? Int == metadata.bitDepth, "\(name)")
            if metadata.bitDepth != nil { expectedKeys.insert("bitDepth") }
            // The colour facts and the placeholders of every fixture that decodes, from one
            // decode (InfoColourTests and InfoPlaceholderTests check their values).
            if object["convertsToSRGB"] != nil { expectedKeys.formUnion(["convertsToSRGB", "dominantColor", "thumbHash", "blurHash"]) }
            if object["colorProfile"] != nil { expectedKeys.insert("colorProfile") }
            // Unknown values are left out, not null.
            #expect(Set(object.keys) == expectedKeys, "\(name)")
        }
        // Keys in a fixed order, so that the output is stable from run to run.
        #expect(lines.first?.hasPrefix(#"{"file":"#) == true)
    }

    @Test func animationFactsComeFromTheFile() throws {
        // apng-delay.png and hopper-animated-16.webp: what the files declare, listed in order.
        let run = try Self.run(["info", "--json", "Tests/Fixtures/apng-delay.png", "Tests/Fixtures/hopper-animated-16.webp", "Tests/Fixtures/hopper.jpg"])
        #expect(run.status == 0, "\(run.stderr)")
        let objects = try run.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        try #require(objects.count == 3)
        for (index, name) in ["apng-delay.png", "hopper-animated-16.webp"].enumerated() {
            let metadata = try ImageMetadata(reading: Fixture.data(name))
            #expect(objects[index]["frames"] as? Int == metadata.frameCount && (metadata.frameCount ?? 0) > 1, "\(name)")
            #expect(objects[index]["loopCount"] as? Int == metadata.loopCount, "\(name)")
            #expect(objects[index]["durations"] as? [Int] == metadata.frameDurations.map { Int($0 / .milliseconds(1)) }, "\(name)")
        }
        #expect(objects[2]["frames"] as? Int == 1 && objects[2]["loopCount"] == nil && objects[2]["orientation"] as? Int == 1)
    }

    /// Issue 26: `info` printed an APNG's `acTL` frame count where the decoder, setting the
    /// animation aside, shows one frame. Every `apng-fallback-*.png` fixture (one fault each,
    /// make-apng-fallback-fixtures.py) is one frame, no loop count, no durations; the valid
    /// APNGs keep their counts. WebImageCodecsTests' APNGInfoFrameCountTests checks the same
    /// counts against the decoder.
    @Test func apngFrameCountIsWhatTheDecoderShows() throws {
        let fallbacks = try Fixture.imageNames().filter { $0.hasPrefix("apng-fallback-") }
        #expect(fallbacks.count == 10)
        let expected = [("apng-two-frames.png", 2), ("apng-delay.png", 4), ("apng-single_frame.png", 1)] + fallbacks.map { ($0, 1) }
        let run = try Self.run(["info", "--json"] + expected.map { "Tests/Fixtures/\($0.0)" })
        #expect(run.status == 0, "\(run.stderr)")
        let objects = try run.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        try #require(objects.count == expected.count)
        for (object, (name, frames)) in zip(objects, expected) {
            #expect(object["file"] as? String == "Tests/Fixtures/\(name)")
            #expect(object["frames"] as? Int == frames, "\(name)")
            #expect((object["durations"] as? [Int])?.count == (frames > 1 ? frames : 0), "\(name)")
            #expect((object["loopCount"] != nil) == (frames > 1), "\(name)")
            #expect(object["truncated"] == nil, "\(name)")
        }
    }

    @Test func tableIsAlignedWithAHeaderLine() throws {
        let run = try Self.run(["info", "Tests/Fixtures/hopper.jpg", "Tests/Fixtures/apng-delay.png", "Tests/Fixtures/shapes.svg"])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines.first?.hasPrefix("FILE") == true)
        #expect(lines[1].contains("jpeg") && lines[1].contains("image/jpeg") && lines[1].contains("6412") && lines[1].contains("128×128"))
        #expect(lines[2].contains("apng") && lines[2].contains("128×64"))
        let dimensions = try #require(lines[0].range(of: "DIMENSIONS")).lowerBound.utf16Offset(in: lines[0])
        #expect(lines[3].contains("svg") && lines[3].dropFirst(dimensions).hasPrefix("- "), "no dimensions for SVG")
        // Every row's FORMAT cell starts in the header's FORMAT column.
        let column = try #require(lines[0].range(of: "FORMAT")).lowerBound.utf16Offset(in: lines[0])
        for line in lines.dropFirst() {
            #expect(line.dropFirst(column).hasPrefix("jpeg") || line.dropFirst(column).hasPrefix("apng") || line.dropFirst(column).hasPrefix("svg"), "\(line)")
        }
    }

    @Test func failuresGoToStandardErrorAndTheOthersAreStillListed() throws {
        let run = try Self.run(["info", "Tests/Fixtures/no-such-file.png", "Tests/Fixtures/hopper.gif", "Package.swift", "Tests"])
        #expect(run.status != 0)
        #expect(run.stdout.contains("Tests/Fixtures/hopper.gif"))
        let errors = run.stderr.split(separator: "\n")
        #expect(errors.count == 3)
        #expect(errors.first?.contains("no-such-file.png") == true)
        #expect(run.stderr.contains("Package.swift: not an image format"))
        #expect(!run.stdout.contains("Package.swift"))
    }
}
