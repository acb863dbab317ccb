import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// PDF pages through Poppler: drawn as `pdftocairo` draws them, at the size asked for, nothing
/// outside the file read, hostile documents refused with typed errors.
///
/// Tolerance against pdftocairo: at most 2 per channel and a mean difference of at most 0.1 (of
/// 255). The same library draws both with the same cairo calls (a display render, the page
/// background painted under the drawing), so the pixels are expected to be equal, as they were
/// when the comparison was written; the margin only keeps a change of antialiasing between
/// builds from failing the test.
@Suite struct PDFDecoderTests {
    static let pdftocairo = URL(fileURLWithPath: "/usr/bin/pdftocairo")
    static let hasPdftocairo = Requirement.met(FileManager.default.isExecutableFile(atPath: "/usr/bin/pdftocairo"))

    // MARK: Documents

    /// A US Letter page: a red and a blue quarter, a line at fractional coordinates, and text in
    /// Helvetica (antialiased edges of every kind).
    static let letter: Data = {
        var pdf = PDFBuilder()
        pdf.addPage(width: 612, height: 792, content: PDFBuilder.rectangle(0, 0, 306, 396, red: 1, green: 0, blue: 0)
            + PDFBuilder.rectangle(306, 396, 306, 396, red: 0, green: 0, blue: 1)
            + "0 0.5 0 RG 1.5 w 10.3 10.7 m 600.2 780.9 l S\n"
            + PDFBuilder.text("Hello PDF (page 1)", x: 72, y: 600, size: 48))
        return pdf.data()
    }()

    /// A page of fractional size: 200.5 × 100.25 points, 201 × 101 pixels.
    static let fractional: Data = {
        var pdf = PDFBuilder()
        pdf.addPage(width: 200.5, height: 100.25, content: PDFBuilder.rectangle(10.25, 10.5, 50.5, 50.5, red: 0, green: 0.5, blue: 0)
            + PDFBuilder.text("Fraction", x: 70, y: 40, size: 20))
        return pdf.data()
    }()

    /// A 200 × 100 page turned by `/Rotate 90`: shown 100 × 200, its red square (bottom left
    /// as written) at the top left.
    static let rotated: Data = {
        var pdf = PDFBuilder()
        pdf.addPage(width: 200, height: 100, content: PDFBuilder.rectangle(0, 0, 50, 50, red: 1, green: 0, blue: 0)
            + PDFBuilder.text("Rotated", x: 60, y: 40, size: 24), entries: "/Rotate 90")
        return pdf.data()
    }()

    /// A 300 × 300 media box cropped to 200 × 150 (`/CropBox [50 50 250 200]`).
    static let cropped: Data = {
        var pdf = PDFBuilder()
        pdf.addPage(width: 300, height: 300, content: PDFBuilder.rectangle(0, 0, 300, 300, red: 1, green: 1, blue: 0)
            + PDFBuilder.rectangle(40, 40, 100, 100, red: 0, green: 0, blue: 1)
            + PDFBuilder.text("Cropped", x: 60, y: 170, size: 20), entries: "/CropBox [50 50 250 200]")
        return pdf.data()
    }()

    // MARK: Helpers

    /// The pixel at (`x`, `y`) as R, G, B, A, whatever the bitmap's 8-bit channels.
    static func rgba(_ bitmap: Bitmap, _ x: Int, _ y: Int) -> [Int] {
        let offset = y * bitmap.bytesPerRow + x * bitmap.pixelFormat.bytesPerPixel
        let value = { (index: Int) in Int(bitmap.pixels[offset + index]) }
        switch bitmap.pixelFormat.bytesPerPixel {
        case 1: return [value(0), value(0), value(0), 255]
        case 2: return [value(0), value(0), value(0), value(1)]
        case 3: return [value(0), value(1), value(2), 255]
        default: return [value(0), value(1), value(2), value(3)]
        }
    }

