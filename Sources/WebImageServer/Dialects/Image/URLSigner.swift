import Crypto
import Foundation
import WebImageCore

/// Signs and verifies proxy URLs with HMAC-SHA256, so that only URLs made by someone holding
/// the key are served (no one else can make the proxy fetch or resize anything).
///
/// What is signed: the request target exactly as sent, path and query, without the `sig`
/// parameter, e.g. `/image?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300`. Parameters keep their
/// order and their percent-encoding; `sig` may stand anywhere and is removed with its `&`.
/// The signature is the MAC in lowercase hexadecimal (64 characters), sent as `sig`:
///
/// ```sh
/// printf '%s' '/image?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300' \
///   | openssl dgst -sha256 -hmac "$KEY" -r | cut -d' ' -f1
/// ```
///
/// ```swift
/// let signer = URLSigner(key: "secret")
/// let target = signer.sign("/image?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300")
/// // "/image?url=…&w=300&sig=6c1f…"
/// let valid = signer.isValid(path: "/image", query: "url=…&w=300&sig=6c1f…")   // true
/// ```
///
/// Verification compares MACs in constant time (swift-crypto's
/// `isValidAuthenticationCode`), so the time taken tells nothing about how close a guess was.
public struct URLSigner: Sendable {
    /// The key's bytes: swift-crypto's `SymmetricKey` is not `Sendable`, so one is made per use.
    private let keyBytes: Data
    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }

    /// The name of the query parameter that carries the signature.
    public static let parameter = "sig"

    /// A signer for `key`, taken as its UTF-8 bytes.
    public init(key: String) {
        keyBytes = Data(key.utf8)
    }

    /// The signature of `pathAndQuery` (already without `sig`), in lowercase hex.
    public func signature(for pathAndQuery: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(pathAndQuery.utf8), using: key)
        return Hex.encode(mac)
    }

    /// `pathAndQuery` with its signature appended as the last parameter.
    public func sign(_ pathAndQuery: String) -> String {
        // Bytes, not characters: a query that starts with a combining mark makes "?" part of a
        // larger character, which `contains("?")` does not see (found by fuzz-proxy-request).
        let separator = pathAndQuery.utf8.contains(UInt8(ascii: "?")) ? "&" : "?"
        return pathAndQuery + separator + Self.parameter + "=" + signature(for: pathAndQuery)
    }

    /// Whether the raw `query` of a request to `path` carries exactly one `sig` that matches
    /// the rest of the target, in lowercase hex as ``signature(for:)`` writes it: an upper-case
    /// spelling of the same MAC is refused, so that a signed URL has one form and a CDN keyed on
    /// the URL cannot be bypassed by respelling it.
    public func isValid(path: String, query: String?) -> Bool {
        guard let (unsigned, signature) = Self.split(query: query ?? ""),
              let mac = Self.bytes(hex: signature) else { return false }
        let message = unsigned.isEmpty ? path : path + "?" + unsigned
        return HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Data(message.utf8), using: key)
    }

    /// The query without its `sig` parameter, and that parameter's value; `nil` unless there is
    /// exactly one.
    ///
    /// Split on the bytes, not on characters: a character that joins the one after it (a
    /// prepended concatenation mark such as U+0600) makes "&" part of a larger character,
    /// which a split on `Character("&")` does not see (found by fuzz-proxy-request).
    static func split(query: String) -> (unsigned: String, signature: String)? {
        let prefix = Array((parameter + "=").utf8)
        var kept: [Substring.UTF8View] = []
        var signature: Substring.UTF8View?
        for item in query.utf8[...].split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            if item.starts(with: prefix) {
                guard signature == nil else { return nil }
                signature = item.dropFirst(prefix.count)
            } else {
                kept.append(item)
            }
        }
        guard let signature else { return nil }
        let unsigned = kept.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "&")
        return (unsigned, String(decoding: signature, as: UTF8.self))
    }

    /// The bytes of a 64-digit lowercase hex string; `nil` for anything else.
    static func bytes(hex: String) -> Data? {
        let digits = Array(hex.utf8)
        guard digits.count == 64, !digits.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0) }) else { return nil }
        var bytes = Data(capacity: 32)
        var index = 0
        while index < digits.count {
            guard let high = PercentDecoding.hexValue(digits[index]), let low = PercentDecoding.hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
