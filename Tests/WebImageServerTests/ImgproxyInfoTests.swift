import Crypto
import Foundation
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

/// imgproxy's info endpoint (`/imgproxy/info/SIGNATURE/OPTIONS/SOURCE`) and thumbor's `meta/`
/// with the placeholders (issue 30), served from the facts of `/info`.
///
/// The info URLs are built here, not by the `imgproxy` package from PyPI that
/// `ImgproxyClientTests` asks: its 1.0 builds processing URLs only (every URL it makes carries
/// `g:` and `rs:` options, and it has no info form). imgproxy signs an info URL as a processing
/// one, the MAC of the path after the signature with `/info` left out (imgproxy-node's
/// `generateImageInfoUrl` does so), so the signature is computed here from that rule with
/// swift-crypto, independently of the dialect's signer, with the key and salt the client tests use.
@Suite struct ImgproxyInfoTests {
    static let key = ImgproxyClientTests.key, salt = ImgproxyClientTests.salt

    /// imgproxy's signature of `path`: HMAC-SHA256 keyed with the key's bytes, of the salt's bytes
    /// and the path, in URL-safe Base64 without padding.
    static func signature(_ path: String) -> String {
        func bytes(_ hex: String) -> Data {
            let digits = Array(hex.utf8)
            return Data(stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! })
        }
        let mac = HMAC<SHA256>.authenticationCode(for: bytes(salt) + Data(path.utf8), using: SymmetricKey(data: bytes(key)))
        return Data(mac).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// `/imgproxy/info/SIGNATURE` + `/OPTIONS/plain/<origin URL of path, percent-encoded>`.
    static func signedInfo(_ harness: ProxyHarness, _ options: String, _ path: String = "/e.jpg") -> String {
        let rest = (options.isEmpty ? "" : "/" + options) + "/plain/" + ProxyHarness.encoded(harness.origin.url(path).absoluteString)
        return "/imgproxy/info/" + signature(rest) + rest
    }

