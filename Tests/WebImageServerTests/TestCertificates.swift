import Foundation
import WebImageTestSupport

/// A certificate authority of the test's own and server certificates it signs, made with the
/// `openssl` command (the package has no X.509 writer: swift-certificates is not among its
/// dependencies), in a temporary folder: PEM files a TLS server and a client's trust roots read.
struct TestCertificates {
    /// The `openssl` command, when installed.
    static let openssl: URL? = ["/usr/bin/openssl", "/usr/local/bin/openssl"]
        .map(URL.init(fileURLWithPath:))
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    let directory: TemporaryDirectory
    /// The authority's certificate: what a client adds to its trust roots.
    var authority: URL { directory.url.appendingPathComponent("ca.pem") }

    /// A fresh authority (P-256, valid for two days).
    static func make() async throws -> TestCertificates {
        let certificates = TestCertificates(directory: TemporaryDirectory("certificates"))
        try await certificates.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=webimage test authority",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        return certificates
    }

    /// A server certificate for `name`, signed by the authority (the one it signs: serial
    /// number 2): the paths of its PEM certificate and private key.
    func server(for name: String) async throws -> (certificate: URL, key: URL) {
        let extensions = directory.url.appendingPathComponent("\(name).ext")
        try Data("""
            subjectAltName=DNS:\(name)
            basicConstraints=CA:FALSE
            keyUsage=critical,digitalSignature
            extendedKeyUsage=serverAuth

            """.utf8).write(to: extensions)
        try await openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "\(name).key", "-out", "\(name).csr", "-subj", "/CN=\(name)",
        ])
        try await openssl([
            "x509", "-req", "-in", "\(name).csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "2",
            "-days", "2", "-extfile", extensions.path, "-out", "\(name).pem",
        ])
        return (directory.url.appendingPathComponent("\(name).pem"), directory.url.appendingPathComponent("\(name).key"))
    }

    func remove() { directory.remove() }

    private func openssl(_ arguments: [String]) async throws {
        guard let openssl = Self.openssl else { throw Failure(description: "no openssl command") }
        let child = try ChildProcess(openssl, arguments, directory: directory.url)
        let status = await child.waitForExit()
        guard status == 0 else {
            throw Failure(description: "openssl \(arguments.first ?? "") exited with \(status): \(child.stderr.joined(separator: "\n"))")
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }
}
