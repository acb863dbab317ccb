import Foundation
import Testing
import WebImageCore
@testable import WebImageServer

@Suite struct ProxyRequestTests {
    let source = "url=https%3A%2F%2Fexample.com%2Fa.jpg"

    @Test func parsesEveryParameter() throws {
        let request = try ProxyRequest(query: source + "&w=100&h=50&fit=cover&format=webp&q=70&blur=2.5&dpr=2")
        #expect(request.source == .remote(URL(string: "https://example.com/a.jpg")!))
        #expect(request.width == 100 && request.height == 50)
        #expect(request.pixelWidth == 200 && request.pixelHeight == 100)
        #expect(request.fit == .cover && request.outputFormat == .webp && request.quality == 70)
        #expect(request.blur == 2.5 && request.pixelBlur == 5)
    }

    @Test("percent-decoding agrees with Foundation's removingPercentEncoding", arguments: [
        "", "plain", "a+b", "%41%62c", "local%3A%2F%2F%2Fa%20b.jpg", "%e2%82%AC", "caf%C3%A9", "100%", "%4", "%zz",
        "%", "%%41", "%FF", "%C3", "%C3%28", "%00", "x%2", "%2541",
    ])
    func percentDecoding(_ text: String) {
        #expect(PercentDecoding.string(Substring(text)) == text.removingPercentEncoding)
    }

    @Test func defaults() throws {
        let request = try ProxyRequest(query: source)
        #expect(request.width == nil && request.height == nil)
        #expect(request.fit == .contain && request.outputFormat == .auto && request.quality == 80 && request.blur == 0 && request.dpr == 1)
    }

    @Test("400 with a message naming the parameter", arguments: [
        ("", "url is required"),
        ("w=10", "url is required"),
        ("url=ftp%3A%2F%2Fexample.com%2Fa.jpg", "url must be an absolute http or https URL"),
        ("url=%2Fa.jpg", "url must be an absolute http or https URL"),
        ("url=https%3A%2F%2Fuser%3Apass%40example.com%2Fa.jpg", "url must not carry credentials"),
        ("url=local%3A%2F%2F%2Fa.jpg", "local:// sources need --origin-dir"),
        ("url=https%3A%2F%2Fexample.com%2Fa.jpg&w=abc", "w must be an integer from 1 to 4096"),
        ("url=https%3A%2F%2Fexample.com%2Fa.jpg&w=0", "w must be an integer from 1 to 4096"),
        ("url=https%3A%2F%2Fexample.com%2Fa.jpg&w=-5", "w must be an integer from 1 to 4096"),
        ("url=https%3A%2F%2Fexample.com%2Fa.jpg&h=4097", "h must be an integer from 1 to 4096"),
        ("url=https%3A%2F%2Fexample.com%2Fa.jpg&w=3000&dpr=2", "w × dpr must be at most 4096"),
        ("url=https%3A%2F%2Fexample.com%2Fa.jpg&fit=crop", "fit must be contain, cover or fill"),
        ("url=https%3A%2F%2Fexample.com%2Fa.jpg&format=tiff", "format must be auto, jpeg, png, webp, gif, avif or jxl"),
        ("url=https%3A%2F%2Fexample.com%2Fa.jpg&q=0", "q must be an integer from 1 to 100"),
        ("url=https%3A%2F%2Fexample.com%2Fa.jpg&q=101", "q must be an integer from 1 to 100"),
        ("url=https%3A%2F%2Fexample.com%2Fa.jpg&blur=-1", "blur must be a number from 0 to 100"),
        ("url=https%3A%2F%2Fexample.com%2Fa.jpg&blur=nan", "blur must be a number from 0 to 100"),
        ("url=https%3A%2F%2Fexample.com%2Fa.jpg&dpr=5", "dpr must be a number from 1 to 4"),
        ("url=https%3A%2F%2Fexample.com%2Fa.jpg&dpr=0.5", "dpr must be a number from 1 to 4"),
        ("url=https%3A%2F%2Fexample.com%2Fa.jpg&width=10", "unknown parameter width"),
        ("url=https%3A%2F%2Fexample.com%2Fa.jpg&w=10&w=20", "w is given more than once"),
        ("url=%E0%A4%A", "url is not valid percent-encoding"),
    ])
    func rejects(_ query: String, message: String) {
        #expect(throws: ProxyError.badRequest(message)) { try ProxyRequest(query: query) }
    }

