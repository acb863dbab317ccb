import Foundation
import Synchronization
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

/// Signed URLs and SSRF refusals, end to end. Every target is a loopback address: the proxy
/// must refuse them before any connection (the origin sees nothing), and the test never sends
/// anything anywhere else. Private, link-local, multicast and mapped ranges are covered by
/// `AddressPolicyTests`, which open no connection at all.
///
/// The SSRF tests run through each URL dialect: each parses its source its own way (a query
/// parameter, thumbor's path, imgproxy's `plain/`) before the one origin guard sees it.
@Suite struct ProxySecurityTests {
    /// A URL dialect, and its request for a `width` px wide image of a source URL.
    enum Dialect: String, CaseIterable, CustomTestStringConvertible {
        case image, thumbor, imgproxy

        var testDescription: String { rawValue }

        func path(_ source: String, width: Int = 10) -> String {
            switch self {
            case .image: ProxyHarness.imagePath(url: source, "w=\(width)")
            case .thumbor: "/thumbor/unsafe/\(width)x0/" + ProxyHarness.encoded(source)
            case .imgproxy: "/imgproxy/insecure/w:\(width)/plain/" + ProxyHarness.encoded(source)
            }
        }
    }

    /// A proxy answering every dialect's unsigned URLs, configured further by `configure`.
    static func start(
        origin: TestOrigin? = nil,
        cacheDirectory: TemporaryDirectory? = nil,
        _ configure: (inout ImageProxy.Configuration) -> Void = { _ in }
    ) async throws -> ProxyHarness {
        let harness = try await ProxyHarness.start(origin: origin, cacheDirectory: cacheDirectory) { configuration in
            configuration.thumbor.allowsUnsafe = true
            configure(&configuration)
        }
        if origin == nil { harness.origin.register("/e.jpg", data: try Fixture.elephants) }
        return harness
    }

    // MARK: Signatures

    @Test func signedURLsAreRequiredWhenAKeyIsSet() async throws {
        let harness = try await ProxyHarness.start { $0.signingKey = "test-key" }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let signer = URLSigner(key: "test-key")
        let target = harness.imagePath("/e.jpg", "w=100")

        let unsigned = try await harness.request(target)
        #expect(unsigned.status == 403 && unsigned.text == "missing or invalid signature\n")

        let signed = try await harness.request(signer.sign(target))
        #expect(signed.status == 200)
        #expect(signed.header("Cache-Control") == "public, max-age=86400, immutable")

        let wrongKey = try await harness.request(URLSigner(key: "other").sign(target))
        #expect(wrongKey.status == 403)
        let tampered = signer.sign(target).replacingOccurrences(of: "w=100", with: "w=1000")
        #expect(try await harness.request(tampered).status == 403)
        // The signature is checked before the parameters: a bad request without one is 403.
        #expect(try await harness.request("/image?w=abc").status == 403)
        // A signed bad request is still a bad request.
        #expect(try await harness.request(signer.sign(harness.imagePath("/e.jpg", "w=abc"))).status == 400)
        #expect(harness.origin.requestCount(path: "/e.jpg") == 1)
    }

    /// Hostile-input finding 2: with `--signing-key`, `/image` was closed and imgproxy's URLs
    /// (whose dialect had no key) answered anyone. One rule now: any key closes every dialect
    /// that has none of its own, unless the operator opens it by name.
    @Test func anyKeyClosesEveryDialectWithoutOne() async throws {
        let harness = try await ProxyHarness.start { $0.signingKey = "test-key" }
        defer { Task { await harness.stop() } }
        harness.origin.register("/q.png", data: try Fixture.png)
        for signature in ["insecure", "_", "anything"] {
            let path = "/imgproxy/\(signature)/rs:fit:64:64/plain/" + harness.origin.url("/q.png").absoluteString
            let reply = try await harness.request(path)
            #expect(reply.status == 403, "\(path)")
        }
        #expect(harness.origin.requestCount(path: "/q.png") == 0)
        #expect(harness.proxy.configuration.unsignedRoutes.isEmpty)
    }

    @Test func aDialectOpenedByNameAnswersUnsignedURLsBesideAKey() async throws {
        let harness = try await ProxyHarness.start {
            $0.thumbor.key = "thumbor-key"
            $0.imgproxy.allowsUnsigned = true
        }
        defer { Task { await harness.stop() } }
        harness.origin.register("/q.png", data: try Fixture.png)
        // thumbor's key closes /image (no key of its own, not opened)…
        #expect(try await harness.request(harness.imagePath("/q.png", "w=16")).status == 403)
        // …while imgproxy, opened by name, answers.
        let path = "/imgproxy/insecure/rs:fit:16:16/plain/" + harness.origin.url("/q.png").absoluteString
        #expect(try await harness.request(path).status == 200)
        #expect(harness.proxy.configuration.unsignedRoutes == ["/imgproxy/…"])
    }

