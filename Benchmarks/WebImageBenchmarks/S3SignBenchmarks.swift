import Crypto
import Foundation
import WebImageS3

/// SigV4 signing beside its floor, one bare HMAC-SHA256 over a string-to-sign's worth of bytes:
/// a signature is a SHA-256 of the canonical request, one HMAC with the day's cached signing key,
/// and the string work around them. Target: at most 20 µs per signature.
func runS3SignBenchmarks(_ report: Report) {
    let signer = SigV4Signer(
        credentials: S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1")
    let date = Date(timeIntervalSince1970: 1_369_353_600)
    let operations = 20_000

    // A bare HMAC-SHA256 of 160 bytes (the size of a string to sign) with a 32-byte key.
    let key = SymmetricKey(data: Data(repeating: 7, count: 32))
    let message = Data(repeating: 0x61, count: 160)
    let hmac = nanosecondsPerOperation(operations: operations) {
        for _ in 0..<operations { blackHole(HMAC<SHA256>.authenticationCode(for: message, using: key)) }
    }

    // A GetObject as the client signs it: host, If-None-Match, the x-amz-* headers.
    let header = nanosecondsPerOperation(operations: operations) {
        for _ in 0..<operations {
            blackHole(signer.sign(
                method: "GET", path: "/photos/2024/3f9a0c21d4e5b677/000042.jpg", query: [],
                headers: [("host", "127.0.0.1:8333"), ("if-none-match", "\"5d41402abc4b2a76b9719d911017c592\"")],
                payloadHash: SigV4Signer.emptyPayloadHash, date: date))
        }
    }
    report.add(BenchmarkRow(
        group: "s3-sign", name: "SigV4 Authorization header (GetObject)", ours: header, reference: hmac,
        referenceName: "one bare HMAC-SHA256 (160 B)", unit: "ns", goal: .valueAtMost(20_000)))

    let presign = nanosecondsPerOperation(operations: operations) {
        for _ in 0..<operations {
            blackHole(signer.presignedQuery(
                method: "GET", path: "/photos/2024/3f9a0c21d4e5b677/000042.jpg", query: [], host: "127.0.0.1:8333",
                expires: 3600, date: date))
        }
    }
    report.add(BenchmarkRow(
        group: "s3-sign", name: "SigV4 presigned URL query", ours: presign, reference: hmac,
        referenceName: "one bare HMAC-SHA256 (160 B)", unit: "ns", goal: .valueAtMost(20_000)))
}
