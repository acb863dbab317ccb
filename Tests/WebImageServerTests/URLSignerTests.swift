import Foundation
import Testing
import WebImageServer

@Suite struct URLSignerTests {
    let signer = URLSigner(key: "secret")
    let target = "/image?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300"
    /// `printf '%s' "$target" | openssl dgst -sha256 -hmac secret -r`: the recipe of SignedURLs.md (the proxy catalog).
    let expected = "ecd346dbca1cf81af308e8db07726d73c87973fa0a0c869f4056374eb1316053"

    @Test func signatureIsHMACSHA256OfPathAndQueryInHex() {
        #expect(signer.signature(for: target) == expected)
        #expect(signer.sign(target) == target + "&sig=" + expected)
    }

    /// From fuzz-proxy-request (Tests/Fixtures/fuzz/fuzz-proxy-request/query-starts-with-combining-mark):
    /// a query that starts with a combining mark (U+073A) merges with the "?" into one
    /// character; signing must still see the "?" and append with "&", and the result verify.
    @Test func signsAQueryThatStartsWithACombiningMark() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/fuzz/fuzz-proxy-request/query-starts-with-combining-mark")
        let query = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        let signed = signer.sign("/image?" + query)
        #expect(signed == "/image?" + query + "&sig=" + signer.signature(for: "/image?" + query))
        let signedQuery = String(decoding: signed.utf8.dropFirst("/image?".utf8.count), as: UTF8.self)
        #expect(signer.isValid(path: "/image", query: signedQuery))
    }

    /// From fuzz-proxy-request (Tests/Fixtures/fuzz/fuzz-proxy-request/query-prepend-mark-before-ampersand):
    /// a query ending in U+0600, a mark that joins the character after it, makes the "&" the
    /// signer appends part of one larger character; the signature must still be found and
    /// verify, and a parameter after such a mark must still be parsed as one.
    @Test func verifiesAfterAMarkThatJoinsTheAmpersand() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/fuzz/fuzz-proxy-request/query-prepend-mark-before-ampersand")
        let query = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(query == "\u{0600}")
        let signed = signer.sign("/image?" + query)
        let signedQuery = String(decoding: signed.utf8.dropFirst("/image?".utf8.count), as: UTF8.self)
        #expect(signer.isValid(path: "/image", query: signedQuery))

        let request = try ProxyRequest(query: "url=https%3A%2F%2Fexample.com%2Fa\u{0600}&w=300")
        #expect(request.pixelWidth == 300)
    }

    @Test func verifiesWhereverSigStands() {
        let query = "url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300"
        #expect(signer.isValid(path: "/image", query: query + "&sig=" + expected))
        #expect(signer.isValid(path: "/image", query: "sig=" + expected + "&" + query))
        // Only the lowercase spelling (hostile-input finding 8: upper case is another URL for a
        // CDN keyed on the URL, with the same MAC).
        #expect(!signer.isValid(path: "/image", query: query + "&sig=" + expected.uppercased()))
    }

    @Test("refuses", arguments: [
        "url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300",                                   // no sig
        "url=https%3A%2F%2Fexample.com%2Fa.jpg&w=301&sig=ecd346dbca1cf81af308e8db07726d73c87973fa0a0c869f4056374eb1316053", // changed
        "w=300&url=https%3A%2F%2Fexample.com%2Fa.jpg&sig=ecd346dbca1cf81af308e8db07726d73c87973fa0a0c869f4056374eb1316053", // reordered
        "url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300&sig=ecd346dbca1cf81af308e8db07726d73c87973fa0a0c869f4056374eb131605",  // short
        "url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300&sig=zzd346dbca1cf81af308e8db07726d73c87973fa0a0c869f4056374eb1316053", // not hex
        "url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300&sig=ecd346dbca1cf81af308e8db07726d73c87973fa0a0c869f4056374eb1316053&sig=ecd346dbca1cf81af308e8db07726d73c87973fa0a0c869f4056374eb1316053", // twice
    ])
    func refuses(_ query: String) {
        #expect(!signer.isValid(path: "/image", query: query))
    }

    @Test func anotherKeyDoesNotVerify() {
        #expect(!URLSigner(key: "other").isValid(path: "/image", query: "url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300&sig=" + expected))
    }

    @Test func thePathIsSigned() {
        #expect(!signer.isValid(path: "/other", query: "url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300&sig=" + expected))
    }
}
