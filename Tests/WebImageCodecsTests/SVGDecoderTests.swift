import Foundation
import Testing
import WebImageCodecs
import WebImageCore
import WebImageTestSupport

/// SVG through librsvg: drawn at the size asked for, nothing outside the file read, hostile
/// documents refused with typed errors.
@Suite struct SVGDecoderTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func svg(_ body: String, width: String = "64", height: String = "48", extra: String = "") -> Data {
        Data("""
        <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" \
        xmlns:xi="http://www.w3.org/2001/XInclude" width="\(width)" height="\(height)" \(extra)>\(body)</svg>
        """.utf8)
    }

    static func pixel(_ bitmap: Bitmap, _ x: Int, _ y: Int) -> [UInt8] {
        let offset = y * bitmap.bytesPerRow + x * bitmap.pixelFormat.bytesPerPixel
        return Array(bitmap.pixels[offset..<offset + 4])
    }

    /// The fixture's colours are in its source: a #2a6 square under a #fc3 circle.
    @Test func drawsTheDocumentAtItsOwnSize() throws {
        let data = try Data(contentsOf: Self.repository.appendingPathComponent("Tests/Fixtures/shapes.svg"))
        let image = try CoderRegistry.system().decode(data)
        #expect(image.format == .svg)
        #expect(image.image.width == 64 && image.image.height == 48)
        #expect(Self.pixel(image.image, 2, 2) == [0x22, 0xAA, 0x66, 255])
        #expect(Self.pixel(image.image, 32, 24) == [0xFF, 0xCC, 0x33, 255])
        // A vector thumbnail larger than the document is drawn at that size.
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(128)
        let large = try CoderRegistry.system().decode(data, options: options).image
        #expect(large.width == 128 && large.height == 96)
        #expect(Self.pixel(large, 64, 48) == [0xFF, 0xCC, 0x33, 255])
    }

    /// A 2,000 × 1,000 checkerboard whose squares (37 units, 4.736 px at 256 px) fall between
    /// pixels, asked for as a 256 px thumbnail, equals what librsvg's own `rsvg-convert -w 256`
    /// draws at that size, within 2 per channel. Drawn at 2,000 px and resampled, every edge
    /// would ring and blur differently.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/rsvg-convert"), "rsvg-convert is not installed (make deps)"))
    func aThumbnailIsDrawnAtItsOwnSize() throws {
        var squares = #"<rect width="2000" height="1000" fill="white"/>"#
        for row in 0..<28 {
            for column in 0..<55 where (row + column) % 2 == 0 {
                squares += ##"<rect x="\##(column * 37)" y="\##(row * 37)" width="37" height="37" fill="#203040"/>"##
            }
        }
        let data = Self.svg(squares, width: "2000", height: "1000")
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(256)
        let image = try CoderRegistry.system().decode(data, options: options).image
        #expect(image.width == 256 && image.height == 128)

        let folder = TemporaryDirectory("svg-reference")
        defer { folder.remove() }
        let input = folder.url.appendingPathComponent("board.svg"), output = folder.url.appendingPathComponent("board.png")
        try data.write(to: input)
        let run = try CommandRun(URL(fileURLWithPath: "/usr/bin/rsvg-convert"), ["-w", "256", "-h", "128", "-f", "png", "-o", output.path, input.path])
        #expect(run.status == 0, "\(run.stderr)")
        let reference = try CoderRegistry.system().decode(try Data(contentsOf: output)).image
        #expect(reference.width == 256 && reference.height == 128)
        var largest = 0
        for y in 0..<128 {
            for x in 0..<256 {
                let ours = Self.pixel(image, x, y), theirs = Self.pixel(reference, x, y)
                for channel in 0..<3 { largest = max(largest, abs(Int(ours[channel]) - Int(theirs[channel]))) }
            }
        }
        #expect(largest <= 2, "differs from rsvg-convert by \(largest)")
    }

    /// Width and height in percent (or none): the `viewBox` gives the size; neither: 300 × 150.
    @Test func theViewBoxOrTheBrowserDefaultGivesTheSize() throws {
        let viewBox = Self.svg(#"<rect width="40" height="30" fill="red"/>"#, width: "100%", height: "100%", extra: #"viewBox="0 0 40 30""#)
        #expect(try CoderRegistry.system().decode(viewBox).image.width == 40)
        let none = Data(#"<svg xmlns="http://www.w3.org/2000/svg"><rect width="10" height="10"/></svg>"#.utf8)
        let image = try CoderRegistry.system().decode(none).image
        #expect(image.width == 300 && image.height == 150)
    }

    /// A file on disk, a loopback URL and an `xi:include` are referenced; none is read. The
    /// red file must not show, and the origin must see no request.
    @Test func nothingOutsideTheFileIsRead() async throws {
        let folder = TemporaryDirectory("svg-external")
        defer { folder.remove() }
        let red = try CoderRegistry.system().encode(
            ImageContainer(image: try Bitmap(width: 8, height: 8, pixelFormat: .rgba8, pixels: Array(Array(repeating: [255, 0, 0, 255] as [UInt8], count: 64).joined()))),
            as: .png)
        try red.write(to: folder.url.appendingPathComponent("red.png"))
        // One red rectangle, named for the `<use>` below: drawn by either reference, it covers
        // every point sampled.
        try Data(#"<rect xmlns="http://www.w3.org/2000/svg" id="r" width="64" height="48" fill="red"/>"#.utf8)
            .write(to: folder.url.appendingPathComponent("red.svg"))
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        origin.register("/red.png", data: red)
        let data = Self.svg("""
            <rect width="64" height="48" fill="white"/>
            <image href="file://\(folder.path)/red.png" x="0" y="0" width="32" height="48"/>
            <image xlink:href="\(origin.baseURL.absoluteString)/red.png" x="32" y="0" width="32" height="48"/>
            <xi:include href="file://\(folder.path)/red.svg"/>
            <use href="file://\(folder.path)/red.svg#r"/>
            """)
        let image = try CoderRegistry.system().decode(data).image
        for (x, y) in [(8, 8), (16, 24), (40, 24), (60, 40)] {
            #expect(Self.pixel(image, x, y) == [255, 255, 255, 255], "(\(x), \(y))")
        }
        #expect(origin.requestCount(path: "/red.png") == 0)
    }

    /// A billion-laughs document fails on libxml2's entity limits, and a 100,000 × 100,000
    /// canvas on the pixel limit, before anything is drawn.
    @Test(.timeLimit(.minutes(10 * Sanitizers.slowdown))) func entityBombsAndHugeCanvasesAreRefused() throws {
        var entities = #"<!ENTITY a0 "lollollollollollollollollollol">"#
        for level in 1...9 { entities += "<!ENTITY a\(level) \"" + String(repeating: "&a\(level - 1);", count: 10) + "\">" }
        let bomb = Data(("<?xml version=\"1.0\"?><!DOCTYPE svg [\(entities)]>" + String(decoding: Self.svg("<text y=\"20\">&a9;</text>"), as: UTF8.self)).utf8)
        #expect {
            try CoderRegistry.system().decode(bomb)
        } throws: { error in
            guard case .corruptData = error as? ImageError else { return false }
            return true
        }

        let huge = Self.svg(#"<rect width="100" height="100"/>"#, width: "100000", height: "100000")
        #expect {
            try CoderRegistry.system().decode(huge)
        } throws: { error in
            guard case .tooLarge = error as? ImageError else { return false }
            return true
        }
    }

    /// Cut at every twentieth of its length, the fixture gives a typed error or an image.
    @Test func truncationsAreTypedErrors() throws {
        let data = try Data(contentsOf: Self.repository.appendingPathComponent("Tests/Fixtures/shapes.svg"))
        for twentieth in 1..<20 {
            let cut = data.prefix(data.count * twentieth / 20)
            do {
                let image = try CoderRegistry.system().decode(cut).image
                #expect(image.width * image.height <= 64 * 48 * 4)
            } catch is ImageError {
            } catch {
                Issue.record("cut at \(cut.count): \(error)")
            }
        }
    }
}
