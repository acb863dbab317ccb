import AsyncHTTPClient
import Foundation

extension HTTPClient {
    /// The tests' HTTP client: `HTTPClient.shared`'s configuration without its 90 s read timeout,
    /// so that only the deadline each request is given ends it. A server rendering on a loaded
    /// two-core machine can send nothing for longer than that: beside two busy loops, 110 tests
    /// failed on that read timeout, within their deadlines. The connect timeout (90 s there)
    /// stretches like the deadlines.
    public static let tests: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.timeout = .init(connect: .seconds(60 * Int64(Deadlines.stretch)), read: nil)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()
}

/// `text` percent-encoded but for RFC 3986's unreserved characters: an origin's URL as the
/// value of a proxy's `url=`, or as one segment of a dialect's path.
public func percentEncoded(_ text: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return text.addingPercentEncoding(withAllowedCharacters: allowed)!
}
