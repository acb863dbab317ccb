import Foundation
import Testing
import WebImageTestSupport

/// `webimage info`'s bit depth and colour columns, held to what the formats' own tools read from
/// the same files: exiftool for ICC profile descriptions, H.273 code points and bit depths, and
/// djxl for the profile of a JPEG XL's decoded pixels (exiftool cannot read JPEG XL's
/// compressed profile).
@Suite(.enabled(if: WebImageExecutable.url != nil, "the webimage executable was not built beside the tests"))
struct InfoColourTests {
    static let colour = "Tests/Fixtures/color"

    /// The `info --json` objects for `paths`, in order.
    static func info(_ paths: [String]) throws -> [[String: Any]] {
        let run = try InfoCommandTests.run(["info", "--json"] + paths)
        #expect(run.status == 0, "\(run.stderr)")
        return try run.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// exiftool's values of `tag` for the file at `path` (relative to the repository), every
    /// occurrence (`-a`), as it prints them (`-s3`), or numerically with `numeric`.
    static func exiftool(_ tag: String, _ path: String, numeric: Bool = false) throws -> [String] {
        let run = try CommandRun(URL(fileURLWithPath: "/usr/bin/env"), ["exiftool", "-s3", "-a"] + (numeric ? ["-n"] : []) + ["-" + tag, path],
                                 in: Fixture.repository)
        try #require(run.status == 0, "exiftool: \(run.stderr)")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    @Test("an embedded profile is named by its description, as exiftool reads it (djxl's for JPEG XL), and converts")
    func embeddedProfilesAreNamed() throws {
        let files = ["gradient-adobergb.jpg", "gradient-adobergb.png", "gradient-adobergb.avif", "gradient-cmyk.jpg",
                     "gradient-gray-linear.jpg", "gradient-prophoto.heic", "gradient-widegamut.webp", "swapped-green.png"]
        let objects = try Self.info(files.map { "\(Self.colour)/\($0)" })
        try #require(objects.count == files.count)
        for (file, object) in zip(files, objects) {
            // colord's profiles describe themselves in many languages, US English first.
            let expected = try #require(try Self.exiftool("ProfileDescription", "\(Self.colour)/\(file)").first)
            #expect(object["colorProfile"] as? String == expected, "\(file)")
            #expect(object["convertsToSRGB"] as? Bool == true, "\(file)")
        }

        let folder = TemporaryDirectory()
        defer { folder.remove() }
        for file in ["gradient-adobergb.jxl", "gradient-prophoto-alpha.jxl"] {
            let icc = folder.url.appendingPathComponent(file + ".icc")
            let djxl = try CommandRun(URL(fileURLWithPath: "/usr/bin/env"),
                                      ["djxl", "\(Self.colour)/\(file)", folder.url.appendingPathComponent(file + ".png").path, "--icc_out=\(icc.path)"],
                                      in: Fixture.repository)
            try #require(djxl.status == 0, "djxl: \(djxl.stderr)")
            let expected = try #require(try Self.exiftool("ProfileDescription", icc.path).first)
            let object = try #require(try Self.info(["\(Self.colour)/\(file)"]).first)
            #expect(object["colorProfile"] as? String == expected, "\(file)")
            #expect(object["convertsToSRGB"] as? Bool == true, "\(file)")
        }
    }

    @Test("coded colour spaces (AVIF nclx, PNG cICP) are named with the code points exiftool reads")
    func codedColourSpacesAreNamed() throws {
        let files = ["gradient-p3-nclx.avif", "gradient-bt2020-nclx.avif", "gradient-p3-cicp.png"]
        let objects = try Self.info(files.map { "\(Self.colour)/\($0)" })
        try #require(objects.count == files.count)
        for (file, object) in zip(files, objects) {
            let path = "\(Self.colour)/\(file)"
            let primaries = try #require(try Self.exiftool("ColorPrimaries", path, numeric: true).first)
            let transfer = try #require(try Self.exiftool("TransferCharacteristics", path, numeric: true).first)
            let description = try #require(object["colorProfile"] as? String, "\(file)")
            #expect(description.hasSuffix("(coded \(primaries)/\(transfer))"), "\(file): \(description)")
            #expect(object["convertsToSRGB"] as? Bool == true, "\(file)")
        }
        #expect((objects[0]["colorProfile"] as? String)?.hasPrefix("Display P3 primaries, sRGB transfer") == true)
        #expect((objects[1]["colorProfile"] as? String)?.hasPrefix("BT.2020 primaries") == true)
    }

    @Test("sRGB by another name, and no profile at all, convert nothing")
    func sRGBConvertsNothing() throws {
        let objects = try Self.info(["Demo/images/thumb-Kite.jpg", "Tests/Fixtures/hopper.jpg", "Tests/Fixtures/hopper.gif"])
        try #require(objects.count == 3)
        #expect(objects[0]["colorProfile"] as? String == "sRGB IEC61966-2.1")
        #expect(objects[0]["colorProfile"] as? String == (try Self.exiftool("ProfileDescription", "Demo/images/thumb-Kite.jpg").first))
        for object in objects {
            #expect(object["convertsToSRGB"] as? Bool == false, "\(object)")
        }
        #expect(objects[1]["colorProfile"] == nil && objects[2]["colorProfile"] == nil)

        let table = try InfoCommandTests.run(["info", "Demo/images/thumb-Kite.jpg", "\(Self.colour)/gradient-adobergb.png"])
        let lines = table.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 3)
        // The placeholder columns follow the profile's.
        #expect(lines[0].contains("BITS  TO SRGB  COLOUR PROFILE  "), "\(lines[0])")
        #expect(lines[1].contains("8  no       sRGB IEC61966-2.1  "), "\(lines[1])")
        #expect(lines[2].contains("8  yes      Compatible with Adobe RGB (1998)  "), "\(lines[2])")
    }

    @Test("HEIF and AVIF bit depths are the ones exiftool reads from pixi or hvcC")
    func isoBMFFBitDepths() throws {
        let files = ["heic-10bit.heic", "avif-10bit.avif", "avif-12bit-420.avif", "heic-gradient.heic", "heic-grid.heic", "avif-alpha.avif"]
        let objects = try Self.info(files.map { "Tests/Fixtures/\($0)" })
        try #require(objects.count == files.count)
        for (file, object) in zip(files, objects) {
            let path = "Tests/Fixtures/\(file)"
            // pixi's first (the primary item's, listed first) channel depths, else hvcC's luma depth.
            let pixi = try Self.exiftool("ImagePixelDepth", path).first?.split(separator: " ").compactMap { Int($0) }.max()
            let expected = try pixi ?? Self.exiftool("BitDepthLuma", path).first.flatMap { Int($0) }
            #expect(expected != nil, "\(file)")
            #expect(object["bitDepth"] as? Int == expected, "\(file)")
        }
        #expect(objects.map { $0["bitDepth"] as? Int } == [10, 10, 12, 8, 8, 8])
    }
}
