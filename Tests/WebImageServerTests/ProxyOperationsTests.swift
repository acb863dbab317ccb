import Foundation
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

/// Saturation, health, metrics and the gallery.
@Suite struct ProxyOperationsTests {
    /// Two requests held at the origin fill a proxy that takes two: the third is refused at
    /// once with 503 and Retry-After, health checks still pass, and once the origin answers
    /// the proxy takes requests again. The gates decide the order; nothing sleeps.
    @Test func saturationIsAnswered503() async throws {
        let harness = try await ProxyHarness.start { $0.limits.maximumConcurrentRequests = 2 }
        defer { Task { await harness.stop() } }
        harness.origin.register("/a.jpg", data: try Fixture.elephants)
        harness.origin.register("/b.jpg", data: try Fixture.elephants)
        let gateA = harness.origin.gate("/a.jpg")
        let gateB = harness.origin.gate("/b.jpg")

        async let a = harness.get("/a.jpg", "w=10")
        async let b = harness.get("/b.jpg", "w=10")
        #expect(await harness.origin.waitForRequests(count: 2))
        #expect(harness.proxy.limiter.current == 2)

        let refused = try await harness.get("/a.jpg", "w=20")
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "1")
        #expect(refused.text == "busy, retry shortly\n")
        #expect(try await harness.request("/healthz").status == 200)

        gateA.open()
        gateB.open()
        #expect(try await a.status == 200)
        #expect(try await b.status == 200)
        #expect(try await harness.get("/a.jpg", "w=20").status == 200)
        #expect(harness.origin.allRequests.count == 2)
    }

    @Test func health() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        let reply = try await harness.request("/healthz")
        #expect(reply.status == 200 && reply.text == "ok\n")
        #expect(try await harness.request("/healthz", method: .HEAD).status == 200)
        #expect(try await harness.request("/favicon.ico").status == 204)
    }

    @Test func metricsInPrometheusFormat() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        _ = try await harness.get("/e.jpg", "w=10")
        _ = try await harness.get("/e.jpg", "w=10")
        _ = try await harness.get("/e.jpg", "w=abc")

        let reply = try await harness.request("/metrics")
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = reply.text
        #expect(text.contains(#"webimage_proxy_requests_total{route="/image",status="200"} 2"#))
        #expect(text.contains(#"webimage_proxy_requests_total{route="/image",status="400"} 1"#))
        #expect(text.contains(#"webimage_proxy_variants_total{source="memory"} 1"#))
        #expect(text.contains(#"webimage_proxy_variants_total{source="miss"} 1"#))
        #expect(text.contains("# TYPE webimage_proxy_request_duration_seconds histogram"))
        // The pipeline's own instruments report into the same registry.
        #expect(text.contains("webimage_downloaded_bytes_total"))
    }

    @Test func galleryShowsTheOriginFolderAsResponsiveThumbnails() async throws {
        let harness = try await ProxyHarness.start { $0.originDirectory = Fixture.demoImages }
        defer { Task { await harness.stop() } }

        let page = try await harness.request("/")
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        let html = page.text
        let names = try FileManager.default.contentsOfDirectory(atPath: Fixture.demoImages.path)
        for name in names {
            #expect(html.contains("alt=\"\(name)\""), "\(name)")
        }
        #expect(html.components(separatedBy: "srcset=").count - 1 == names.count)
        for width in Gallery.widths {
            #expect(html.contains("w=\(width)&amp;h=\(width)&amp;fit=cover&amp;format=auto \(width)w"))
        }
        // Every thumbnail the page names is served.
        let sources = html.components(separatedBy: "src=\"").dropFirst().compactMap { $0.split(separator: "\"").first }
        #expect(sources.count == names.count)
        for source in sources {
            let reply = try await harness.request(source.replacingOccurrences(of: "&amp;", with: "&"), headers: [("Accept", "image/webp,*/*")])
            #expect(reply.status == 200, "\(source)")
            #expect(reply.format == .webp, "\(source)")
        }
    }

    @Test func theGallerySignsItsURLs() async throws {
        let harness = try await ProxyHarness.start {
            $0.originDirectory = Fixture.demoImages
            $0.signingKey = "gallery-key"
        }
        defer { Task { await harness.stop() } }
        let html = try await harness.request("/").text
        let source = try #require(html.components(separatedBy: "src=\"").dropFirst().first?.split(separator: "\"").first)
        #expect(source.contains("&amp;sig="))
        #expect(try await harness.request(source.replacingOccurrences(of: "&amp;", with: "&")).status == 200)
    }
}