    @Test func withNoKeyAtAllImageAndImgproxyAreOpenAndSaySo() async throws {
        let harness = try await ProxyHarness.start()
        defer { Task { await harness.stop() } }
        harness.origin.register("/q.png", data: try Fixture.png)
        #expect(try await harness.request(harness.imagePath("/q.png", "w=16")).status == 200)
        let path = "/imgproxy/_/rs:fit:16:16/plain/" + harness.origin.url("/q.png").absoluteString
        #expect(try await harness.request(path).status == 200)
        #expect(harness.proxy.configuration.unsignedRoutes == ["/image", "/info", "/imgproxy/…"])
        var unsafeThumbor = ImageProxy.Configuration(cacheDirectory: nil)
        unsafeThumbor.thumbor.allowsUnsafe = true
        unsafeThumbor.imgproxy.prefix = nil
        #expect(unsafeThumbor.unsignedRoutes == ["/image", "/info", "/thumbor/unsafe/…"])
        var allowedImage = ImageProxy.Configuration(cacheDirectory: nil)
        allowedImage.imgproxy.key = "736563726574"
        allowedImage.imgproxy.salt = "68656C6C6F"
        allowedImage.allowsUnsignedImageURLs = true
        #expect(allowedImage.unsignedRoutes == ["/image", "/info"])
    }

    // MARK: SSRF

    /// Loopback targets the proxy must refuse: each a different spelling or address, on the
    /// origin's real port, so that a missed check would really reach the origin.
    static func loopbackTargets(port: Int) -> [String] {
        [
            "http://127.0.0.2:\(port)/e.jpg",
            "http://[::1]:\(port)/e.jpg",
            "http://localhost:\(port)/e.jpg",
            "http://LocalHost:\(port)/e.jpg",
            "http://127.1:\(port)/e.jpg",
            "http://2130706433:\(port)/e.jpg",
            "http://[::ffff:127.0.0.1]:\(port)/e.jpg",
            "http://0.0.0.0:\(port)/e.jpg",
            "http://[::]:\(port)/e.jpg",
        ]
    }

