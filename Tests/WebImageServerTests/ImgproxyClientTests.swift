import Foundation
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

/// URLs built by the `imgproxy` package from PyPI (installed by scripts/deps.sh, or by the suite
/// when missing: without it the suite fails), served by the
/// proxy with the same key and salt: each signed and unsigned URL answers 200 with the size
/// imgproxy's rules give, every option the client can express among them, and a tampered
/// signature is refused.
@Suite struct ImgproxyClientTests {
    static let key = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
    static let salt = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"

    /// The client's options (its own names; `advanced` are extra processing options), and the
    /// size imgproxy makes of the 1920×1080 elephants.
    static let cases: [(options: String, size: String)] = [
        (#"{"width": 300, "height": 200}"#, "300x200"),
        (#"{"width": 300, "height": 300}"#, "300x169"),
        (#"{"resizing_type": "fit", "width": 300, "height": 300}"#, "300x169"),
        (#"{"resizing_type": "fill", "width": 300, "height": 300}"#, "300x300"),
        (#"{"resizing_type": "fill", "width": 200, "height": 200, "gravity": "no"}"#, "200x200"),
        (#"{"resizing_type": "fill", "width": 200, "height": 200, "gravity": "so"}"#, "200x200"),
        (#"{"resizing_type": "fill", "width": 200, "height": 200, "gravity": "ea"}"#, "200x200"),
        (#"{"resizing_type": "fill", "width": 200, "height": 200, "gravity": "we"}"#, "200x200"),
        (#"{"resizing_type": "fill", "width": 200, "height": 200, "gravity": "noea"}"#, "200x200"),
        (#"{"resizing_type": "fill", "width": 200, "height": 200, "gravity": "nowe"}"#, "200x200"),
        (#"{"resizing_type": "fill", "width": 200, "height": 200, "gravity": "soea"}"#, "200x200"),
        (#"{"resizing_type": "fill", "width": 200, "height": 200, "gravity": "sowe"}"#, "200x200"),
        (#"{"resizing_type": "fill", "width": 300, "height": 300, "gravity": "fp:0.2:0.8"}"#, "300x300"),
        (#"{"resizing_type": "fit", "width": 2000, "enlarge": true}"#, "2000x1125"),
        (#"{"resizing_type": "fit", "width": 2000}"#, "1920x1080"),
        (#"{"resizing_type": "fit", "height": 100}"#, "178x100"),
        (#"{"width": 300, "height": 200, "extension": "webp"}"#, "300x200"),
        (#"{"width": 100, "height": 100, "extension": "png"}"#, "100x56"),
        (#"{"resizing_type": "fit", "width": 200, "height": 200, "advanced": ["pd:10", "bg:FF0000"]}"#, "220x133"),
        (#"{"resizing_type": "fill", "width": 100, "height": 100, "advanced": ["dpr:2", "q:50", "rot:90", "fl:1:0"]}"#, "200x200"),
        (#"{"advanced": ["c:0.5:0.5:nowe", "bl:2", "scp:1", "sm:1", "cb:1"]}"#, "960x540"),
        (#"{"resizing_type": "fit", "width": 300, "height": 300, "advanced": ["ex:1:no", "bg:255:255:255"]}"#, "300x300"),
        (#"{"width": 100, "advanced": ["fn:x", "att:1", "exp:4102444800", "f:gif"]}"#, "100x56"),
    ]

    /// `[signed, insecure]` for each case, from the client; the test fails when the client is
    /// missing and cannot be installed.
    static func clientURLs(image: String, cases: [String]) async throws -> [[String]] {
        if let problem = PythonClient.imgproxy { throw PythonClient.Failure(description: problem) }
        let script = """
        import json, sys
        from imgproxy import ImgProxy
        out = []
        for options in json.loads(sys.argv[3]):
            advanced = options.pop("advanced", [])
            signed = ImgProxy(sys.argv[4], key=sys.argv[1], salt=sys.argv[2], **options)(*advanced)
            insecure = ImgProxy(sys.argv[4], **options)(*advanced)
            out.append([signed, insecure])
        print(json.dumps(out))
        """
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, key, salt, "[" + cases.joined(separator: ",") + "]", image]
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
            throw PythonClient.Failure(description: "the imgproxy client failed: \(errors)")
        }
        return try JSONDecoder().decode([[String]].self, from: output)
    }

    @Test func theClientsURLsAreServed() async throws {
        let harness = try await ProxyHarness.start { configuration in
            configuration.originDirectory = Fixture.demoImages
            configuration.imgproxy.key = Self.key
            configuration.imgproxy.salt = Self.salt
        }
        defer { Task { await harness.stop() } }
        let urls = try await Self.clientURLs(image: "local:///elephants-1920x1080-progressive.jpg", cases: Self.cases.map(\.options))
        #expect(urls.count == Self.cases.count)
        for ((options, size), pair) in zip(Self.cases, urls) {
            let signed = try await harness.request("/imgproxy" + pair[0])
            #expect(signed.status == 200, "\(pair[0]): \(signed.text)")
            guard signed.status == 200 else { continue }
            let bitmap = try signed.decoded().image
            #expect("\(bitmap.width)x\(bitmap.height)" == size, "\(options) → \(pair[0])")
            // With a key, the client's `insecure` is refused; one character of the signature changed, too.
            #expect(try await harness.request("/imgproxy" + pair[1]).status == 403, "\(pair[1])")
            let index = pair[0].index(pair[0].startIndex, offsetBy: 5)
            let tampered = pair[0].replacingCharacters(in: index...index, with: pair[0][index] == "A" ? "B" : "A")
            #expect(try await harness.request("/imgproxy" + tampered).status == 403, "\(tampered)")
        }
        #expect(try await harness.request("/imgproxy" + urls[16][0]).format == .webp)
        #expect(try await harness.request("/imgproxy" + urls[17][0]).format == .png)
        let last = try await harness.request("/imgproxy" + urls[22][0])
        #expect(last.format == .gif && last.header("Content-Disposition") == #"attachment; filename="x.gif""#)
    }

    /// Unsigned URLs of the client served by a proxy without a key, from an http origin, the
    /// smart gravity the client offers included.
    @Test func insecureURLsAndSmartGravity() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let cases = [#"{"resizing_type": "fit", "width": 300, "height": 300}"#, #"{"resizing_type": "fill", "width": 300, "height": 300, "gravity": "sm"}"#]
        let urls = try await Self.clientURLs(image: harness.origin.url("/e.jpg").absoluteString, cases: cases)
        let fit = try await harness.request("/imgproxy" + urls[0][1])
        #expect(fit.status == 200)
        let bitmap = try fit.decoded().image
        #expect("\(bitmap.width)x\(bitmap.height)" == "300x169")
        let smart = try await harness.request("/imgproxy" + urls[1][1])
        #expect(smart.status == 200)
        let cropped = try smart.decoded().image
        #expect("\(cropped.width)x\(cropped.height)" == "300x300")
    }
}
