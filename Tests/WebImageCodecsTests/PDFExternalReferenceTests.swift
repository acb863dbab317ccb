import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// Poppler reads nothing beyond the bytes it is given: a document that names a loopback URL and a
/// file in every way PDF can (a `/URI` link and an `/OpenAction` JavaScript `launchURL`, a
/// `/Launch` action, a `/GoToR` to the file, an image XObject and an embedded font file whose
/// streams say `/F (path)`, PDF's external stream data) is drawn, the origin sees no request, and
/// an inotify watch on the file sees it neither opened nor read.
@Suite struct PDFExternalReferenceTests {
    /// Opens and reads of one file, seen through inotify.
    final class FileWatch {
        private let descriptor: Int32

        init(_ path: String) throws {
            descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard descriptor >= 0, inotify_add_watch(descriptor, path, UInt32(IN_OPEN | IN_ACCESS)) >= 0 else {
                throw ImageError.corruptData("inotify: errno \(errno)")
            }
        }

        deinit {
            close(descriptor)
        }

        /// Whether the file was opened or read since the watch began (or since the last call).
        var sawEvents: Bool {
            var buffer = [UInt8](repeating: 0, count: 4096)
            var saw = false
            while read(descriptor, &buffer, buffer.count) > 0 { saw = true }
            return saw
        }
    }

    static func document(file: String, url: String) -> Data {
        var pdf = PDFBuilder()
        let image = pdf.add("<< /Type /XObject /Subtype /Image /Width 8 /Height 8 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Length 0 /F (\(file)) >>\nstream\n\nendstream")
        let fontFile = pdf.add("<< /Length 0 /F << /Type /Filespec /F (\(file)) /UF (\(file)) >> >>\nstream\n\nendstream")
        let descriptor = pdf.add("<< /Type /FontDescriptor /FontName /External /Flags 32 /FontBBox [0 0 1000 1000] /ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 /FontFile2 \(fontFile) 0 R >>")
        let widths = Array(repeating: "500", count: 95).joined(separator: " ")
        let font = pdf.add("<< /Type /Font /Subtype /TrueType /BaseFont /External /FirstChar 32 /LastChar 126 /Widths [\(widths)] /FontDescriptor \(descriptor) 0 R >>")
        let annotations = """
            [<< /Type /Annot /Subtype /Link /Rect [0 0 100 100] /A << /S /URI /URI (\(url)) >> >> \
            << /Type /Annot /Subtype /Link /Rect [0 0 50 50] /A << /S /Launch /F (\(file)) >> >> \
            << /Type /Annot /Subtype /Link /Rect [50 0 100 50] /A << /S /GoToR /F (\(file)) /D [0 /Fit] >> >>]
            """
        pdf.addPage(
            width: 200, height: 100,
            content: PDFBuilder.rectangle(0, 0, 200, 100, red: 0, green: 0, blue: 1) + "q 50 0 0 50 10 10 cm /Im1 Do Q\nBT /F2 24 Tf 1 0 0 1 10 60 Tm (Hello) Tj ET\n",
            resources: "/XObject << /Im1 \(image) 0 R >> /Font << /F2 \(font) 0 R >>",
            entries: "/Annots \(annotations)")
        pdf.catalogEntries = "/OpenAction << /S /Launch /F (\(file)) /Next << /S /JavaScript /JS (app.launchURL\\(\"\(url)\"\\);) >> >>"
        return pdf.data()
    }

    @Test func nothingOutsideTheBytesIsRead() async throws {
        let folder = TemporaryDirectory("pdf-external")
        defer { folder.remove() }
        let file = folder.url.appendingPathComponent("secret.bin")
        try Data(repeating: 0xFF, count: 192).write(to: file)
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        origin.register("/red.png", data: Data(repeating: 0, count: 16))
        let watch = try FileWatch(file.path)
        let data = Self.document(file: file.path, url: origin.url("/red.png").absoluteString)

        let image = try PDFDecoder().decode(data, options: .init()).image
        #expect(image.width == 200 && image.height == 100)
        #expect(PDFDecoderTests.rgba(image, 190, 50) == [0, 0, 255, 255], "the page is drawn")
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(64)
        _ = try PDFDecoder().decode(data, options: options)
        _ = try PDFDecoder.probe(data, options: .init())

        #expect(origin.allRequests.isEmpty, "the origin saw \(origin.allRequests.map(\.uri))")
        #expect(!watch.sawEvents, "the file was opened or read")
        // The watch itself works: reading the file is seen.
        _ = try Data(contentsOf: file)
        #expect(watch.sawEvents)
    }
}
