import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// The `webimage serve` command as a plain process: flags, environment, the listening line,
/// the log, and the graceful stop on SIGTERM.
@Suite(.enabled(if: WebImageExecutable.url != nil), .timeLimit(.minutes(2 * Deadlines.stretch))) struct ServeCommandTests {
    func get(_ url: String, headers: [(String, String)] = []) async throws -> (status: Int, headers: [(String, String)], body: Data) {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.tests.execute(request, timeout: .seconds(60 * Int64(Deadlines.stretch)))
        let body = try await response.body.collect(upTo: 64 << 20)
        return (Int(response.status.code), response.headers.map { ($0.name, $0.value) }, Data(body.readableBytesView))
    }

    @Test func servesTheGalleryAndStopsGracefullyOnSIGTERM() async throws {
        let cache = TemporaryDirectory("serve")
        defer { cache.remove() }
        let origin = try await TestOrigin.start()
        defer { Task { try await origin.shutdown() } }
        origin.register("/e.jpg", data: try Fixture.elephants)
        let gate = origin.gate("/e.jpg")

        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            // The held download waits through the steps below: on a loaded machine longer than
            // the default 15 s, which would answer it 504.
            "serve", "--port", "0", "--origin-dir", "Demo/images", "--cache-dir", cache.path, "--allow-loopback",
            "--origin-timeout", "600",
        ])
        let port = try await server.port()
        #expect(server.stdout.first == "listening on http://127.0.0.1:\(port)")
        let base = "http://127.0.0.1:\(port)"

        #expect(try await get(base + "/healthz").status == 200)
        let page = try await get(base + "/")
        #expect(page.status == 200 && String(decoding: page.body, as: UTF8.self).contains("srcset="))
        let thumbnail = try await get(base + "/image?url=local%3A%2F%2F%2Fflower.webp&w=64", headers: [("Accept", "image/webp")])
        #expect(thumbnail.status == 200 && ImageFormat(sniffing: thumbnail.body) == .webp)

        // A request in flight, held at the origin, when SIGTERM arrives.
        let source = percentEncoded(origin.url("/e.jpg").absoluteString)
        async let held = get(base + "/image?url=\(source)&w=32")
        #expect(await origin.waitForRequests(path: "/e.jpg", count: 1))
        server.terminate()
        #expect(await server.waitForLine(stderr: true) { $0.contains("shutting down") } != nil)
        gate.open()
        let reply = try await held
        #expect(reply.status == 200)
        #expect(ImageFormat(sniffing: reply.body) == .jpeg)
        #expect(await server.waitForExit() == 0)

        // One JSON line per request, with the fields that matter.
        let requests = server.stderr.filter { $0.contains(#""msg":"request""#) }
        #expect(requests.count == 4)
        let line = try #require(requests.first { $0.contains(#""path":"/healthz""#) })
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(fields["status"] as? Int == 200)
        #expect(fields["method"] as? String == "GET")
        #expect(fields["duration_ms"] is Double || fields["duration_ms"] is Int)
    }

    /// `--origin-retries N` makes N + 1 attempts at an origin: one that fails once is answered
    /// 200, with the retry on the request's JSON log line; one that fails twice, 502. The
    /// environment's `WEBIMAGE_ORIGIN_RETRIES` is read the same way, and a negative count refused.
    @Test func originRetriesFlag() async throws {
        let cache = TemporaryDirectory("serve-origin-retries")
        defer { cache.remove() }
        let origin = try await TestOrigin.start()
        defer { Task { try await origin.shutdown() } }
        origin.register("/e.jpg", data: try Fixture.elephants)
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--allow-loopback", "--origin-retries", "1",
        ])
        let base = "http://127.0.0.1:\(try await server.port())"
        let once = try await get(base + "/image?url=\(percentEncoded(origin.url("/flaky/e.jpg?fail=1").absoluteString))&w=32")
        #expect(once.status == 200)
        #expect(origin.requestCount(path: "/flaky/e.jpg") == 2)
        let line = await server.waitForLine(stderr: true) { $0.contains("origin_retries") }
        let fields = try #require(try line.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(fields["origin_retries"] as? Int == 1)
        #expect(fields["status"] as? Int == 200)

        let twice = try await get(base + "/image?url=\(percentEncoded(origin.url("/flaky/e.jpg?fail=2&key=b").absoluteString))&w=32")
        #expect(twice.status == 502)
        #expect(origin.requestCount(path: "/flaky/e.jpg") == 4)
        server.terminate()
        #expect(await server.waitForExit() == 0)

        let refused = try ServeProcess(try #require(WebImageExecutable.url), ["serve", "--port", "0", "--cache-dir", cache.path], environment: [
            "WEBIMAGE_ORIGIN_RETRIES": "-1",
        ])
        #expect(await refused.waitForLine(stderr: true) { $0.contains("WEBIMAGE_ORIGIN_RETRIES") } != nil, "\(refused.stderr)")
        #expect(await refused.waitForExit() != 0)
    }

    /// `--origin-timeout` and `--max-source-bytes` with a unit reach the proxy: a download the
    /// origin never finishes is answered 504 once its attempts (a second each, and the waits
    /// between) have run out, and a source over 1K is refused.
    @Test func originTimeoutAndSourceSizeFlags() async throws {
        let cache = TemporaryDirectory("serve-origin-timeout")
        defer { cache.remove() }
        let origin = try await TestOrigin.start()
        defer { Task { try await origin.shutdown() } }
        origin.register("/held.jpg", data: try Fixture.elephants)
        origin.register("/big.jpg", data: try Fixture.elephants)
        let gate = origin.gate("/held.jpg")
        defer { gate.open() }
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--allow-loopback", "--origin-timeout", "1", "--max-source-bytes", "1K",
        ])
        let base = "http://127.0.0.1:\(try await server.port())"
        let held = try await get(base + "/image?url=\(percentEncoded(origin.url("/held.jpg").absoluteString))&w=32")
        #expect(held.status == 504)
        let big = try await get(base + "/image?url=\(percentEncoded(origin.url("/big.jpg").absoluteString))&w=32")
        #expect(big.status == 413, "\(big.status)")
        server.terminate()
        #expect(await server.waitForExit() == 0)
    }

    /// `--cache-memory 0` (or its variable) keeps no variant in memory: a repeated variant is
    /// answered from disk every time; on the defaults the second request is a memory hit.
    @Test(arguments: [
        ([String](), [String: String](), "memory"), (["--cache-memory", "0"], [:], "disk"), ([], ["WEBIMAGE_CACHE_MEMORY": "0"], "disk"),
    ])
    func cacheMemoryFlag(_ flags: [String], _ environment: [String: String], _ repeated: String) async throws {
        let cache = TemporaryDirectory("serve-cache-memory")
        defer { cache.remove() }
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--origin-dir", "Demo/images", "--log-level", "warning",
        ] + flags, environment: environment)
        let url = "http://127.0.0.1:\(try await server.port())/image?url=local%3A%2F%2F%2Fflower.webp&w=16"
        var sources: [String?] = []
        for _ in 0..<3 {
            let response = try await get(url)
            #expect(response.status == 200)
            sources.append(response.headers.first { $0.0.lowercased() == "x-cache" }?.1)
        }
        #expect(sources == ["miss", repeated, repeated])
        server.terminate()
        #expect(await server.waitForExit() == 0)
    }

    @Test func configurationFromTheEnvironment() async throws {
        let cache = TemporaryDirectory("serve-env")
        defer { cache.remove() }
        let server = try ServeProcess(try #require(WebImageExecutable.url), ["serve"], environment: [
            "WEBIMAGE_PORT": "0", "WEBIMAGE_ORIGIN_DIR": "Demo/images", "WEBIMAGE_CACHE_DIR": cache.path,
            "WEBIMAGE_SIGNING_KEY": "env-key", "WEBIMAGE_NO_CACHE": "1", "WEBIMAGE_LOG_LEVEL": "warning",
        ])
        let port = try await server.port()
        let target = "/image?url=local%3A%2F%2F%2Fflower.webp&w=16"
        #expect(try await get("http://127.0.0.1:\(port)" + target).status == 403)
        let signed = "http://127.0.0.1:\(port)" + URLSigner(key: "env-key").sign(target)
        #expect(try await get(signed).status == 200)
        server.terminate()
        #expect(await server.waitForExit() == 0)
        // --no-cache: nothing was written to the cache folder.
        let written = (try? FileManager.default.contentsOfDirectory(atPath: cache.path)) ?? []
        #expect(written.isEmpty, "\(written)")
        // At warning, no request lines.
        #expect(!server.stderr.contains { $0.contains(#""msg":"request""#) })
    }

    /// thumbor's own variable names reach the dialect, and --thumbor-prefix / serves it at the root.
    @Test func thumborFromTheEnvironmentAndFlags() async throws {
        let cache = TemporaryDirectory("serve-thumbor")
        defer { cache.remove() }
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--log-level", "warning",
            "--origin-dir", Fixture.demoImages.path, "--thumbor-prefix", "/",
        ], environment: ["THUMBOR_SECURITY_KEY": "env-key", "THUMBOR_ALLOW_UNSAFE_URL": "True"])
        defer { server.terminate() }
        let base = "http://127.0.0.1:\(try await server.port())"
        #expect(try await get(base + "/unsafe/fit-in/16x16/flower.webp").status == 200)
        #expect(try await get(base + ThumborSigner(key: "env-key").sign("fit-in/16x16/flower.webp")).status == 200)
        #expect(try await get(base + ThumborSigner(key: "other").sign("fit-in/16x16/flower.webp")).status == 403)
        #expect(try await get(base + "/healthcheck").status == 200)
        #expect(try await get(base + "/healthz").status == 200)
    }

    /// `--keep-color-profile` (or WEBIMAGE_KEEP_COLOR_PROFILE) embeds the source's profile in the
    /// output; by default the output has none (thumb-Kite.jpg carries a 3,144-byte sRGB profile).
    @Test(arguments: [(["--keep-color-profile"], [String: String]()), ([], ["WEBIMAGE_KEEP_COLOR_PROFILE": "1"]), ([], [:])])
    func colorProfileFlag(flags: [String], environment: [String: String]) async throws {
        let cache = TemporaryDirectory("serve-color")
        defer { cache.remove() }
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--log-level", "warning", "--origin-dir", Fixture.demoImages.path,
        ] + flags, environment: environment)
        defer { server.terminate() }
        let reply = try await get("http://127.0.0.1:\(try await server.port())/image?url=local%3A%2F%2F%2Fthumb-Kite.jpg&w=32&format=jpeg")
        #expect(reply.status == 200)
        let profile = try CoderRegistry.system().decode(reply.body, options: .preservingColor).iccProfile
        #expect((profile?.count == 3_144) == !(flags.isEmpty && environment.isEmpty), "\(flags) \(environment): \(profile?.count ?? 0) bytes")
    }

    /// `--allow-svg` (or WEBIMAGE_ALLOW_SVG) lets SVG sources through (drawn at the width asked
    /// for); without either they are refused with 415.
    @Test(arguments: [(["--allow-svg"], [String: String](), 200), ([], ["WEBIMAGE_ALLOW_SVG": "1"], 200), ([], [:], 415)])
    func allowSVGFlag(flags: [String], environment: [String: String], status: Int) async throws {
        let (cache, origin) = (TemporaryDirectory("serve-svg"), TemporaryDirectory("serve-svg-origin"))
        defer { cache.remove(); origin.remove() }
        try Data(contentsOf: Fixture.directory.appendingPathComponent("shapes.svg")).write(to: origin.url.appendingPathComponent("shapes.svg"))
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--log-level", "warning", "--origin-dir", origin.path,
        ] + flags, environment: environment)
        defer { server.terminate() }
        let reply = try await get("http://127.0.0.1:\(try await server.port())/image?url=local%3A%2F%2F%2Fshapes.svg&w=32&format=png")
        #expect(reply.status == status, "\(flags) \(environment)")
        if status == 200 { #expect(try CoderRegistry.system().decode(reply.body).image.width == 32) }
    }

    /// Hostile-input findings 3 and 4 through the server: with `--allow-svg`, a document whose
    /// filter would render for minutes is stopped at the work budget (`503`), one embedding a
    /// 20,000 × 20,000 PNG is refused like that PNG (`413`), and the server goes on serving SVG.
    @Test(.timeLimit(.minutes(2 * Deadlines.stretch))) func hostileSVGsAreBoundedByTheServer() async throws {
        let (cache, origin) = (TemporaryDirectory("serve-svg-bomb"), TemporaryDirectory("serve-svg-bomb-origin"))
        defer { cache.remove(); origin.remove() }
        try Data(contentsOf: Fixture.directory.appendingPathComponent("shapes.svg")).write(to: origin.url.appendingPathComponent("shapes.svg"))
        let turbulence = #"<svg xmlns="http://www.w3.org/2000/svg" width="64" height="48"><filter id="t"><feTurbulence baseFrequency="0.05" numOctaves="100000"/></filter><rect width="64" height="48" filter="url(#t)"/></svg>"#
        try Data(turbulence.utf8).write(to: origin.url.appendingPathComponent("turbulence.svg"))
        // A PNG header that states 20,000 × 20,000 (IHDR, CRC included), embedded.
        let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAATiAAAE4gCAYAAADjcEY5")!
        let embedded = #"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="200"><image width="200" height="200" href="data:image/png;base64,\#(png.base64EncodedString())"/></svg>"#
        try Data(embedded.utf8).write(to: origin.url.appendingPathComponent("embedded.svg"))
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--log-level", "warning", "--origin-dir", origin.path,
            "--allow-svg", "--work-budget", "2",
        ])
        defer { server.terminate() }
        let base = "http://127.0.0.1:\(try await server.port())/image?url=local%3A%2F%2F%2F"
        #expect(try await get(base + "turbulence.svg&w=32&format=png").status == 503)
        #expect(try await get(base + "embedded.svg&w=32&format=png").status == 413)
        #expect(try await get(base + "shapes.svg&w=32&format=png").status == 200)
    }

    /// `--auto-formats` (or WEBIMAGE_AUTO_FORMATS) sets what `format=auto` offers, in order: by
    /// default a browser taking AVIF gets AVIF; `webp` alone gives it WebP; `none`, the source's JPEG.
    @Test(arguments: [([String](), [String: String](), ImageFormat.avif), (["--auto-formats", "webp"], [:], .webp),
                      ([], ["WEBIMAGE_AUTO_FORMATS": "none"], .jpeg)])
    func autoFormatsFlag(flags: [String], environment: [String: String], expected: ImageFormat) async throws {
        let cache = TemporaryDirectory("serve-auto")
        defer { cache.remove() }
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--log-level", "warning", "--origin-dir", Fixture.demoImages.path,
        ] + flags, environment: environment)
        defer { server.terminate() }
        let reply = try await get("http://127.0.0.1:\(try await server.port())/image?url=local%3A%2F%2F%2Fthumb-Kite.jpg&w=32&format=auto",
                                  headers: [("Accept", "image/avif,image/webp,image/*,*/*;q=0.8")])
        #expect(reply.status == 200)
        #expect(ImageFormat(sniffing: reply.body) == expected, "\(flags) \(environment)")
    }

    @Test func thumborPrefixMustBeAPath() throws {
        let run = try CommandRun(try #require(WebImageExecutable.url), ["serve", "--thumbor-prefix", "thumbor", "--port", "0"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("--thumbor-prefix must start with /"), "\(run.stderr)")
    }

    /// imgproxy's own variable names reach the dialect (key, salt, signature size, presets), and
    /// --imgproxy-prefix / serves it at the root while thumbor keeps its prefix.
    @Test func imgproxyFromTheEnvironment() async throws {
        let cache = TemporaryDirectory("serve-imgproxy")
        defer { cache.remove() }
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--log-level", "warning",
            "--origin-dir", Fixture.demoImages.path, "--imgproxy-prefix", "/",
        ], environment: [
            "IMGPROXY_KEY": "736563726574", "IMGPROXY_SALT": "68656C6C6F", "IMGPROXY_SIGNATURE_SIZE": "8",
            "IMGPROXY_PRESETS": "default=f:png,small=rs:fit:16:16",
        ])
        defer { server.terminate() }
        let base = "http://127.0.0.1:\(try await server.port())"
        let short = try #require(ImgproxySigner(key: "736563726574", salt: "68656C6C6F", signatureSize: 8))
        let reply = try await get(base + short.sign("/pr:small/plain/local:///flower.webp"))
        #expect(reply.status == 200)
        #expect(ImageFormat(sniffing: reply.body) == .png)
        let whole = try #require(ImgproxySigner(key: "736563726574", salt: "68656C6C6F"))
        #expect(try await get(base + whole.sign("/pr:small/plain/local:///flower.webp")).status == 403)
        #expect(try await get(base + "/insecure/pr:small/plain/local:///flower.webp").status == 403)
        #expect(try await get(base + "/health").status == 200)
        #expect(try await get(base + "/healthz").status == 200)
        #expect(try await get(base + "/thumbor/healthcheck").status == 200)
    }

    /// The flags, under the default prefix.
    @Test func imgproxyFromFlags() async throws {
        let cache = TemporaryDirectory("serve-imgproxy-flags")
        defer { cache.remove() }
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--log-level", "warning", "--origin-dir", Fixture.demoImages.path,
            "--imgproxy-key", "00ff", "--imgproxy-salt", "ab", "--imgproxy-preset", "tiny=w:8", "--imgproxy-preset", "default=f:webp",
        ])
        defer { server.terminate() }
        let base = "http://127.0.0.1:\(try await server.port())"
        let signer = try #require(ImgproxySigner(key: "00ff", salt: "ab"))
        let reply = try await get(base + "/imgproxy" + signer.sign("/pr:tiny/plain/local:///Spring.png"))
        #expect(reply.status == 200)
        #expect(ImageFormat(sniffing: reply.body) == .webp)
        #expect(try await get(base + "/imgproxy/health").status == 200)
        #expect(try await get(base + signer.sign("/pr:tiny/plain/local:///Spring.png")).status == 404)
    }

    /// What cannot be served is refused at the start, naming the setting.
    @Test func imgproxySettingsAreChecked() throws {
        let executable = try #require(WebImageExecutable.url)
        let refusals: [([String], String)] = [
            (["--imgproxy-prefix", "/", "--thumbor-prefix", "/"], "cannot both be served at /"),
            (["--imgproxy-prefix", "imgproxy"], "--imgproxy-prefix must start with /"),
            (["--imgproxy-key", "zz", "--imgproxy-salt", "00"], "the imgproxy key and salt must both be given, in hex"),
            (["--imgproxy-key", "00ff"], "the imgproxy key and salt must both be given, in hex"),
            (["--imgproxy-signature-size", "33"], "the imgproxy signature size must be from 1 to 32"),
            (["--imgproxy-preset", "nothing"], "imgproxy presets: a preset is name=options"),
            (["--imgproxy-preset", "a=rs:stretch"], "imgproxy presets: preset a: the resizing type must be"),
        ]
        for (arguments, message) in refusals {
            let run = try CommandRun(executable, ["serve", "--port", "0"] + arguments)
            #expect(run.status != 0, "\(arguments)")
            #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
        }
    }

    /// --header-timeout 8: a connection that never finishes its request is closed;
    /// --max-connections 1: a second connection is refused; --idle-timeout 10: the first is closed
    /// once idle, which frees its slot for the next. The timeouts leave room for a loaded
    /// machine between a connect and its first write, and between an answer and the refusal
    /// checked while the connection is still held: in the parallel suite a test's task can wait
    /// seconds for a thread of the two-wide cooperative pool (2 s was once too little in CI).
    /// They stretch by `Deadlines.stretch`, as the suite's waits do (under TSan the server is as slow as the tests).
    @Test(.timeLimit(.minutes(1 * Deadlines.stretch))) func connectionFlags() async throws {
        let cache = TemporaryDirectory("serve-connections")
        defer { cache.remove() }
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--log-level", "warning",
            "--header-timeout", "\(8 * Deadlines.stretch)", "--idle-timeout", "\(10 * Deadlines.stretch)",
            "--max-connections", "1", "--reserved-connections", "0",
        ])
        defer { server.terminate() }
        let port = try await server.port()
        // The only connection, so not refused: closed by the header timeout.
        try await RawHTTPConnection.with(port: port) { silent in
            do {
                try await silent.sendRaw("GET /healthz HTTP/1.1\r\n")
            } catch is ChannelError {
                // Already closed by the header timeout before the partial request went out.
            }
            #expect(try await silent.isClosedByServer())
        }
        try await RawHTTPConnection.with(port: port) { held in
            try await held.send(["GET /healthz HTTP/1.1"])
            #expect(try await held.response().status == 200)
            #expect(try await RawHTTPConnection.isRefused(port: port))
            #expect(try await held.isClosedByServer())
        }
        try await RawHTTPConnection.with(port: port) { connection in
            try await connection.send(["GET /healthz HTTP/1.1"])
            #expect(try await connection.response().status == 200)
        }
    }

    /// `--max-connections-per-client`, `--reserved-connections` and `--trusted-proxy` reach the
    /// server: one client's second connection is refused, another client's lands in the
    /// reserve, which answers `/healthz` and nothing else; an address that is not one is refused.
    @Test(.timeLimit(.minutes(1 * Deadlines.stretch))) func perClientAndReserveFlags() async throws {
        let cache = TemporaryDirectory("serve-per-client")
        defer { cache.remove() }
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--log-level", "warning",
            "--max-connections", "1", "--max-connections-per-client", "1", "--reserved-connections", "1",
            "--trusted-proxy", "127.0.0.9",
        ])
        defer { server.terminate() }
        let port = try await server.port()
        try await RawHTTPConnection.with(port: port) { held in
            try await held.send(["GET /healthz HTTP/1.1"])
            #expect(try await held.response().status == 200)
            #expect(try await RawHTTPConnection.isRefused(port: port))
            try await RawHTTPConnection.with(port: port, from: "127.0.0.2") { reserve in
                try await reserve.send(["GET /healthz HTTP/1.1"])
                #expect(try await reserve.response().status == 200)
                try await reserve.send(["GET /image?url=x HTTP/1.1"])
                #expect(try await reserve.response().status == 503)
            }
        }
        let run = try CommandRun(try #require(WebImageExecutable.url), ["serve", "--trusted-proxy", "proxy.example", "--port", "0"])
        #expect(run.status != 0 && run.stderr.contains("not an IP address"), "\(run.stderr)")
    }

    @Test func connectionFlagsMustBePositive() throws {
        for flag in ["--header-timeout", "--idle-timeout", "--max-connections"] {
            let run = try CommandRun(try #require(WebImageExecutable.url), ["serve", flag, "0", "--port", "0"])
            #expect(run.status != 0)
            #expect(run.stderr.contains("\(flag) must be at least 1"), "\(run.stderr)")
        }
    }

    /// `--max-animation-pixels` reaches the decoder: the demo GIF (320×240, 31 frames, 2.4
    /// million canvas pixels) is refused under a lower limit and served under the default.
    @Test(.timeLimit(.minutes(1 * Deadlines.stretch))) func animationWorkFlag() async throws {
        for (limit, status) in [(["--max-animation-pixels", "1000000"], 413), ([], 200)] {
            let cache = TemporaryDirectory("serve-animation")
            defer { cache.remove() }
            let server = try ServeProcess(try #require(WebImageExecutable.url), [
                "serve", "--port", "0", "--cache-dir", cache.path, "--log-level", "warning",
                "--origin-dir", Fixture.demoImages.path,
            ] + limit)
            defer { server.terminate() }
            let port = try await server.port()
            let request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/image?url=local%3A%2F%2F%2Fchi-animated.gif&w=64")
            // The suite's deadline: a 30 s one is less than a loaded machine's render of the GIF can take.
            let response = try await HTTPClient.tests.execute(request, timeout: .seconds(60 * Int64(Deadlines.stretch)))
            #expect(Int(response.status.code) == status, "\(limit)")
        }
    }

    /// `--threads N`: the server's images are made on N threads of its own (named
    /// `serve.image.0`…, as `/proc` shows them), and the image is served; 0 is refused.
    @Test(.timeLimit(.minutes(1 * Deadlines.stretch))) func threadsFlag() async throws {
        let cache = TemporaryDirectory("serve-threads")
        defer { cache.remove() }
        let server = try ServeProcess(try #require(WebImageExecutable.url), [
            "serve", "--port", "0", "--cache-dir", cache.path, "--log-level", "warning",
            "--origin-dir", Fixture.demoImages.path, "--threads", "3",
        ])
        defer { server.terminate() }
        let port = try await server.port()
        let reply = try await get("http://127.0.0.1:\(port)/image?url=local%3A%2F%2F%2FSpring.png&w=64&format=webp")
        #expect(reply.status == 200 && ImageFormat(sniffing: reply.body) == .webp)
        let names = try threadNames(ofProcess: server.process.processIdentifier)
        #expect(names.filter { $0.hasPrefix("serve.image.") }.sorted() == ["serve.image.0", "serve.image.1", "serve.image.2"], "\(names)")

        let refused = try CommandRun(try #require(WebImageExecutable.url), ["serve", "--threads", "0", "--port", "0"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--threads must be at least 1"), "\(refused.stderr)")
    }

    @Test func shutdownGraceMustNotBeNegative() throws {
        let run = try CommandRun(try #require(WebImageExecutable.url), ["serve", "--shutdown-grace=-1", "--port", "0"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("--shutdown-grace must be at least 0"), "\(run.stderr)")
    }

    /// The S3 flags are checked before the server starts: each wrong combination exits at once
    /// with a message naming what is missing.
    @Test(arguments: [
        (["--origin-store"], [String: String](), "--origin-store needs --result-store"),
        (["--result-store", "https://bucket.example.com/prefix"], [:], "--result-store must be s3://bucket"),
        (["--result-store", "s3://results/prefix"], ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""], "need AWS_ENDPOINT_URL"),
        (["--allow-bucket", "photos"], ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""], "need AWS_ENDPOINT_URL"),
        (["--result-store", "s3://results/prefix", "--result-store-timeout", "0"], ["AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"], "--result-store-timeout must be at least 1"),
    ])
    func s3FlagsAreChecked(_ flags: [String], _ environment: [String: String], _ message: String) async throws {
        let server = try ServeProcess(try #require(WebImageExecutable.url), ["serve", "--port", "0"] + flags, environment: environment)
        #expect(await server.waitForExit() != 0)
        #expect(server.stderr.joined(separator: "\n").contains(message), "\(server.stderr)")
    }

    @Test func badFlagsFailAtOnce() throws {
        let run = try CommandRun(try #require(WebImageExecutable.url), ["serve", "--origin-dir", "/nonexistent-folder-for-test", "--port", "0"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("is not a folder"))
    }
}
