import Foundation
import NIOCore
import NIOSSL
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport

/// HTTPS through the egress guard: the guard connects to the address it checked (127.0.0.1,
/// which only the test's resolver gives for `img.test`), and TLS still verifies the origin's
/// certificate against the host name of the URL, not against the address reached. The origin
/// is a real TLS server on loopback with a certificate from an authority the test makes.
@Suite(.enabled(if: Requirement.met(TestCertificates.openssl != nil), "no openssl command to make the test's certificates"),
       .timeLimit(.minutes(3 * Deadlines.stretch)))
struct EgressTLSTests {
    static let host = "img.test"

    /// An HTTPS origin on loopback presenting `certificate`, serving the elephants at `/e.jpg`.
    static func origin(certificate: URL, key: URL) async throws -> TestOrigin {
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificate.path).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key.path, format: .pem)))
        let context = try NIOSSLContext(configuration: configuration)
        let origin = try await TestOrigin.start { channel in
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
        }
        origin.register("/e.jpg", data: try Fixture.elephants)
        return origin
    }

    /// An HTTPS origin on loopback whose certificate names `certificateName` (signed by a fresh
    /// authority), and a proxy in front of it: its resolver answers 127.0.0.1 for ``host``,
    /// loopback is allowed, no origin is trusted, and the authority is among its trust roots
    /// when `trustsAuthority`.
    struct Setup {
        let certificates: TestCertificates
        let origin: TestOrigin
        let dns = ProxySecurityTests.ScriptedDNS(name: EgressTLSTests.host) { _ in IPAddress("127.0.0.1")! }
        let harness: ProxyHarness

        init(certificateName: String, trustsAuthority: Bool = true) async throws {
            certificates = try await TestCertificates.make()
            let server = try await certificates.server(for: certificateName)
            let origin = try await EgressTLSTests.origin(certificate: server.certificate, key: server.key)
            let (dns, roots) = (self.dns, trustsAuthority ? [certificates.authority] : [])
            harness = try await ProxyHarness.start(origin: origin) {
                $0.trustedOrigins = []
                $0.addressPolicy = AddressPolicy(allowsLoopback: true)
                $0.resolver = dns.resolver
                $0.originTrustRoots = roots
            }
            self.origin = origin
        }

        var source: String { "https://\(EgressTLSTests.host):\(origin.port)/e.jpg" }

        func stop() async {
            await harness.stop()
            certificates.remove()
        }
    }

    /// The kind of network failure loading `source` through the proxy's own loader gives.
    static func failure(loading source: String, in harness: ProxyHarness) async -> ImageError.NetworkFailure.Kind? {
        do {
            _ = try await harness.proxy.manager.image(for: URL(string: source)!)
            return nil
        } catch ImageError.network(let failure) {
            return failure.kind
        } catch {
            Issue.record("\(type(of: error)): \(error)")
            return nil
        }
    }

    @Test func aCertificateForTheHostNameVerifiesThroughTheGuard() async throws {
        let setup = try await Setup(certificateName: Self.host)
        defer { Task { await setup.stop() } }

        let reply = try await setup.harness.request(ProxyHarness.imagePath(url: setup.source, "w=10"))
        #expect(reply.status == 200)
        #expect(try reply.decoded().image.width == 10)
        #expect(setup.origin.requestCount(path: "/e.jpg") == 1)
        #expect(setup.origin.allRequests.first?.header("Host") == "\(Self.host):\(setup.origin.port)")
        // The proxy's check, the loader's check of the first hop, and the egress guard's: the
        // connection went where the guard resolved, and TLS verified img.test over it.
        #expect(setup.dns.count == 3)
    }

    /// The same origin, address and authority with a certificate for another name: the handshake
    /// fails on the host name, a typed TLS failure, and nothing reaches the origin's HTTP side.
    @Test func aCertificateForAnotherNameFails() async throws {
        let setup = try await Setup(certificateName: "other.test")
        defer { Task { await setup.stop() } }

        #expect(try await setup.harness.request(ProxyHarness.imagePath(url: setup.source, "w=10")).status == 502)
        #expect(await Self.failure(loading: setup.source, in: setup.harness) == .tls)
        #expect(setup.origin.allRequests.isEmpty)
        // It did connect, through the guard: the guard asked the resolver.
        #expect(setup.dns.count >= 3)
    }

    /// Without the authority among the trust roots, the right name is not enough: the roots
    /// are what ``ImageProxy/Configuration/originTrustRoots`` adds, verification stays on.
    @Test func anUntrustedAuthorityFails() async throws {
        let setup = try await Setup(certificateName: Self.host, trustsAuthority: false)
        defer { Task { await setup.stop() } }

        #expect(try await setup.harness.request(ProxyHarness.imagePath(url: setup.source, "w=10")).status == 502)
        #expect(await Self.failure(loading: setup.source, in: setup.harness) == .tls)
        #expect(setup.origin.allRequests.isEmpty)
    }
}