    @Test func localPathsStayInsideTheFolder() throws {
        #expect(try ProxyRequest(query: "url=local%3A%2F%2F%2Fflower.webp", allowsLocal: true).source == .local("flower.webp"))
        #expect(try ProxyRequest(query: "url=local%3A%2F%2F%2Fsub%2Fa.png", allowsLocal: true).source == .local("sub/a.png"))
        for path in ["..%2Fetc%2Fpasswd", "a%2F..%2F..%2Fb", "", ".", "a%2F%2Fb"] {
            #expect(throws: ProxyError.self) { try ProxyRequest(query: "url=local%3A%2F%2F%2F" + path, allowsLocal: true) }
        }
    }

    /// Equal outputs share one cache entry: `dpr` folds into the pixel size, `fit` matters
    /// only with both sides, quality only for lossy formats.
    @Test func variantKeysNormalise() throws {
        func key(_ query: String, _ format: String = "webp") throws -> String {
            try ProxyRequest(query: source + "&" + query).variantKey(format: format)
        }
        #expect(try key("w=100&dpr=2") == key("w=200"))
        #expect(try key("h=50&w=100") == key("w=100&h=50"))
        #expect(try key("w=100&fit=cover") == key("w=100"))
        #expect(try key("w=100&h=100&fit=cover") != key("w=100&h=100"))
        #expect(try key("w=100&q=50", "png") == key("w=100", "png"))
        #expect(try key("w=100&q=50") != key("w=100"))
        #expect(try key("w=100", "png") != key("w=100", "source"))
        // A video's time and a PDF's page are variants; their defaults are the first frame and page.
        #expect(try key("w=100&t=0") == key("w=100"))
        #expect(try key("w=100&page=1") == key("w=100"))
        #expect(try key("w=100&t=1.5") != key("w=100"))
        #expect(try key("w=100&t=1.5") != key("w=100&t=2"))
        #expect(try key("w=100&page=2") != key("w=100"))
    }

    /// `t` (a video's poster time) and `page` (a PDF's page), with their ranges.
    @Test func videoTimeAndPage() throws {
        let request = try ProxyRequest(query: source + "&t=12.5&page=3")
        #expect(request.videoTime == 12.5 && request.page == 3)
        #expect(request.recipe.videoTime == 12.5 && request.recipe.page == 3)
        for (query, message) in [("t=-1", "t must be a number from 0 to 86400"), ("t=86401", "t must be a number from 0 to 86400"),
                                 ("page=0", "page must be an integer from 1 to 1000000"), ("page=x", "page must be an integer from 1 to 1000000")] {
            #expect(throws: ProxyError.badRequest(message)) { try ProxyRequest(query: source + "&" + query) }
        }
    }

    @Test func acceptNegotiation() {
        #expect(FormatNegotiation.acceptsWebP("image/avif,image/webp,image/apng,image/*,*/*;q=0.8"))
        #expect(FormatNegotiation.acceptsWebP("image/png, image/WebP;q=0.5"))
        #expect(!FormatNegotiation.acceptsWebP("image/webp;q=0"))
        #expect(!FormatNegotiation.acceptsWebP("*/*"))
        #expect(!FormatNegotiation.acceptsWebP("image/*"))
        #expect(!FormatNegotiation.acceptsWebP([]))
    }

    @Test func ifNoneMatch() {
        let etag = "\"abc\""
        #expect(ProxyServer.matches(["\"abc\""], etag: etag))
        #expect(ProxyServer.matches(["W/\"abc\""], etag: etag))
        #expect(ProxyServer.matches(["\"x\", \"abc\""], etag: etag))
        #expect(ProxyServer.matches(["*"], etag: etag))
        #expect(!ProxyServer.matches(["\"abcd\""], etag: etag))
        #expect(!ProxyServer.matches([], etag: etag))
    }

    @Test func errorMapping() {
        #expect(ProxyError(.httpStatus(404)).status == 404)
        #expect(ProxyError(.httpStatus(500)).status == 502)
        #expect(ProxyError(.httpStatus(403)).status == 502)
        #expect(ProxyError(.tooLarge("x")).status == 413)
        #expect(ProxyError(.unsupportedFormat("x")).status == 415)
        #expect(ProxyError(.timeout("x")).status == 504)
        #expect(ProxyError(.network(.init(.connectionRefused, "x"))).status == 502)
        #expect(ProxyError(.corruptData("x")).status == 502)
        #expect(ProxyError(.invalidURL("forbidden origin: 10.0.0.1")).status == 403)
        #expect(ProxyError(.storage(.init(operation: "open", path: "/x", code: ENOENT))).status == 404)
        // The client never sees the cause.
        #expect(!ProxyError(.network(.init(.connectionRefused, "127.0.0.1:8080"))).message.contains("127"))
    }
}
