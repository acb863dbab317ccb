import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// PDF pages drawn by the `webimage render-pdf` child (``RenderProcess``): what this process
/// draws, pixel for pixel, and a page that would draw for hours (forms that each draw the next
/// twice, 2^28 rectangles from a 4 KB document) stopped past the time limit or when the caller
/// leaves. Poppler's GLib interface cannot interrupt a render, so only the child bounds its time.
// Serialized: the cancellation test tells its renderer child from others by /proc alone.
@Suite(.serialized, .timeLimit(.minutes(2 * Sanitizers.slowdown))) struct PDFRenderLimitTests {
    /// A page whose drawing doubles with every form: `depth` forms, each drawing the next twice,
    /// the last a square. At 18 forms pdftocairo takes 4 s; at 28, over an hour.
    static func formBomb(depth: Int) -> Data {
        var pdf = PDFBuilder()
        let square = "0.5 0 0 rg 10 10 20 20 re f\n"
        var form = pdf.addStream("/Type /XObject /Subtype /Form /BBox [0 0 100 100]", Data(square.utf8))
        for _ in 0..<depth {
            form = pdf.addStream("/Type /XObject /Subtype /Form /BBox [0 0 100 100] /Resources << /XObject << /X \(form) 0 R >> >>", Data("/X Do /X Do\n".utf8))
        }
        pdf.addPage(width: 100, height: 100, content: "/X Do\n", resources: "/XObject << /X \(form) 0 R >>")
        return pdf.data()
    }

    static func childRenderer(timeLimit: Duration) throws -> PDFDecoder {
        var process = RenderProcess(executable: try #require(WebImageExecutable.url), arguments: ["render-pdf"])
        process.timeLimit = timeLimit
        return PDFDecoder(renderer: .childProcess(process))
    }

    /// The child draws what this process draws: the natural size, a thumbnail (the scales
    /// travel to the child, so a rounded-up side is not stretched), a transparent page, page 2.
    @Test func theChildDrawsAsThisProcessDoes() throws {
        let decoder = try Self.childRenderer(timeLimit: .seconds(60 * Sanitizers.slowdown))
        let cases: [(Data, ImageDecodingOptions)] = [
            (PDFDecoderTests.letter, PDFDecoderTests.options()),
            (PDFDecoderTests.fractional, PDFDecoderTests.options(thumbnail: .maxPixelSize(300))),
            (PDFDecoderTests.rotated, PDFDecoderTests.options(thumbnail: .size(width: 50, height: 50, contentMode: .fill))),
            (PDFDecoderTests.letter, PDFDecoderTests.options(thumbnail: .size(width: 90, height: 40, contentMode: .stretch), background: false)),
            (PDFBuilder.pages([(100, 50), (60, 80)]), PDFDecoderTests.options(page: 2)),
        ]
        for (data, options) in cases {
            let inProcess = try PDFDecoder().decode(data, options: options).image
            let child = try decoder.decode(data, options: options).image
            #expect(child == inProcess, "\(options)")
        }
    }

    /// The parent refuses what it can before starting a child, with the same errors.
    @Test func theParentChecksFirst() throws {
        let decoder = try Self.childRenderer(timeLimit: .seconds(60 * Sanitizers.slowdown))
        #expect(throws: ImageError.self) { try decoder.decode(PDFBuilder.pages([(1_000_000, 1_000_000)]), options: .init()) }
        #expect(throws: ImageError.self) { try decoder.decode(PDFDecoderTests.letter, options: PDFDecoderTests.options(page: 2)) }
    }

    /// An image that claims 30,000 × 30,000 pixels (its stream holds 64): Poppler would decode it
    /// at that size, 3.6 GB, before drawing it at 50 points. In the child, the allocation fails
    /// at the address-space limit and the image is left out: the page is drawn, at once.
    @Test(.disabled(if: Sanitizers.reservesShadowMemory, "a sanitized child has no address-space limit (its shadow memory is reserved already)"))
    func anImageClaimingGigabytesIsLeftOut() throws {
        var pdf = PDFBuilder()
        let pixels = Data((0..<64).map { UInt8($0 * 4) })
        let image = pdf.addStream("/Type /XObject /Subtype /Image /Width 30000 /Height 30000 /ColorSpace /DeviceGray /BitsPerComponent 8", pixels)
        pdf.addPage(width: 100, height: 100, content: PDFBuilder.rectangle(0, 0, 100, 100, red: 0, green: 0, blue: 1) + "q 50 0 0 50 25 25 cm /I Do Q\n",
                    resources: "/XObject << /I \(image) 0 R >>")
        let decoder = try Self.childRenderer(timeLimit: .seconds(60 * Sanitizers.slowdown))
        let clock = ContinuousClock(), start = clock.now
        let page = try decoder.decode(pdf.data(), options: .init()).image
        #expect(clock.now - start < .seconds(5), "left out at once, not decoded for seconds")
        #expect(page.width == 100 && PDFDecoderTests.rgba(page, 5, 5) == [0, 0, 255, 255])
    }

    /// Past its time limit the child is killed: a typed error, not hours of a core.
    @Test func aRenderPastItsTimeLimitIsStopped() throws {
        let decoder = try Self.childRenderer(timeLimit: .seconds(2))
        #expect(throws: ImageError.timeout("PDF: the renderer took longer than its time limit")) {
            try decoder.decode(Self.formBomb(depth: 28), options: .init())
        }
    }

    /// A caller that leaves stops the render: the executor job's check sees its task cancelled
    /// and kills the child (its time limit, ten minutes, is not what ends it).
    @Test func aRenderWhoseCallerLeftIsStopped() async throws {
        let decoder = try Self.childRenderer(timeLimit: .seconds(600))
        let executor = BlockingExecutor(name: "pdf-test", width: 1)
        defer { executor.shutdown() }
        let bomb = Self.formBomb(depth: 28)
        let render = Task { try await executor.run { try decoder.decode(bomb, options: .init()) } }
        var children: [Int32] = []
        while children.isEmpty {
            await Task.yield()
            children = SVGRenderLimitTests.rendererChildren("render-pdf")
        }
        render.cancel()
        await #expect(throws: ImageError.cancelled) { _ = try await render.value }
        #expect(Set(SVGRenderLimitTests.rendererChildren("render-pdf")).isDisjoint(with: children), "the child was killed and reaped")
    }
}
