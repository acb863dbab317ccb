import Foundation
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

/// URLs built by thumbor's own Python library, libthumbor (installed by scripts/deps.sh, or by
/// the suite when missing: without it the suite fails), served by the proxy with the same key:
/// each signed and unsafe URL answers 200 with the size thumbor gives, and a tampered signature
/// is refused.
@Suite struct LibThumborTests {
    static let key = "lib-thumbor-key"

    /// libthumbor's options (its own names), and the size thumbor makes of the 1920×1080 elephants.
    static let cases: [(options: String, size: String)] = [
        (#"{"width": 300, "height": 200}"#, "300x200"),
        (#"{"width": 300, "height": 200, "smart": true}"#, "300x200"),
        (#"{"width": 300, "height": 200, "fit_in": true}"#, "300x169"),
        (#"{"width": 200, "height": 300, "adaptive_fit_in": true}"#, "300x169"),
        (#"{"width": 300, "height": 200, "full_fit_in": true}"#, "356x200"),
        (#"{"width": 200, "height": 300, "adaptive_full_fit_in": true}"#, "356x200"),
        (#"{"width": 300, "height": 200, "flip": true, "flop": true}"#, "300x200"),
        (#"{"flip": true}"#, "1920x1080"),
        (#"{"width": 300, "height": 300, "halign": "left", "valign": "top"}"#, "300x300"),
        (#"{"width": 300, "height": 300, "halign": "right", "valign": "bottom", "smart": true}"#, "300x300"),
        (#"{"crop": [[100, 100], [500, 400]], "width": 200}"#, "200x150"),
        (#"{"crop": [[100, 100], [500, 400]]}"#, "400x300"),
        (#"{"height": 100}"#, "178x100"),
        (#"{"width": 3000, "height": 3000, "fit_in": true}"#, "1920x1080"),
        (#"{"width": 400, "height": 400, "fit_in": true, "filters": ["quality(40)", "format(webp)", "grayscale()"]}"#, "400x225"),
        (#"{"width": 400, "height": 400, "fit_in": true, "filters": ["blur(3)", "rotate(90)", "strip_icc()", "strip_exif()"]}"#, "225x400"),
        (#"{"width": 100, "filters": ["proportion(0.5)", "max_age(10)", "no_upscale()"]}"#, "50x28"),
    ]

    /// libthumbor's `meta` and `trim` options, and what thumbor 7.8 answers for them on
    /// Spring.png (asked of thumbor itself): trim cuts the border of the top-left (or
    /// bottom-right) pixel's colour, within the tolerance.
    static let trimCases: [(options: String, size: String)] = [
        (#"{"trim": true, "width": 300, "height": 300, "fit_in": true}"#, "300x87"),
        (#"{"trim": ["top-left", null]}"#, "1600x462"),
        (#"{"trim": ["bottom-right", 30]}"#, "1600x357"),
    ]

    /// `[signed, unsafe]` for each of `cases` (the cases above by default), from libthumbor;
    /// the test fails when libthumbor is missing and cannot be installed.
    static func libthumborURLs(image: String, cases: [String] = cases.map(\.options)) async throws -> [[String]] {
        if let problem = PythonClient.libthumbor { throw PythonClient.Failure(description: problem) }
        let script = """
        import json, sys
        from libthumbor import CryptoURL
        crypto = CryptoURL(key=sys.argv[1])
        out = []
        for options in json.loads(sys.argv[2]):
            options["image_url"] = sys.argv[3]
            signed = crypto.generate(**options)
            unsafe = crypto.generate(unsafe=True, **options)
            out.append([signed, "/" + unsafe.lstrip("/")])
        print(json.dumps(out))
        """
        let options = "[" + cases.joined(separator: ",") + "]"
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, key, options, image]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            process.terminationHandler = { _ in continuation.resume() }
            do { try process.run() } catch { continuation.resume() }
        }
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw PythonClient.Failure(description: "libthumbor failed: \(errors)")
        }
        return try JSONDecoder().decode([[String]].self, from: output)
    }

    /// A proxy over Demo/images with the key, unsafe URLs allowed.
    static func startProxy() async throws -> ProxyHarness {
        try await ProxyHarness.start { configuration in
            configuration.originDirectory = Fixture.demoImages
            configuration.thumbor.key = Self.key
            configuration.thumbor.allowsUnsafe = true
        }
    }

    /// Checks that `path` (libthumbor's for `options`) answers 200 with an image of `size`.
    static func expect(_ path: String, servedAs size: String, by harness: ProxyHarness, _ options: String) async throws {
        let reply = try await harness.request("/thumbor" + path)
        #expect(reply.status == 200, "\(path): \(reply.text)")
        guard reply.status == 200 else { return }
        let bitmap = try reply.decoded().image
        #expect("\(bitmap.width)x\(bitmap.height)" == size, "\(options) → \(path)")
    }

    @Test func libthumborsURLsAreServed() async throws {
        let harness = try await Self.startProxy()
        defer { Task { await harness.stop() } }
        let urls = try await Self.libthumborURLs(image: "elephants-1920x1080-progressive.jpg")
        #expect(urls.count == Self.cases.count)
        for ((options, size), pair) in zip(Self.cases, urls) {
            for path in pair { try await Self.expect(path, servedAs: size, by: harness, options) }
            // One character of the signature changed: refused.
            let signed = pair[0]
            let index = signed.index(signed.startIndex, offsetBy: 5)
            let replacement: String = signed[index] == "A" ? "B" : "A"
            let tampered = signed.replacingCharacters(in: index...index, with: replacement)
            #expect(try await harness.request("/thumbor" + tampered).status == 403, "\(tampered)")
        }
        #expect(try await harness.request("/thumbor" + urls[14][0]).format == .webp)
        #expect(try await harness.request("/thumbor" + urls[16][0]).header("Cache-Control") == "public, max-age=10")
    }

    /// libthumbor's `trim` (alone, with a corner, with a corner and a tolerance) gives thumbor's
    /// sizes, and its `meta` answers thumbor's JSON with the target thumbor reports, signed and
    /// unsafe.
    @Test func libthumborsTrimAndMetaURLs() async throws {
        let harness = try await Self.startProxy()
        defer { Task { await harness.stop() } }
        let urls = try await Self.libthumborURLs(image: "Spring.png", cases: Self.trimCases.map(\.options))
        for ((options, size), pair) in zip(Self.trimCases, urls) {
            #expect(pair[0].contains("/trim"), "\(pair[0])")
            for path in pair { try await Self.expect(path, servedAs: size, by: harness, options) }
        }
        // thumbor answers {"thumbor": {…, "target": {"width": 300.0, "height": 200.0}}} for this one.
        let meta = try await Self.libthumborURLs(image: "elephants-1920x1080-progressive.jpg", cases: [#"{"meta": true, "width": 300, "height": 200}"#])
        for path in meta[0] {
            #expect(path.contains("/meta/"), "\(path)")
            let reply = try await harness.request("/thumbor" + path)
            #expect(reply.status == 200 && reply.header("Content-Type") == "application/json", "\(path)")
            let document = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
            let target = try #require((document["thumbor"] as? [String: Any])?["target"] as? [String: Any])
            #expect(target["width"] as? Int == 300 && target["height"] as? Int == 200, "\(path)")
        }
    }

    /// An http origin through libthumbor, its URL percent-encoded as libthumbor's users often pass it.
    @Test func encodedHTTPImages() async throws {
        let harness = try await ProxyHarness.start { $0.thumbor.key = Self.key }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let encoded = ProxyHarness.encoded(harness.origin.url("/e.jpg").absoluteString)
        let urls = try await Self.libthumborURLs(image: encoded)
        let reply = try await harness.request("/thumbor" + urls[2][0])
        #expect(reply.status == 200)
        let bitmap = try reply.decoded().image
        #expect("\(bitmap.width)x\(bitmap.height)" == "300x169")
    }
}
