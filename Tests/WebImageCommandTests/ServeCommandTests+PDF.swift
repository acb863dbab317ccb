import Foundation
import Testing
import WebImage
import WebImageTestSupport

extension ServeCommandTests {
    /// `--allow-pdf` (or WEBIMAGE_ALLOW_PDF) lets PDF sources through (a page drawn at the width
    /// asked for, by the `render-pdf` child); without either they are refused with 415.
    @Test(arguments: [(["--allow-pdf"], [String: String](), 200), ([], ["WEBIMAGE_ALLOW_PDF": "1"], 200), ([], [:], 415)])
    func allowPDFFlag(flags: [String], environment: [String: String], status: Int) async throws {
        let (cache, origin) = (TemporaryDirectory("serve-pdf"), TemporaryDirectory("serve-pdf-origin"))
        defer { cache.remove(); origin.remove() }
        try PDFBuilder.pages([(200, 100)]).write(to: origin.url.appendingPathComponent("page.pdf"))
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--log-level", "warning", "--origin-dir", origin.path,
        ] + flags, environment: environment)
        defer { server.terminate() }
        let reply = try await get("http://127.0.0.1:\(try await server.port())/image?url=local%3A%2F%2F%2Fpage.pdf&w=32&format=png")
        #expect(reply.status == status, "\(flags) \(environment)")
        if status == 200 { #expect(try CoderRegistry.system().decode(reply.body).image.width == 32) }
    }

    /// With `--allow-pdf`, a page that would draw for hours (forms that each draw the next
    /// twice) is stopped at the work budget (`503`), a 1,000,000 pt page is refused (`413`), an
    /// encrypted document too (`415`), and the server goes on serving PDF.
    @Test(.timeLimit(.minutes(2 * Deadlines.stretch))) func hostilePDFsAreBoundedByTheServer() async throws {
        let (cache, origin) = (TemporaryDirectory("serve-pdf-bomb"), TemporaryDirectory("serve-pdf-bomb-origin"))
        defer { cache.remove(); origin.remove() }
        try PDFBuilder.pages([(200, 100)]).write(to: origin.url.appendingPathComponent("page.pdf"))
        try PDFBuilder.pages([(1_000_000, 1_000_000)]).write(to: origin.url.appendingPathComponent("huge.pdf"))
        var bomb = PDFBuilder()
        var form = bomb.addStream("/Type /XObject /Subtype /Form /BBox [0 0 100 100]", Data("0.5 0 0 rg 10 10 20 20 re f\n".utf8))
        for _ in 0..<28 {
            form = bomb.addStream("/Type /XObject /Subtype /Form /BBox [0 0 100 100] /Resources << /XObject << /X \(form) 0 R >> >>", Data("/X Do /X Do\n".utf8))
        }
        bomb.addPage(width: 100, height: 100, content: "/X Do\n", resources: "/XObject << /X \(form) 0 R >>")
        try bomb.data().write(to: origin.url.appendingPathComponent("bomb.pdf"))
        var encrypted = PDFBuilder()
        encrypted.addPage(width: 100, height: 100, content: "")
        let dictionary = encrypted.add("<< /Filter /Standard /V 1 /R 2 /O <\(String(repeating: "11", count: 32))> /U <\(String(repeating: "22", count: 32))> /P -4 >>")
        let id = String(repeating: "ab", count: 16)
        try encrypted.data(trailerEntries: "/Encrypt \(dictionary) 0 R /ID [<\(id)> <\(id)>]").write(to: origin.url.appendingPathComponent("encrypted.pdf"))
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--log-level", "warning", "--origin-dir", origin.path,
            "--allow-pdf", "--work-budget", "2",
        ])
        defer { server.terminate() }
        let base = "http://127.0.0.1:\(try await server.port())/image?url=local%3A%2F%2F%2F"
        #expect(try await get(base + "bomb.pdf&w=32&format=png").status == 503)
        #expect(try await get(base + "huge.pdf&w=32&format=png").status == 413)
        #expect(try await get(base + "encrypted.pdf&w=32&format=png").status == 415)
        #expect(try await get(base + "page.pdf&w=32&format=png").status == 200)
    }
}
