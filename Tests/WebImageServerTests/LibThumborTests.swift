import Foundation
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

/// URLs built by thumbor's own Python library, libthumbor (installed by scripts/deps.sh), served
/// by the proxy with the same key: each signed and unsafe URL answers 200 with the size thumbor
/// gives, and a tampered signature is refused.
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

    /// `[signed, unsafe]` for each case, from libthumbor; `nil` (with a notice) when it is not installed.
    static func libthumborURLs(image: String) async throws -> [[String]]? {
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
        let options = "[" + cases.map(\.options).joined(separator: ",") + "]"
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
            if errors.contains("No module named 'libthumbor'") {
                print("notice: libthumbor is not installed (pip install libthumbor, or scripts/deps.sh): its URLs are not tested")
                return nil
            }
            Issue.record("libthumbor failed: \(errors)")
            return nil
        }
        return try JSONDecoder().decode([[String]].self, from: output)
    }

    @Test func libthumborsURLsAreServed() async throws {
        let harness = try await ProxyHarness.start { configuration in
            configuration.originDirectory = Fixture.demoImages
            configuration.thumbor.key = Self.key
            configuration.thumbor.allowsUnsafe = true
        }
        defer { Task { await harness.stop() } }
        guard let urls = try await Self.libthumborURLs(image: "elephants-1920x1080-progressive.jpg") else { return }
        #expect(urls.count == Self.cases.count)
        for ((options, size), pair) in zip(Self.cases, urls) {
            for path in pair {
                let reply = try await harness.request("/thumbor" + path)
                #expect(reply.status == 200, "\(path): \(reply.text)")
                guard reply.status == 200 else { continue }
                let bitmap = try reply.decoded().image
                #expect("\(bitmap.width)x\(bitmap.height)" == size, "\(options) → \(path)")
            }
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

    /// An http origin through libthumbor, its URL percent-encoded as libthumbor's users often pass it.
    @Test func encodedHTTPImages() async throws {
        let harness = try await ProxyHarness.start { $0.thumbor.key = Self.key }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let encoded = ProxyHarness.encoded(harness.origin.url("/e.jpg").absoluteString)
        guard let urls = try await Self.libthumborURLs(image: encoded) else { return }
        let reply = try await harness.request("/thumbor" + urls[2][0])
        #expect(reply.status == 200)
        let bitmap = try reply.decoded().image
        #expect("\(bitmap.width)x\(bitmap.height)" == "300x169")
    }
}