    @Test(arguments: Dialect.allCases) func loopbackTargetsAreRefused(_ dialect: Dialect) async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }

        // 127.0.0.1 itself, on another port than the trusted origin's: the proxy's own.
        var targets = Self.loopbackTargets(port: harness.origin.port)
        targets.append("http://127.0.0.1:\(harness.port)/metrics")
        for target in targets {
            let reply = try await harness.request(dialect.path(target))
            #expect(reply.status == 403, "\(target)")
            #expect(reply.text == "forbidden origin\n", "\(target)")
        }
        #expect(harness.origin.allRequests.isEmpty)
    }

    @Test(arguments: Dialect.allCases) func redirectsToLoopbackAreRefusedAtEachHop(_ dialect: Dialect) async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }

        var targets = Self.loopbackTargets(port: harness.origin.port)
        targets.append("http://127.0.0.1:\(harness.port)/healthz")
        for (index, target) in targets.enumerated() {
            // A fresh source URL each time, so nothing is answered from a cache.
            let source = harness.origin.url("/redirect-to?n=\(index)&location=" + ProxyHarness.encoded(target)).absoluteString
            let reply = try await harness.request(dialect.path(source))
            #expect(reply.status == 403, "\(target)")
            #expect(reply.text == "forbidden origin\n", "\(target)")
        }
        // The origin saw the redirects and nothing else: no hop was followed.
        let paths = Set(harness.origin.allRequests.map(\.path))
        #expect(paths == ["/redirect-to"])
        #expect(harness.origin.allRequests.count == targets.count)
        // A redirect within the trusted origin is followed.
        let followed = try await harness.request(dialect.path(harness.origin.url("/redirect/2/e.jpg").absoluteString))
        #expect(followed.status == 200)
    }

    /// The check does not depend on the original's being fetched now: bytes already in the
    /// (shared) disk cache are not served for a URL the guard refuses.
    @Test(arguments: Dialect.allCases) func cachedOriginalsOfRefusedURLsAreNotServed(_ dialect: Dialect) async throws {
        let first = try await Self.start()
        let source = first.origin.url("/e.jpg").absoluteString
        #expect(try await first.request(dialect.path(source)).status == 200)
        await first.stop(keepOrigin: true, keepCache: true)

        let second = try await Self.start(origin: first.origin, cacheDirectory: first.cacheDirectory) { $0.trustedOrigins = [] }
        defer { Task { await second.stop() } }
        #expect(try await second.request(dialect.path(source, width: 20)).status == 403)
        // Nor is a variant made before.
        #expect(try await second.request(dialect.path(source)).status == 403)
        #expect(second.decodeCount == 0)
        #expect(second.origin.requestCount(path: "/e.jpg") == 1)
    }

    /// A URL with credentials is refused when given directly (400), and when a redirect leads
    /// to it (403): the guard checks every hop, and credentials are one of its rules.
    @Test(arguments: Dialect.allCases) func redirectsToURLsWithCredentialsAreRefused(_ dialect: Dialect) async throws {
        let harness = try await Self.start()
        defer { Task { await harness.stop() } }
        let withCredentials = "http://user:secret@127.0.0.1:\(harness.origin.port)/e.jpg"

        #expect(try await harness.request(dialect.path(withCredentials)).status == 400)
        let source = harness.origin.url("/redirect-to?location=" + ProxyHarness.encoded(withCredentials)).absoluteString
        let reply = try await harness.request(dialect.path(source))
        #expect(reply.status == 403 && reply.text == "forbidden origin\n")
        #expect(harness.origin.requestCount(path: "/e.jpg") == 0)
        #expect(harness.origin.requestCount(path: "/redirect-to") == 1)
    }

    /// A variant made while loopback was allowed is not answered after a restart that refuses
    /// loopback, although its source is a host name that only resolving shows to be loopback.
    @Test(arguments: Dialect.allCases) func variantsMadeUnderALooserPolicyAreNotServedAfterARestart(_ dialect: Dialect) async throws {
        let looser = try await Self.start {
            $0.trustedOrigins = []
            $0.addressPolicy = AddressPolicy(allowsLoopback: true)
        }
        let source = "http://localhost:\(looser.origin.port)/e.jpg"
        #expect(try await looser.request(dialect.path(source)).status == 200)
        // The same proxy answers it again from its caches.
        #expect(try await looser.request(dialect.path(source)).status == 200)
        #expect(looser.origin.requestCount(path: "/e.jpg") == 1)
        await looser.stop(keepOrigin: true, keepCache: true)

        let stricter = try await Self.start(origin: looser.origin, cacheDirectory: looser.cacheDirectory) { $0.trustedOrigins = [] }
        defer { Task { await stricter.stop() } }
        let reply = try await stricter.request(dialect.path(source))
        #expect(reply.status == 403 && reply.text == "forbidden origin\n")
        #expect(stricter.decodeCount == 0)
        #expect(stricter.origin.requestCount(path: "/e.jpg") == 1)
    }

    /// Variants made while a host was on the allowlist are not answered after a restart whose
    /// allowlist lacks it. Given directly, such a host is refused before any cache is asked; the
    /// case only the policy digest (`OriginGuard.policyDigest`) catches is a source on a host
    /// still allowed that redirected to the removed one: the source passes today's checks, and
    /// only a fetch (which today's allowlist refuses at the redirect) could tell. The digest is
    /// in the variant's key and in the cached original's: with either left out, the old bytes
    /// are answered (before the original's key had it, the cached original was decoded again).
    @Test(arguments: Dialect.allCases) func variantsMadeUnderALongerAllowlistAreNotServedAfterARestart(_ dialect: Dialect) async throws {
        let looser = try await Self.start {
            $0.trustedOrigins = []
            $0.addressPolicy = AddressPolicy(allowsLoopback: true)
            $0.allowedHosts = ["localhost", "127.0.0.1"]
        }
        let removed = "http://127.0.0.1:\(looser.origin.port)/e.jpg"
        let redirecting = "http://localhost:\(looser.origin.port)/redirect-to?location=" + ProxyHarness.encoded(removed)
        for source in [removed, redirecting] {
            #expect(try await looser.request(dialect.path(source)).status == 200, "\(source)")
            #expect(try await looser.request(dialect.path(source)).status == 200, "\(source)")
        }
        #expect(looser.origin.requestCount(path: "/redirect-to") == 1)
        await looser.stop(keepOrigin: true, keepCache: true)

        let stricter = try await Self.start(origin: looser.origin, cacheDirectory: looser.cacheDirectory) {
            $0.trustedOrigins = []
            $0.addressPolicy = AddressPolicy(allowsLoopback: true)
            $0.allowedHosts = ["localhost"]
        }
        defer { Task { await stricter.stop() } }
        for source in [removed, redirecting] {
            let reply = try await stricter.request(dialect.path(source))
            #expect(reply.status == 403 && reply.text == "forbidden origin\n", "\(source)")
        }
        #expect(stricter.decodeCount == 0)
        // The redirect was asked for again, and refused where it led.
        #expect(stricter.origin.requestCount(path: "/redirect-to") == 2)
    }

    /// A DNS server that answers as a test says, counting the questions. An injected resolver,
    /// because pointing the proxy at a real DNS server on loopback would need a network
    /// namespace with its own resolv.conf around the whole test process.
    final class ScriptedDNS: Sendable {
        private let questions = Mutex(0)
        /// The one name it knows; every other fails to resolve.
        let name: String
        let answer: @Sendable (Int) -> IPAddress

        init(name: String = "rebind.test", answer: @escaping @Sendable (Int) -> IPAddress) {
            self.name = name
            self.answer = answer
        }

        var count: Int { questions.withLock { $0 } }

        var resolver: HostResolver {
            var resolver = HostResolver()
            resolver.lookup = { [self] name in
                guard name == self.name else { throw ImageError.network(.init(.dnsFailure, name)) }
                return [answer(questions.withLock { $0 += 1; return $0 })]
            }
            return resolver
        }
    }

    /// The connection goes where the guard's own resolution said, not where the system's
    /// resolver would: `rebind.test` exists only in the guard's resolver, and the fetch works.
    @Test func connectionsGoToTheAddressesTheGuardChecked() async throws {
        let dns = ScriptedDNS { _ in IPAddress("127.0.0.1")! }
        let harness = try await ProxyHarness.start {
            $0.trustedOrigins = []
            $0.addressPolicy = AddressPolicy(allowsLoopback: true)
            $0.resolver = dns.resolver
        }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        let reply = try await harness.request(ProxyHarness.imagePath(url: "http://rebind.test:\(harness.origin.port)/e.jpg", "w=10"))
        #expect(reply.status == 200)
        #expect(harness.origin.requestCount(path: "/e.jpg") == 1)
        // The proxy's check, the loader's check of the first hop, and the egress guard's, which
        // is the one connected to.
        #expect(dns.count == 3)
    }

    /// DNS rebinding: the checks before the fetch are answered with an allowed address, the
    /// connection's resolution with a refused one. The guard refuses it, and nothing listening
    /// on the refused address is ever reached.
    @Test(arguments: Dialect.allCases) func aNameThatRebindsToARefusedAddressIsNeverConnected(_ dialect: Dialect) async throws {
        let dns = ScriptedDNS { question in IPAddress(question <= 2 ? "127.0.0.1" : "127.0.0.2")! }
        let harness = try await Self.start {
            $0.trustedOrigins = []
            var policy = AddressPolicy(allowsLoopback: true)
            policy.refusedAddresses = [IPAddress("127.0.0.2")!]
            $0.addressPolicy = policy
            $0.resolver = dns.resolver
            // One attempt: the refused connection would otherwise be retried, and the retry's
            // first check (the fourth question) would refuse the name before any connection,
            // a 403 that no longer shows the egress guard's own refusal.
            $0.originRetryPolicy = .never
        }
        defer { Task { await harness.stop() } }
        // The internal service the rebinding aims at: 127.0.0.2 on the origin's port.
        let service = try #require(ListeningSocket(address: "127.0.0.2", port: harness.origin.port))
        defer { service.close() }

        let reply = try await harness.request(dialect.path("http://rebind.test:\(harness.origin.port)/e.jpg"))
        #expect(reply.status == 502)
        #expect(dns.count == 3)
        #expect(!service.hasPendingConnection)
        #expect(harness.origin.allRequests.isEmpty)
    }

    @Test(arguments: Dialect.allCases) func theAllowlistConfinesFetchingToItsHosts(_ dialect: Dialect) async throws {
        let harness = try await Self.start { $0.allowedHosts = ["images.example.invalid"] }
        defer { Task { await harness.stop() } }

        let reply = try await harness.request(dialect.path(harness.origin.url("/e.jpg").absoluteString))
        #expect(reply.status == 403 && reply.text == "forbidden origin\n")
        #expect(harness.origin.allRequests.isEmpty)
    }

    @Test func theLoopbackOptInLetsLoopbackThrough() async throws {
        let harness = try await ProxyHarness.start {
            $0.trustedOrigins = []
            $0.addressPolicy = AddressPolicy(allowsLoopback: true)
        }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)
        #expect(try await harness.get("/e.jpg", "w=10").status == 200)
        #expect(try await harness.request(ProxyHarness.imagePath(url: "http://localhost:\(harness.origin.port)/e.jpg", "w=10")).status == 200)
    }

    @Test(arguments: Dialect.allCases) func withoutTheOptInLoopbackIsRefused(_ dialect: Dialect) async throws {
        let harness = try await Self.start { $0.trustedOrigins = [] }
        defer { Task { await harness.stop() } }
        #expect(try await harness.request(dialect.path(harness.origin.url("/e.jpg").absoluteString)).status == 403)
        #expect(harness.origin.allRequests.isEmpty)
    }
}