    /// The largest and the mean difference of any channel (alpha too when `alpha`).
    static func difference(_ a: Bitmap, _ b: Bitmap, alpha: Bool = false) -> (largest: Int, mean: Double) {
        var largest = 0, total = 0
        let channels = alpha ? 4 : 3
        for y in 0..<a.height {
            for x in 0..<a.width {
                let p = rgba(a, x, y), q = rgba(b, x, y)
                for channel in 0..<channels {
                    let delta = abs(p[channel] - q[channel])
                    largest = max(largest, delta)
                    total += delta
                }
            }
        }
        return (largest, Double(total) / Double(a.width * a.height * channels))
    }

    /// `pdf` drawn by `pdftocairo -png -singlefile` with `arguments`, decoded.
    static func reference(_ pdf: Data, _ arguments: [String]) throws -> Bitmap {
        let folder = TemporaryDirectory("pdf-reference")
        defer { folder.remove() }
        let input = folder.url.appendingPathComponent("page.pdf"), output = folder.url.appendingPathComponent("page")
        try pdf.write(to: input)
        let run = try CommandRun(pdftocairo, ["-png", "-singlefile"] + arguments + [input.path, output.path])
        #expect(run.status == 0, "\(run.stderr)")
        return try CoderRegistry.system().decode(Data(contentsOf: output.appendingPathExtension("png"))).image
    }

    static func options(page: Int = 1, thumbnail: ImageDecodingOptions.Thumbnail? = nil, background: Bool = true) -> ImageDecodingOptions {
        var options = ImageDecodingOptions()
        options.page = page
        options.thumbnail = thumbnail
        options.drawsPageBackground = background
        return options
    }

