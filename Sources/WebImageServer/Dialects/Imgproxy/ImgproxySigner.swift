import Crypto
import Foundation

/// Signs and verifies imgproxy URLs as imgproxy does, so that URLs already signed for an
/// imgproxy server are served by `webimage serve` with the same key and salt.
///
/// The signature is HMAC-SHA256, keyed with the key's bytes, of the salt's bytes followed by
/// the path after the signature (its leading `/` included, exactly as sent), in URL-safe Base64
/// without padding; imgproxy's `IMGPROXY_SIGNATURE_SIZE` keeps only the MAC's first bytes.
/// Key and salt are given in hex, as imgproxy's `IMGPROXY_KEY` and `IMGPROXY_SALT` are.
/// imgproxy's own documentation gives this example (key `secret`, salt `hello`):
///
/// ```swift
/// let signer = ImgproxySigner(key: "736563726574", salt: "68656C6C6F")!
/// let path = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
/// let signature = signer.signature(for: path)   // "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8"
/// let valid = signer.isValid(signature: signature, path: path)   // true
/// let url = signer.sign(path)   // "/oKfUtW34…XH8/rs:fill:300:400:0/…/anBn.png"
/// ```
///
/// Verification compares MACs in constant time (swift-crypto's `isValidAuthenticationCode`
/// for the whole MAC; a constant-time byte comparison for a truncated one).
public struct ImgproxySigner: Sendable {
    /// The key's bytes: swift-crypto's `SymmetricKey` is not `Sendable`, so one is made per use.
    private let keyBytes: Data
    private let salt: Data
    /// How many bytes of the MAC the signature keeps: 1 to 32.
    public let signatureSize: Int

    /// A signer for `key` and `salt`, each in hex (imgproxy's `IMGPROXY_KEY`, `IMGPROXY_SALT`),
    /// keeping `signatureSize` bytes of the MAC (`IMGPROXY_SIGNATURE_SIZE`); `nil` when the key
    /// or the salt is not hex (or empty), or the size is not from 1 to 32.
    public init?(key: String, salt: String, signatureSize: Int = 32) {
        guard let keyBytes = Self.bytes(hex: key), let salt = Self.bytes(hex: salt), !keyBytes.isEmpty,
              (1...32).contains(signatureSize) else { return nil }
        self.keyBytes = keyBytes
        self.salt = salt
        self.signatureSize = signatureSize
    }

    /// The signature of `path` (what follows the signature, from its `/`).
    public func signature(for path: String) -> String {
        let mac = Data(HMAC<SHA256>.authenticationCode(for: salt + Data(path.utf8), using: SymmetricKey(data: keyBytes)))
        return Self.base64URL(mac.prefix(signatureSize))
    }

    /// `/SIGNATURE` + `path`: the path an imgproxy server (or `webimage serve` under the prefix
    /// `/`) answers.
    public func sign(_ path: String) -> String {
        "/" + signature(for: path) + path
    }

    /// Whether `signature` is the (truncated) MAC of `path`, spelled as ``signature(for:)``
    /// spells it: URL-safe Base64 without padding. Other spellings of the same bytes (padded,
    /// standard alphabet, other low bits in the last character) are refused, so that a signed
    /// URL has one form and a CDN keyed on the URL cannot be bypassed by respelling it.
    public func isValid(signature: String, path: String) -> Bool {
        guard !signature.contains("="), let given = Self.data(base64URL: signature), given.count == signatureSize else { return false }
        let message = salt + Data(path.utf8)
        let key = SymmetricKey(data: keyBytes)
        if signatureSize == 32 {
            return HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: message, using: key)
        }
        let expected = Data(HMAC<SHA256>.authenticationCode(for: message, using: key)).prefix(signatureSize)
        // Every byte is compared, whatever the first difference: no timing tells how close a guess is.
        return zip(expected, given).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// `data` in URL-safe Base64 without padding.
    static func base64URL(_ data: Data) -> String {
        var text = data.base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
    }

    /// The bytes of URL-safe Base64 `text` (padding optional), or `nil` when it is not Base64
    /// (a length that leaves one character over is a truncated encoding) or not the canonical
    /// encoding of its bytes (unused low bits set in the last character), so that no two texts
    /// stand for the same bytes.
    static func data(base64URL text: some StringProtocol) -> Data? {
        guard !text.contains("+"), !text.contains("/") else { return nil }
        var unpadded = Substring(text)
        while unpadded.hasSuffix("=") { unpadded.removeLast() }
        var standard = String(unpadded.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        guard standard.utf8.count % 4 != 1 else { return nil }
        while standard.utf8.count % 4 != 0 { standard += "=" }
        guard let data = Data(base64Encoded: standard), base64URL(data) == unpadded else { return nil }
        return data
    }

    /// The bytes of an even-length hex string, or `nil`.
    static func bytes(hex: String) -> Data? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes = Data(capacity: digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
