import ArgumentParser
import Foundation
import WebImage

/// What an image argument names: a URL with a scheme (`https:`, `file:`, `data:`), or else a
/// path on this machine, made absolute against the current folder. `nil` when a URL cannot be
/// made of it.
func imageURL(_ argument: String) -> URL? {
    let hasScheme = argument.range(of: "^[A-Za-z][A-Za-z0-9+.-]*:", options: .regularExpression) != nil
    // "C:" would be a scheme, but this is Linux: a one-letter scheme is taken for a path too.
    if hasScheme, argument.firstIndex(of: ":").map({ argument.distance(from: argument.startIndex, to: $0) > 1 }) == true {
        return URL(string: argument)
    }
    guard !argument.isEmpty else { return nil }
    return URL(fileURLWithPath: argument)
}

/// A size in bytes as people write it: `1048576`, `512K`, `1MiB`, `1MB`, `2G`. K, M, G, T and
/// KiB, MiB, GiB, TiB are powers of 1024; kB, MB, GB, TB powers of 1000 (GNU coreutils' rule).
/// Case does not matter.
struct ByteCount: ExpressibleByArgument {
    var bytes: Int

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces)
        let digits = text.prefix { $0.isNumber || $0 == "." }
        guard let number = Double(digits), number >= 0 else { return nil }
        let unit = text.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        let scale: Double
        switch unit {
        case "", "b", "byte", "bytes": scale = 1
        case "k", "kib": scale = 1024
        case "m", "mib": scale = 1024 * 1024
        case "g", "gib": scale = 1024 * 1024 * 1024
        case "t", "tib": scale = 1024 * 1024 * 1024 * 1024
        case "kb": scale = 1e3
        case "mb": scale = 1e6
        case "gb": scale = 1e9
        case "tb": scale = 1e12
        default: return nil
        }
        let value = (number * scale).rounded()
        guard value < Double(Int.max) else { return nil }
        bytes = Int(value)
    }

    static var defaultValueDescription: String { "bytes" }
}

/// `--verbose`, shared by the commands that report failures.
struct ReportingOptions: ParsableArguments {
    @Flag(help: "Follow each failure with the underlying error, as the library reports it.")
    var verbose = false

    /// A failure in one plain sentence (what the user can act on), then with `--verbose` the
    /// library's own description in parentheses.
    func describe(_ error: any Error) -> String {
        let plain = plainDescription(of: error)
        let detail = "\(error)"
        return verbose && detail != plain ? "\(plain) (\(detail))" : plain
    }
}

/// A failure as a user reads it: no library internals (NIO's error names, errno values).
func plainDescription(of error: any Error) -> String {
    guard let error = error as? ImageError else { return "\(error)" }
    switch error {
    case .network(let failure):
        switch failure.kind {
        case .connectionRefused: return "the server refused the connection"
        case .connectionLost: return "the connection was lost before the image arrived"
        case .dnsFailure: return "the host name does not resolve"
        case .tls: return "the secure connection (TLS) failed"
        case .redirects: return "too many redirects"
        case .invalidResponse: return "the server's answer is not valid HTTP"
        case .other: return "the download failed"
        }
    case .httpStatus(let status):
        return "the server answered HTTP \(status)"
    case .storage(let failure):
        return "\(failure)"
    case .timeout: return "timed out"
    case .cancelled: return "cancelled"
    case .invalidURL: return "not a URL webimage can load"
    default: return "\(error)"
    }
}

/// "1 URL", "3 URLs"; "1 entry", "2 entries".
func counted(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
}
