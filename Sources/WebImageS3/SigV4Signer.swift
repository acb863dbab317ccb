import Crypto
import Foundation
import Synchronization
import WebImageCore

/// AWS Signature Version 4 for S3, written from AWS's specification ("Authenticating Requests
/// (AWS Signature Version 4)"): the `Authorization` header and presigned URLs (query auth).
///
/// Requests come in as their parts, already split the way S3 canonicalises them: the path
/// already URI-encoded (the exact bytes sent), the query as raw name/value pairs (encoded
/// here), the headers to sign. The client builds the URL it sends from the same parts, so what
/// is signed is what goes on the wire.
///
/// The signing key (four HMACs) depends only on the secret, the day, the region and the
/// service: it is kept for the current day, so a signature costs the canonical request's hash
/// and two HMACs.
package final class SigV4Signer: Sendable {
    package static let algorithm = "AWS4-HMAC-SHA256"
    package static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// SHA-256 of nothing: the payload hash of a request without a body.
    package static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    package let credentials: S3Credentials
    package let region: String
    package let service: String
    private let signingKey = Mutex<(day: String, key: Data)?>(nil)

    package init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The headers to send with a request: `headers` (which must hold `host`), plus
    /// `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token` when there is a session
    /// token, and `authorization`. Every header passed in is signed.
    package func sign(method: String, path: String, query: [(String, String)], headers: [(String, String)], payloadHash: String, date: Date) -> [(String, String)] {
        let time = Timestamp(date)
        var all = headers
        all.append(("x-amz-date", time.dateTime))
        all.append(("x-amz-content-sha256", payloadHash))
        if let token = credentials.sessionToken { all.append(("x-amz-security-token", token)) }
        let (signedHeaders, signature) = self.signature(method: method, path: path, query: query, headers: all, payloadHash: payloadHash, time: time)
        all.append(("authorization", "\(Self.algorithm) Credential=\(credentials.accessKeyID)/\(scope(time)),SignedHeaders=\(signedHeaders),Signature=\(signature)"))
        return all
    }

    /// The query string of a presigned URL (no leading `?`): `query` plus the `X-Amz-*`
    /// parameters and the signature, with only `host` signed and the payload unsigned.
    package func presignedQuery(method: String, path: String, query: [(String, String)], host: String, expires: Int, date: Date) -> String {
        let time = Timestamp(date)
        var parameters = query
        parameters.append(("X-Amz-Algorithm", Self.algorithm))
        parameters.append(("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope(time))"))
        parameters.append(("X-Amz-Date", time.dateTime))
        parameters.append(("X-Amz-Expires", String(expires)))
        if let token = credentials.sessionToken { parameters.append(("X-Amz-Security-Token", token)) }
        parameters.append(("X-Amz-SignedHeaders", "host"))
        let (_, signature) = self.signature(method: method, path: path, query: parameters, headers: [("host", host)], payloadHash: Self.unsignedPayload, time: time)
        // Last, as AWS writes it: the signature covers the sorted query before it.
        return Self.canonicalQuery(parameters) + "&X-Amz-Signature=" + signature
    }

    // MARK: The steps

    /// The canonical request (exposed to tests, which compare it with AWS's published ones).
    package func canonicalRequest(method: String, path: String, query: [(String, String)], headers: [(String, String)], payloadHash: String) -> (request: String, signedHeaders: String) {
        // Names lowercased, values trimmed with inner runs of spaces folded to one, repeated
        // names joined with commas, sorted by name.
        var merged: [(String, String)] = []
        merged.reserveCapacity(headers.count)
        for (name, value) in headers {
            let name = name.lowercased()
            let value = Self.foldSpaces(value)
            if let index = merged.firstIndex(where: { $0.0 == name }) {
                merged[index].1 += "," + value
            } else {
                merged.append((name, value))
            }
        }
        merged.sort { $0.0 < $1.0 }
        var canonicalHeaders = ""
        for (name, value) in merged { canonicalHeaders += "\(name):\(value)\n" }
        let signedHeaders = merged.map(\.0).joined(separator: ";")
        let request = "\(method)\n\(path)\n\(Self.canonicalQuery(query))\n\(canonicalHeaders)\n\(signedHeaders)\n\(payloadHash)"
        return (request, signedHeaders)
    }

    private func signature(method: String, path: String, query: [(String, String)], headers: [(String, String)], payloadHash: String, time: Timestamp) -> (signedHeaders: String, signature: String) {
        let (request, signedHeaders) = canonicalRequest(method: method, path: path, query: query, headers: headers, payloadHash: payloadHash)
        let stringToSign = "\(Self.algorithm)\n\(time.dateTime)\n\(scope(time))\n\(Hex.encode(SHA256.hash(data: Data(request.utf8))))"
        let mac = HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key(for: time.day))
        return (signedHeaders, Hex.encode(mac))
    }

    private func scope(_ time: Timestamp) -> String {
        "\(time.day)/\(region)/\(service)/aws4_request"
    }

    /// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request").
    private func key(for day: String) -> SymmetricKey {
        if let cached = signingKey.withLock({ $0 }), cached.day == day { return SymmetricKey(data: cached.key) }
        var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        // Kept as bytes: SymmetricKey is not Sendable, so it cannot live in a Mutex.
        let bytes = key.withUnsafeBytes { Data($0) }
        signingKey.withLock { $0 = (day, bytes) }
        return key
    }

    // MARK: Encoding

    /// Query parameters encoded (names and values), sorted by name then value, joined with `&`.
    package static func canonicalQuery(_ query: [(String, String)]) -> String {
        var encoded: [(name: String, value: String)] = []
        encoded.reserveCapacity(query.count)
        for (name, value) in query {
            encoded.append((uriEncode(name, keepSlash: false), uriEncode(value, keepSlash: false)))
        }
        // Encoded names and values are ASCII: String's order is their byte order, as AWS sorts.
        encoded.sort { (a: (name: String, value: String), b: (name: String, value: String)) -> Bool in
            a.name == b.name ? a.value < b.value : a.name < b.name
        }
        var out = ""
        for (index, pair) in encoded.enumerated() {
            if index > 0 { out += "&" }
            out += pair.name + "=" + pair.value
        }
        return out
    }

    /// S3's URI encoding: every byte but the unreserved `A-Z a-z 0-9 - _ . ~` as `%XX`
    /// (uppercase hex), and `/` kept when encoding a path.
    package static func uriEncode(_ string: String, keepSlash: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            if unreserved[Int(byte)] || (keepSlash && byte == 0x2F) {
                out.append(byte)
            } else {
                out.append(0x25)   // %
                out.append(upperHexDigits[Int(byte >> 4)])
                out.append(upperHexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let upperHexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Whether a byte stays as it is: `A-Z a-z 0-9 - _ . ~`.
    private static let unreserved: [Bool] = (0..<256).map { value in
        let byte = UInt8(value)
        let scalar = Unicode.Scalar(byte)
        return ("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar)
            || ("0"..."9").contains(scalar) || "-_.~".unicodeScalars.contains(scalar)
    }

    private static func foldSpaces(_ value: String) -> String {
        var out = ""
        var pendingSpace = false
        for character in value {
            if character == " " || character == "\t" {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(" ") }
                pendingSpace = false
                out.append(character)
            }
        }
        return out
    }

    /// Hex SHA-256 of a payload: the `x-amz-content-sha256` of a request with a body.
    package static func payloadHash(_ data: Data) -> String {
        Hex.encode(SHA256.hash(data: data))
    }
}

/// `20130524T000000Z` and `20130524`, computed from the epoch without a `DateFormatter` (whose
/// creation alone costs more than a signature).
package struct Timestamp: Sendable, Equatable {
    package let dateTime: String
    package let day: String

    package init(_ date: Date) {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let dayOfMonth = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)

        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        }
        day = pad(year, 4) + pad(month, 2) + pad(dayOfMonth, 2)
        dateTime = day + "T" + pad(secondOfDay / 3600, 2) + pad(secondOfDay % 3600 / 60, 2) + pad(secondOfDay % 60, 2) + "Z"
    }
}
