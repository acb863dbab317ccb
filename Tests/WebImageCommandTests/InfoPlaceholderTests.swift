import Foundation
import Testing
import WebImageCodecs
import WebImageCore
import WebImageTestSupport

/// `webimage info`'s placeholder columns (issue 30): the ThumbHash, the 4×3 BlurHash and the
/// dominant colour, in `--json` and in the table, run as the built executable.
@Suite(.enabled(if: WebImageExecutable.url != nil, "the webimage executable was not built beside the tests"))
struct InfoPlaceholderTests {
    /// The `info --json` objects for `paths`, in order.
    static func info(_ paths: [String]) throws -> [[String: Any]] {
        let run = try InfoCommandTests.run(["info", "--json"] + paths)
        #expect(run.status == 0, "\(run.stderr)")
        return try run.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// Whether a ThumbHash's aspect ratio is the one of a `width` × `height` image: ThumbHash
    /// stores the shorter side as a whole count out of 7 (5 with alpha) of the longer, so the
    /// shorter-to-longer ratio is within 0.1, plus a little for the reductions' rounding; and
    /// the longer side is the same one, unless the image is nearly square.
    static func aspectMatches(_ hash: ThumbHash, width: Int, height: Int) -> Bool {
        let expected = Double(width) / Double(height)
        let shortToLong = { (ratio: Double) in min(ratio, 1 / ratio) }
        guard abs(shortToLong(hash.aspectRatio) - shortToLong(expected)) <= 0.12 else { return false }
        return abs(expected - 1) < 0.25 || (hash.aspectRatio > 1) == (expected > 1)
    }

    /// Every fixture that decodes has all three, well-formed; each ThumbHash has the image's
    /// aspect ratio as displayed (its EXIF, `irot` or JPEG XL orientation applied).
    @Test func everyDecodableFixtureHasTheThreeFields() throws {
        let names = try Fixture.imageNames()
        let objects = try Self.info(names.map { "Tests/Fixtures/\($0)" })
        try #require(objects.count == names.count)
        var checked = 0
        for (name, object) in zip(names, objects) {
            // The colour facts and the placeholders come from the same decode: both or neither.
            #expect((object["thumbHash"] != nil) == (object["convertsToSRGB"] != nil), "\(name)")
            guard let thumbHash = object["thumbHash"] as? String else { continue }
            let hash = try ThumbHash(thumbHash)
            let blurHash = try BlurHash(try #require(object["blurHash"] as? String, "\(name)"))
            #expect(blurHash.components == BlurHash.Components(x: 4, y: 3), "\(name)")
            let colour = try #require(object["dominantColor"] as? String, "\(name)")
            #expect(colour.range(of: "^#[0-9a-f]{6}$", options: .regularExpression) != nil, "\(name): \(colour)")
            if let width = object["width"] as? Int, let height = object["height"] as? Int {
                #expect(Self.aspectMatches(hash, width: width, height: height), "\(name): \(hash.aspectRatio) for \(width)×\(height)")
                checked += 1
            }
        }
        // Every format's fixtures decode here: most of them are checked.
        #expect(checked > names.count / 2, "\(checked) of \(names.count)")
    }

    /// A 64×32 JPEG stored with EXIF orientation 6 (turn 90° clockwise to view) is 32×64 as
    /// displayed: the dimensions say so, and so does the ThumbHash, made from the upright
    /// pixels (a hash of the stored ones would be landscape).
    @Test func theThumbHashIsOfTheUprightImage() throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        var pixels: [UInt8] = []
        for y in 0..<32 {
            for x in 0..<64 { pixels += [UInt8(x * 4), UInt8(y * 8), 128] }
        }
        let bitmap = try Bitmap(width: 64, height: 32, pixelFormat: .rgb8, pixels: pixels)
        let jpeg = try CoderRegistry.system().encode(ImageContainer(image: bitmap), as: .jpeg, options: ImageEncodingOptions())
        let path = folder.url.appendingPathComponent("turned.jpg").path
        try JPEGMarkers.insertingOrientation(6, into: jpeg).write(to: URL(fileURLWithPath: path))

        let object = try #require(try Self.info([path]).first)
        #expect(object["orientation"] as? Int == 6)
        #expect(object["width"] as? Int == 32 && object["height"] as? Int == 64)
        let hash = try ThumbHash(try #require(object["thumbHash"] as? String))
        #expect(hash.aspectRatio < 1, "\(hash.aspectRatio)")
        #expect(Self.aspectMatches(hash, width: 32, height: 64), "\(hash.aspectRatio)")
    }

    /// A solid-colour PNG (lossless: every pixel is exactly the colour) has that colour as its
    /// dominant colour, exactly; the table shows the same three values as `--json`.
    @Test func theDominantColourOfASolidImageIsExact() throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let colour: [UInt8] = [0x3C, 0x8A, 0xD2]
        let bitmap = try Bitmap(width: 48, height: 30, pixelFormat: .rgb8, pixels: Array((0..<(48 * 30)).map { _ in colour }.joined()))
        let png = try CoderRegistry.system().encode(ImageContainer(image: bitmap), as: .png, options: ImageEncodingOptions())
        let path = folder.url.appendingPathComponent("solid.png").path
        try png.write(to: URL(fileURLWithPath: path))

        let object = try #require(try Self.info([path]).first)
        #expect(object["dominantColor"] as? String == "#3c8ad2")
        let thumbHash = try #require(object["thumbHash"] as? String)
        let blurHash = try #require(object["blurHash"] as? String)
        #expect(try ThumbHash(thumbHash).hasAlpha == false)

        let table = try InfoCommandTests.run(["info", path])
        #expect(table.status == 0, "\(table.stderr)")
        let lines = table.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 2)
        for column in ["DOMINANT", "THUMBHASH", "BLURHASH"] { #expect(lines[0].contains(column), "\(column)") }
        for value in ["#3c8ad2", thumbHash, blurHash] { #expect(lines[1].contains(value), "\(value)") }
    }
}
