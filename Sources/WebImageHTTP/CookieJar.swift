import Foundation
import Synchronization

/// A small in-memory cookie store for image requests (AsyncHTTPClient keeps no cookies).
///
/// It keeps `name=value` per domain and path, honours `Max-Age` and `Expires` (including their
/// use to delete a cookie), `Domain` (a cookie for a parent domain, never for an unrelated
/// one), `Path` and `Secure`. It is not a full RFC 6265 implementation: no public-suffix list,
/// no `SameSite`, no size limits beyond a cap on the count.
///
/// ```swift
/// let jar = CookieJar()
/// jar.store(setCookie: ["session=abc; Path=/; Max-Age=3600"], from: URL(string: "https://img.example.com/a")!)
/// let header = jar.cookieHeader(for: URL(string: "https://img.example.com/b.png")!)   // "session=abc"
/// ```
public final class CookieJar: Sendable {
    struct Cookie: Sendable, Equatable {
        var name: String
        var value: String
        /// Lowercased, without a leading dot.
        var domain: String
        /// `true` when the response set no `Domain`: then only that exact host gets it back.
        var hostOnly: Bool
        var path: String
        var expires: Date?
        var secure: Bool
    }

    private let cookies = Mutex<[Cookie]>([])
    /// Cookies kept at most; the oldest go first.
    package let capacity: Int

    public init(capacity: Int = 1000) {
        self.capacity = capacity
    }

    /// Keeps the cookies of `Set-Cookie` header values a response from `url` carried.
    public func store(setCookie values: [String], from url: URL, now: Date = Date()) {
        guard let host = url.host?.lowercased(), !values.isEmpty else { return }
        let parsed = values.compactMap { Self.parse($0, host: host, requestPath: url.path, now: now) }
        cookies.withLock { cookies in
            for cookie in parsed {
                cookies.removeAll { $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path }
                if let expires = cookie.expires, expires <= now { continue }  // a deletion
                cookies.append(cookie)
            }
            if cookies.count > capacity { cookies.removeFirst(cookies.count - capacity) }
        }
    }

    /// The `Cookie` header value for a request to `url`, or `nil` when no cookie applies.
    /// Longer paths come first, as RFC 6265 §5.4 asks.
    public func cookieHeader(for url: URL, now: Date = Date()) -> String? {
        guard let host = url.host?.lowercased() else { return nil }
        let path = url.path.isEmpty ? "/" : url.path
        let secure = url.scheme?.lowercased() == "https"
        let matching = cookies.withLock { cookies in
            cookies.removeAll { $0.expires.map { $0 <= now } ?? false }
            return cookies.filter { cookie in
                (cookie.hostOnly ? host == cookie.domain : Self.domain(host, matches: cookie.domain))
                    && Self.path(path, matches: cookie.path)
                    && (!cookie.secure || secure)
            }
        }
        guard !matching.isEmpty else { return nil }
        return matching
            .enumerated()
            .sorted { $0.element.path.count != $1.element.path.count ? $0.element.path.count > $1.element.path.count : $0.offset < $1.offset }
            .map { "\($0.element.name)=\($0.element.value)" }
            .joined(separator: "; ")
    }

    /// Forgets every cookie.
    public func removeAll() {
        cookies.withLock { $0.removeAll() }
    }

    static func parse(_ header: String, host: String, requestPath: String, now: Date) -> Cookie? {
        let parts = header.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { return nil }
        let name = pair[..<equals].trimmingCharacters(in: .whitespaces)
        let value = pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        var cookie = Cookie(
            name: name, value: value, domain: host, hostOnly: true,
            path: defaultPath(requestPath), expires: nil, secure: false)
        var maxAgeSeen = false
        for attribute in parts.dropFirst() {
            let pieces = attribute.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let key = pieces.first?.lowercased() else { continue }
            let argument = pieces.count > 1 ? pieces[1] : ""
            switch key {
            case "max-age":
                // Max-Age wins over Expires whatever their order (RFC 6265 §5.3 step 3).
                guard let seconds = Int(argument) else { continue }
                maxAgeSeen = true
                cookie.expires = seconds <= 0 ? .distantPast : now.addingTimeInterval(TimeInterval(seconds))
            case "expires" where !maxAgeSeen:
                if let date = HTTPDate.parse(argument) { cookie.expires = date }
            case "domain":
                var domain = argument.lowercased()
                if domain.hasPrefix(".") { domain.removeFirst() }
                guard !domain.isEmpty else { continue }
                // A server may set a cookie for itself or a parent domain, never for another.
                guard Self.domain(host, matches: domain) else { return nil }
                cookie.domain = domain
                cookie.hostOnly = false
            case "path":
                cookie.path = argument.hasPrefix("/") ? argument : defaultPath(requestPath)
            case "secure":
                cookie.secure = true
            default:
                continue
            }
        }
        return cookie
    }

    /// RFC 6265 §5.1.4: the request path up to, not including, its last `/`.
    static func defaultPath(_ path: String) -> String {
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    static func domain(_ host: String, matches domain: String) -> Bool {
        host == domain || (host.hasSuffix("." + domain) && !host.allSatisfy { $0.isNumber || $0 == "." })
    }

    static func path(_ path: String, matches cookiePath: String) -> Bool {
        guard path.hasPrefix(cookiePath) else { return false }
        return path.count == cookiePath.count || cookiePath.hasSuffix("/") || path.dropFirst(cookiePath.count).hasPrefix("/")
    }
}

/// Parses HTTP dates (RFC 9110 §5.6.7): the IMF-fixdate every current server sends, plus the
/// obsolete RFC 850 and asctime forms.
enum HTTPDate {
    static func parse(_ string: String) -> Date? {
        // A formatter per call: Foundation's formatters are not safe to share across threads
        // on Linux, and dates are parsed once per response at most.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy", "EEE, dd-MMM-yyyy HH:mm:ss zzz"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: string) { return date }
        }
        return nil
    }
}
