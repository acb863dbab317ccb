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
        try CommandRun(try #require(WebImageExecutable.url), arguments, in: TestFiles.repositoryRoot)
    }

    /// Fixtures copied from the corpus's undecodable files: they sniff, but do not decode.
    static let undecodable: Set = ["broken.png", "decompression_bomb.gif", "zero_width.gif"]

    @Test func undecodableFilesAreErrorsOnStandardError() throws {
        let run = try Self.run(["info"] + Self.undecodable.sorted().map { "Tests/Fixtures/\($0)" })
        #expect(run.status != 0)
        #expect(run.stdout.isEmpty)
        let errors = run.stderr.split(separator: "\n")
        #expect(errors.count == Self.undecodable.count)
        #expect(errors.allSatisfy { $0.contains("does not decode") }, "\(run.stderr)")
    }

    @Test func jsonLinesCarryTheHeaderAndDecodedFacts() throws {
        let names = try TestFiles.fixtureImageNames().filter { !Self.undecodable.contains($0) }
        let run = try Self.run(["info", "--json"] + names.map { "Tests/Fixtures/\($0)" })
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == names.count)
        for (name, line) in zip(names, lines) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let data = try TestFiles.fixture(name)
            let header = try #require(ImageHeader(sniffing: data))
            #expect(object["file"] as? String == "Tests/Fixtures/\(name)")
            #expect(object["format"] as? String == header.format.rawValue)
            #expect(object["mime"] as? String == header.format.mimeType)
            #expect(object["bytes"] as? Int == data.count)
            // A file that decodes reports decoded facts: its size after orientation (the header's,
            // or swapped for orientations 5–8), the stored orientation, frames, durations, and a
            // loop count for animations. Other formats report what their header gives.
            var expectedKeys: Set = ["file", "format", "mime", "bytes"]
            if let frames = object["frames"] as? Int {
                let orientation = try #require(object["orientation"] as? Int)
                let swaps = try #require(ImageOrientation(exifValue: orientation)).swapsDimensions
                #expect(object["width"] as? Int == (swaps ? header.pixelHeight : header.pixelWidth), "\(name)")
                #expect(object["height"] as? Int == (swaps ? header.pixelWidth : header.pixelHeight), "\(name)")
                let durations = try #require(object["durations"] as? [Int])
                #expect(frames >= 1 && durations.count == (frames > 1 ? frames : 0), "\(name)")
                expectedKeys.formUnion(["width", "height", "orientation", "frames", "durations"])
                if frames > 1 { expectedKeys.insert("loopCount") }
            } else {
                #expect(object["width"] as? Int == header.pixelWidth, "\(name)")
                #expect(object["height"] as? Int == header.pixelHeight, "\(name)")
                if header.pixelWidth != nil { expectedKeys.formUnion(["width", "height"]) }
            }
            // Unknown values are left out, not null.
            #expect(Set(object.keys) == expectedKeys, "\(name)")
        }
        // Keys in a fixed order, so that the output is stable from run to run.
        #expect(lines.first?.hasPrefix(#"{"file":"#) == true)
    }

    @Test func tableIsAlignedWithAHeaderLine() throws {
        let run = try Self.run(["info", "Tests/Fixtures/hopper.jpg", "Tests/Fixtures/apng-delay.png", "Tests/Fixtures/shapes.svg"])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines.first?.hasPrefix("FILE") == true)
        #expect(lines[1].contains("jpeg") && lines[1].contains("image/jpeg") && lines[1].contains("6412") && lines[1].contains("128×128"))
        #expect(lines[2].contains("apng") && lines[2].contains("128×64"))
        #expect(lines[3].contains("svg") && lines[3].hasSuffix("-"), "no dimensions for SVG")
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