    static func document(_ reply: Reply, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        try #require(reply.status == 200, "\(reply.status) \(reply.text)", sourceLocation: sourceLocation)
        #expect(reply.header("Content-Type") == "application/json", sourceLocation: sourceLocation)
        return try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any], sourceLocation: sourceLocation)
    }

    /// A proxy with imgproxy's key and salt, `/info` open (to compare), and the elephants.
    static func start() async throws -> ProxyHarness {
        let harness = try await ProxyHarness.start { configuration in
            configuration.imgproxy.key = key
            configuration.imgproxy.salt = salt
            configuration.allowsUnsignedImageURLs = true
        }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        return harness
    }

    /// imgproxy's documented keys: `format`, `width`, `height`, `size` by default, `blurhash`
    /// with `bh:X:Y`, the same BlurHash `/info` gives with `bh=XxY`.
    @Test func signedInfoURLsAnswerImgproxysJSON() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        let elephants = try Fixture.elephants
        let plain = try Self.document(try await harness.request(Self.signedInfo(harness, "")))
        #expect(Set(plain.keys) == ["format", "width", "height", "size"])
        #expect(plain["format"] as? String == "jpeg" && plain["size"] as? Int == elephants.count)
        #expect(plain["width"] as? Int == 1920 && plain["height"] as? Int == 1080)

        let hashed = try Self.document(try await harness.request(Self.signedInfo(harness, "bh:3:2")))
        let blurHash = try #require(hashed["blurhash"] as? String)
        #expect(try BlurHash(blurHash).components == BlurHash.Components(x: 3, y: 2))
        let ours = try ProxyInfoTests.object(try await harness.request(ProxyInfoTests.infoPath(harness, "/e.jpg", "bh=3x2")))
        #expect(ours["blurHash"] as? String == blurHash)

        // Keys turned off; options that change nothing here; a Base64 source.
        let only = try Self.document(try await harness.request(Self.signedInfo(harness, "s:0/f:false/d:0/bh:4:3/exif:1/iptc:0/pg:0/cb:7/dc:0/p:0")))
        #expect(Set(only.keys) == ["blurhash"])
        let encoded = "/" + ImgproxyURLTests.base64(harness.origin.url("/e.jpg").absoluteString)
        let base64 = try Self.document(try await harness.request("/imgproxy/info/" + Self.signature(encoded) + encoded))
        #expect(base64["size"] as? Int == elephants.count)
    }

    /// Signed as imgproxy signs: unsigned, tampered and `/info`-signed URLs are `403`; what
    /// the proxy does not compute is a `400`; an expired URL a `404`.
    @Test func refusals() async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        let source = "/plain/" + ProxyHarness.encoded(harness.origin.url("/e.jpg").absoluteString)
        #expect(try await harness.request("/imgproxy/info/insecure" + source).status == 403)
        #expect(try await harness.request("/imgproxy/info/" + Self.signature("/bh:4:3" + source) + "/bh:3:3" + source).status == 403)
        #expect(try await harness.request("/imgproxy/info/" + Self.signature("/info" + source) + source).status == 403)
        for option in ["dc:1", "avg:1", "p:8", "do:t", "c:100:100", "pg:2", "pr:thumb", "bh:10:3", "msr:100"] {
            let reply = try await harness.request(Self.signedInfo(harness, option))
            #expect(reply.status == 400, "\(option): \(reply.status) \(reply.text)")
        }
        #expect(try await harness.request(Self.signedInfo(harness, "exp:1000")).status == 404)
        let later = Int(Date().timeIntervalSince1970) + 3600
        let expiring = try await harness.request(Self.signedInfo(harness, "exp:\(later)"))
        #expect(expiring.status == 200)
        let lifetime = try #require(expiring.header("Cache-Control").flatMap { $0.split(separator: "=").last.flatMap { Int($0) } })
        #expect(lifetime <= 3600)
    }

    /// Unsigned info URLs are answered when the dialect is open, and the answer is cached with
    /// `/info`'s facts: an `ETag` of its own, `304`, one decode for both forms.
    @Test func openInfoURLsAndTheirCaching() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let path = "/imgproxy/info/insecure/plain/" + ProxyHarness.encoded(harness.origin.url("/e.jpg").absoluteString)
        let first = try await harness.request(path)
        #expect(first.status == 200 && first.header("X-Cache") == "miss")
        let etag = try #require(first.header("ETag"))
        let again = try await harness.request(path)
        #expect(again.header("X-Cache") == "memory" && again.body == first.body && again.header("ETag") == etag)
        #expect(try await harness.request(path, headers: [("If-None-Match", etag)]).status == 304)
        let info = try await harness.request(ProxyInfoTests.infoPath(harness, "/e.jpg"))
        #expect(info.header("X-Cache") == "memory" && info.header("ETag") != etag)
        #expect(harness.decodeCount == 1)
        // The SSRF rule is /image's.
        let refused = try await harness.request("/imgproxy/info/_/plain/" + ProxyHarness.encoded("http://127.0.0.2:\(harness.origin.port)/e.jpg"))
        #expect(refused.status == 403 && refused.text == "forbidden origin\n")
    }

    /// thumbor's `meta/` carries the source's ThumbHash (of the picture as shown: the 2:1
    /// quadrants) and 4×3 BlurHash beside thumbor's own fields.
    @Test func thumborMetaCarriesThePlaceholders() async throws {
        let harness = try await ThumborServingTests.start()
        defer { Task { await harness.stop() } }
        let reply = try await harness.request(ThumborServingTests.unsafe(harness, "meta/50x0"))
        #expect(reply.status == 200 && reply.header("Content-Type") == "application/json")
        let document = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
        let source = try #require((document["thumbor"] as? [String: Any])?["source"] as? [String: Any])
        #expect(source["width"] as? Int == 200 && source["height"] as? Int == 100)
        #expect(try ProxyInfoTests.aspectMatches(source["thumbHash"] as? String, width: 200, height: 100))
        #expect(try BlurHash(try #require(source["blurHash"] as? String)).components == BlurHash.Components(x: 4, y: 3))
    }
}