    static func expectError(_ data: Data, _ options: ImageDecodingOptions = .init(), _ matches: @escaping (ImageError) -> Bool) {
        #expect {
            try PDFDecoder().decode(data, options: options)
        } throws: { error in
            guard let error = error as? ImageError else { return false }
            return matches(error)
        }
    }

    // MARK: Against pdftocairo

    /// At its natural size a page is what `pdftocairo -r 72` draws, size and pixels: a letter
    /// page with text, a fractional size (rounded up), a `/Rotate 90` page (turned), and a
    /// cropped page (its crop box, as `pdftocairo -cropbox` draws it; pdftocairo's default is the
    /// media box, where a viewer shows the crop box).
    @Test(.enabled(if: hasPdftocairo, "pdftocairo is not installed (make deps)"), arguments: [
        ("letter", 612, 792), ("fractional", 201, 101), ("rotated", 100, 200), ("cropped", 200, 150),
    ])
    func theNaturalSizeIsPdftocairosAt72DPI(name: String, width: Int, height: Int) throws {
        let documents = ["letter": Self.letter, "fractional": Self.fractional, "rotated": Self.rotated, "cropped": Self.cropped]
        let pdf = try #require(documents[name])
        let image = try PDFDecoder().decode(pdf, options: .init()).image
        #expect(image.width == width && image.height == height)
        let reference = try Self.reference(pdf, ["-r", "72"] + (name == "cropped" ? ["-cropbox"] : []))
        #expect(reference.width == width && reference.height == height)
        let (largest, mean) = Self.difference(image, reference)
        #expect(largest <= 2 && mean <= 0.1, "\(name): differs from pdftocairo by \(largest) at most, \(mean) on average")
    }

    /// A 300 px thumbnail is drawn at 300 px, as `pdftocairo -scale-to 300` draws it (one scale
    /// for both sides, each rounded up: a letter page is 232 × 300), never drawn at 612 × 792
    /// and shrunk. The rotated page is drawn larger than its natural size: a vector page is
    /// sharp at any size.
    @Test(.enabled(if: hasPdftocairo, "pdftocairo is not installed (make deps)"), arguments: [("letter", 232, 300), ("rotated", 150, 300)])
    func aThumbnailIsPdftocairosScaleTo(name: String, width: Int, height: Int) throws {
        let pdf = name == "letter" ? Self.letter : Self.rotated
        let image = try PDFDecoder().decode(pdf, options: Self.options(thumbnail: .maxPixelSize(300))).image
        #expect(image.width == width && image.height == height)
        let reference = try Self.reference(pdf, ["-scale-to", "300"])
        #expect(reference.width == width && reference.height == height)
        let (largest, mean) = Self.difference(image, reference)
        #expect(largest <= 2 && mean <= 0.1, "\(name): differs from pdftocairo by \(largest) at most, \(mean) on average")
        // Through the registry the size is kept.
        let registry = CoderRegistry(decoders: [PDFDecoder()])
        let finished = try registry.decode(pdf, options: Self.options(thumbnail: .maxPixelSize(300))).image
        #expect(finished.width == width && finished.height == height)
    }

    /// Without the page background what the page does not paint is transparent, as
    /// `pdftocairo -transp` draws it (alpha compared too).
    @Test(.enabled(if: hasPdftocairo, "pdftocairo is not installed (make deps)"))
    func withoutTheBackgroundThePageIsTransparent() throws {
        let image = try PDFDecoder().decode(Self.letter, options: Self.options(background: false)).image
        #expect(Self.rgba(image, 500, 700) == [0, 0, 0, 0], "nothing drawn there")
        #expect(Self.rgba(image, 100, 700) == [255, 0, 0, 255], "the red quarter")
        let reference = try Self.reference(Self.letter, ["-r", "72", "-transp"])
        let (largest, mean) = Self.difference(image, reference, alpha: true)
        #expect(largest <= 2 && mean <= 0.1, "differs from pdftocairo -transp by \(largest) at most, \(mean) on average")
        // With it (the default): white.
        let opaque = try PDFDecoder().decode(Self.letter, options: .init()).image
        #expect(Self.rgba(opaque, 500, 700) == [255, 255, 255, 255])
    }

    /// Every size a thumbnail may ask: fit and fill use one scale, stretch fills the box.
    @Test func thumbnailBoxes() throws {
        let cases: [(ImageDecodingOptions.Thumbnail, Int, Int)] = [
            (.size(width: 100, height: 100, contentMode: .fit), 78, 100),
            (.size(width: 100, height: 100, contentMode: .fill), 100, 130),
            (.size(width: 100, height: 50, contentMode: .stretch), 100, 50),
            (.maxPixelSize(1000), 773, 1000),
        ]
        for (thumbnail, width, height) in cases {
            let image = try PDFDecoder().decode(Self.letter, options: Self.options(thumbnail: thumbnail)).image
            #expect(image.width == width && image.height == height, "\(thumbnail)")
            // (250, 50) in points: in the red quarter, away from the line and the text.
            let x = Int(Double(width) * 250 / 612), y = Int(Double(height) * (1 - 50 / 792))
            #expect(Self.rgba(image, x, y) == [255, 0, 0, 255], "\(thumbnail): the red quarter at the bottom left")
        }
    }

    // MARK: Pages

    /// Page 2 of 3 is drawn at its own size, with its own colour; the probe tells the count and
    /// the page's size; a page the document does not have is a typed error.
    @Test func aPageOtherThanTheFirst() throws {
        let pdf = PDFBuilder.pages([(100, 50), (60, 80), (30, 30)])
        let second = try PDFDecoder().decode(pdf, options: Self.options(page: 2)).image
        #expect(second.width == 60 && second.height == 80)
        #expect(Self.rgba(second, 30, 40) == [0, 255, 0, 255])
        let third = try PDFDecoder().decode(pdf, options: Self.options(page: 3)).image
        #expect(third.width == 30 && Self.rgba(third, 20, 10) == [0, 0, 255, 255])
        #expect(Self.rgba(try PDFDecoder().decode(pdf, options: .init()).image, 50, 25) == [255, 0, 0, 255])

        let info = try PDFDecoder.probe(pdf, options: Self.options(page: 2))
        #expect(info == PDFInfo(pageCount: 3, page: 2, width: 60, height: 80))
        for page in [0, 4, -1] {
            Self.expectError(pdf, Self.options(page: page)) { error in
                guard case .corruptData(let message) = error else { return false }
                return message.contains("no page \(page)") && message.contains("3 pages")
            }
        }
    }

    /// More pages than ``ImageDecodingOptions/maximumPageCount`` is `.tooLarge`, for the probe
    /// too; at the limit the page is drawn.
    @Test func thePageCountIsLimited() throws {
        let pdf = PDFBuilder.pages(Array(repeating: (width: 20.0, height: 20.0), count: 20))
        var options = ImageDecodingOptions()
        options.maximumPageCount = 19
        Self.expectError(pdf, options) { error in
            guard case .tooLarge(let message) = error else { return false }
            return message.contains("20 pages")
        }
        #expect(throws: ImageError.self) { try PDFDecoder.probe(pdf, options: options) }
        options.maximumPageCount = 20
        options.page = 20
        #expect(try PDFDecoder().decode(pdf, options: options).image.width == 20)
        #expect(try PDFDecoder.probe(pdf, options: options).pageCount == 20)
    }

    // MARK: Hostile documents

    /// A 1,000,000 pt square page is refused from its size alone, thumbnail or not, before
    /// anything is drawn; so is a page within PDF's 14,400 pt whose natural size is over the
    /// pixel limit, and a thumbnail larger than the limit.
    @Test(.timeLimit(.minutes(1))) func hugePagesAreRefusedBeforeDrawing() throws {
        for (side, thumbnail) in [(1_000_000.0, nil), (1_000_000, .maxPixelSize(64)), (14_000, nil)] as [(Double, ImageDecodingOptions.Thumbnail?)] {
            let pdf = PDFBuilder.pages([(side, side)])
            Self.expectError(pdf, Self.options(thumbnail: thumbnail)) { error in
                guard case .tooLarge = error else { return false }
                return true
            }
        }
        var options = Self.options(thumbnail: .maxPixelSize(2000))
        options.maximumPixelCount = 1_000_000
        Self.expectError(Self.letter, options) { error in
            guard case .tooLarge(let message) = error else { return false }
            return message.contains("1546×2000")
        }
    }

    /// A document that needs a password is `.unsupportedFormat`, saying so: an `/Encrypt`
    /// dictionary (RC4, revision 2) whose `/U` no empty password matches.
    @Test func encryptedDocumentsAreUnsupported() throws {
        var pdf = PDFBuilder()
        pdf.addPage(width: 100, height: 100, content: PDFBuilder.rectangle(0, 0, 50, 50, red: 1, green: 0, blue: 0))
        let encrypt = pdf.add("<< /Filter /Standard /V 1 /R 2 /O <\(String(repeating: "11", count: 32))> /U <\(String(repeating: "22", count: 32))> /P -4 >>")
        let id = String(repeating: "ab", count: 16)
        let data = pdf.data(trailerEntries: "/Encrypt \(encrypt) 0 R /ID [<\(id)> <\(id)>]")
        Self.expectError(data) { error in
            guard case .unsupportedFormat(let message) = error else { return false }
            return message.hasPrefix("PDF: encrypted")
        }
        #expect(throws: ImageError.self) { try PDFDecoder.probe(data, options: .init()) }
    }

    /// Cut at every twentieth of its length, a document gives a typed error or a page (Poppler
    /// rebuilds a damaged cross-reference table from what is left).
    @Test func truncationsAreTypedErrors() throws {
        for twentieth in 0..<20 {
            let cut = Self.letter.prefix(Self.letter.count * twentieth / 20)
            do {
                let image = try PDFDecoder().decode(cut, options: Self.options(thumbnail: .maxPixelSize(64))).image
                #expect(image.width <= 64 && image.height <= 64)
            } catch is ImageError {
            } catch {
                Issue.record("cut at \(cut.count): \(error)")
            }
        }
        Self.expectError(Data("%PDF-1.7\n".utf8)) { _ in true }
    }
}
