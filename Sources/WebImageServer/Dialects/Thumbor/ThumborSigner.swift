import Crypto
import Foundation

/// Signs and verifies thumbor URLs as thumbor does, so that URLs already signed for a thumbor
/// server with a key are served by `webimage serve` with the same key.
///
/// The signature is HMAC-SHA1 of everything after the signature and its `/` (the options and
/// the image, exactly as sent, percent-encoding kept), in URL-safe Base64 with its padding:
/// 28 characters. thumbor's own documentation gives this example:
///
/// ```swift
/// let signer = ThumborSigner(key: "my-security-key")
/// let path = signer.sign("300x200/my.server.com/some/path/to/image.jpg")
/// // "/8ammJH8D-7tXy6kU3lTvoXlhu4o=/300x200/my.server.com/some/path/to/image.jpg"
/// let valid = signer.isValid(signature: "8ammJH8D-7tXy6kU3lTvoXlhu4o=",
///                            signed: "300x200/my.server.com/some/path/to/image.jpg")   // true
/// ```
///
/// Verification compares MACs in constant time (swift-crypto's `isValidAuthenticationCode`).
public struct ThumborSigner: Sendable {
    /// The key's bytes: swift-crypto's `SymmetricKey` is not `Sendable`, so one is made per use.
    private let keyBytes: Data
    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }

    /// A signer for `key` (thumbor's `SECURITY_KEY`), taken as its UTF-8 bytes.
    public init(key: String) {
        keyBytes = Data(key.utf8)
    }

    /// The signature of `signed` (the path after the signature, without its leading `/`).
    public func signature(for signed: String) -> String {
        Self.urlSafe(Data(HMAC<Insecure.SHA1>.authenticationCode(for: Data(signed.utf8), using: key)))
    }

    /// `/SIGNATURE/signed`: the path a thumbor server (or `webimage serve` under the prefix `/`)
    /// answers.
    public func sign(_ signed: String) -> String {
        "/" + signature(for: signed) + "/" + signed
    }

    /// Whether `signature` is the MAC of `signed`, spelled as thumbor and ``signature(for:)``
    /// spell it: 28 characters of URL-safe Base64 with its padding. Other spellings of the same
    /// MAC (unpadded, standard alphabet, other low bits in the last character, percent-encoded)
    /// are refused, so that a signed URL has one form and a CDN keyed on the URL cannot be
    /// bypassed by respelling it.
    public func isValid(signature: String, signed: String) -> Bool {
        let standard = signature.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard signature.utf8.count == 28, !signature.contains("+"), !signature.contains("/"),
              let mac = Data(base64Encoded: standard), Self.urlSafe(mac) == signature else { return false }
        return HMAC<Insecure.SHA1>.isValidAuthenticationCode(mac, authenticating: Data(signed.utf8), using: key)
    }

    /// `bytes` in URL-safe Base64 with padding, as thumbor writes a signature.
    private static func urlSafe(_ bytes: Data) -> String {
        bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }
}
