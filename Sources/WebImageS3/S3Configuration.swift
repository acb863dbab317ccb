import Foundation
import WebImageCore

/// Where an ``S3Client`` sends its requests and how: the endpoint, the region, the keys, the
/// addressing style, the per-request timeout and the retries.
///
/// The endpoint is always configuration, never taken from an `s3://` URL: a URL names a bucket
/// and a key, and cannot send the client's credentials to a server of its choosing.
///
/// ```swift
/// var configuration = S3Configuration(
///     endpoint: URL(string: "http://127.0.0.1:8333")!, region: "us-east-1",
///     credentials: S3Credentials(accessKeyID: "minio", secretAccessKey: "minio-secret"))
/// configuration.timeout = .seconds(10)
/// configuration.retryPolicy = RetryPolicy(maximumAttempts: 4)
/// let client = S3Client(configuration: configuration)
/// ```
public struct S3Configuration: Sendable, CustomStringConvertible {
    /// How a bucket is named in a request.
    public enum AddressingStyle: String, Sendable, Hashable {
        /// `https://endpoint/bucket/key`: what S3-compatible servers on one host expect.
        case path
        /// `https://bucket.endpoint/key`: AWS's default; the bucket must be a valid DNS label.
        case virtualHosted
    }

    /// `http` or `https`, a host, an optional port and an optional path prefix.
    public var endpoint: URL
    /// The region the signature is scoped to (`us-east-1` for most S3-compatible servers).
    public var region: String
    public var credentials: S3Credentials
    /// Default: ``AddressingStyle/virtualHosted`` for an `amazonaws.com` endpoint, otherwise
    /// ``AddressingStyle/path``.
    public var addressingStyle: AddressingStyle
    /// The longest one attempt may take, from connecting to the last byte of the body. Default:
    /// 30 seconds.
    public var timeout: Duration = .seconds(30)
    /// How a request that failed in a way that may pass is sent again: `SlowDown`, `408`,
    /// `429`, `500`, `502`, `503`, `504`, a refused or lost connection, a timeout (each attempt
    /// has the whole ``timeout``); never another 4xx, nor after some of the body went to a
    /// progress handler. The library's one policy (``RetryPolicy``), shared with the HTTP loader.
    /// Default: 3 attempts in all, waits of full jitter from 200 ms doubling up to 2 s, a
    /// `Retry-After` honoured up to 2 s.
    public var retryPolicy = RetryPolicy()
    /// The longest wait for a connection to open. Default: 5 seconds.
    public var connectTimeout: Duration = .seconds(5)

    public init(endpoint: URL, region: String, credentials: S3Credentials) {
        self.endpoint = endpoint
        self.region = region
        self.credentials = credentials
        let host = endpoint.host?.lowercased() ?? ""
        self.addressingStyle = host.hasSuffix("amazonaws.com") ? .virtualHosted : .path
    }

    /// A configuration from the standard AWS environment variables: `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION` (else `AWS_DEFAULT_REGION`,
    /// else `us-east-1`) and `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` (else AWS's regional
    /// endpoint).
    ///
    /// - Throws: an ``S3Error`` of kind ``S3Error/Kind/invalidConfiguration`` when the keys are
    ///   missing or the endpoint is not an `http`/`https` URL.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> S3Configuration {
        guard let credentials = S3Credentials.fromEnvironment(environment) else {
            throw S3Error(.invalidConfiguration, message: "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must both be set")
        }
        let region = [environment["AWS_REGION"], environment["AWS_DEFAULT_REGION"]]
            .compactMap { $0 }.first { !$0.isEmpty } ?? "us-east-1"
        let endpointString = [environment["AWS_ENDPOINT_URL_S3"], environment["AWS_ENDPOINT_URL"]]
            .compactMap { $0 }.first { !$0.isEmpty } ?? "https://s3.\(region).amazonaws.com"
        guard let endpoint = URL(string: endpointString), Self.isUsable(endpoint) else {
            throw S3Error(.invalidConfiguration, message: "the S3 endpoint \(endpointString) is not an http or https URL with a host")
        }
        return S3Configuration(endpoint: endpoint, region: region, credentials: credentials)
    }

    static func isUsable(_ endpoint: URL) -> Bool {
        guard let scheme = endpoint.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return false }
        return endpoint.host?.isEmpty == false
    }

    /// Everything but the secrets (see ``S3Credentials/description``).
    public var description: String {
        "S3Configuration(endpoint: \(endpoint.absoluteString), region: \(region), credentials: \(credentials), addressingStyle: \(addressingStyle.rawValue), timeout: \(timeout), maximumAttempts: \(retryPolicy.maximumAttempts))"
    }
}
