import Foundation

/// The keys that sign S3 requests: an access key ID, its secret, and for temporary credentials
/// (STS, an instance role) a session token.
///
/// The secret and the token never appear in ``description``, `debugDescription`, `dump` or a
/// log line: only the first four characters of the access key ID do, enough to tell two
/// configurations apart.
///
/// ```swift
/// let credentials = S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
/// print(credentials)   // S3Credentials(accessKeyID: AKIA…, secretAccessKey: <redacted>, sessionToken: nil)
/// let fromEnvironment = S3Credentials.fromEnvironment()   // AWS_ACCESS_KEY_ID, …
/// ```
public struct S3Credentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var accessKeyID: String
    public var secretAccessKey: String
    /// `X-Amz-Security-Token`, sent with every request when set.
    public var sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// The credentials in `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and (optionally)
    /// `AWS_SESSION_TOKEN`, or `nil` when either key is missing or empty.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> S3Credentials? {
        guard let accessKeyID = environment["AWS_ACCESS_KEY_ID"], !accessKeyID.isEmpty,
              let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty
        else { return nil }
        let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        return S3Credentials(accessKeyID: accessKeyID, secretAccessKey: secret, sessionToken: token)
    }

    /// The access key ID cut to its first four characters: AWS's prefix (`AKIA`, `ASIA`) tells
    /// long-term from temporary keys, and the rest stays out of logs.
    var redactedAccessKeyID: String {
        accessKeyID.count <= 4 ? "…" : "\(accessKeyID.prefix(4))…"
    }

    public var description: String {
        "S3Credentials(accessKeyID: \(redactedAccessKeyID), secretAccessKey: <redacted>, sessionToken: \(sessionToken == nil ? "nil" : "<redacted>"))"
    }

    public var debugDescription: String { description }

    /// What `dump` and debuggers show: the redacted forms only.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "accessKeyID": redactedAccessKeyID,
            "secretAccessKey": "<redacted>",
            "sessionToken": sessionToken == nil ? "nil" : "<redacted>",
        ])
    }
}
