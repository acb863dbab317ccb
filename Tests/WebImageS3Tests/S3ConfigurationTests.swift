import Foundation
import Testing
import WebImage
@testable import WebImageS3

@Suite("S3 configuration and credentials")
struct S3ConfigurationTests {
    static let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    static let token = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN"
    static let accessKey = "AKIAIOSFODNN7EXAMPLE"

    @Test("the standard environment variables")
    func fromEnvironment() throws {
        let environment = [
            "AWS_ACCESS_KEY_ID": Self.accessKey, "AWS_SECRET_ACCESS_KEY": Self.secret, "AWS_SESSION_TOKEN": Self.token,
            "AWS_DEFAULT_REGION": "eu-central-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:8333",
        ]
        let configuration = try S3Configuration.fromEnvironment(environment)
        #expect(configuration.credentials == S3Credentials(accessKeyID: Self.accessKey, secretAccessKey: Self.secret, sessionToken: Self.token))
        #expect(configuration.region == "eu-central-1")
        #expect(configuration.endpoint.absoluteString == "http://127.0.0.1:8333")
        #expect(configuration.addressingStyle == .path)

        // AWS_REGION wins over AWS_DEFAULT_REGION; without an endpoint, AWS's regional one.
        var aws = environment
        aws["AWS_REGION"] = "us-west-2"
        aws["AWS_ENDPOINT_URL"] = nil
        let regional = try S3Configuration.fromEnvironment(aws)
        #expect(regional.region == "us-west-2")
        #expect(regional.endpoint.absoluteString == "https://s3.us-west-2.amazonaws.com")
        #expect(regional.addressingStyle == .virtualHosted)
    }

    @Test("missing keys or an unusable endpoint are an invalidConfiguration error")
    func invalidEnvironment() {
        #expect(S3Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "a"]) == nil)
        #expect(S3Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": ""]) == nil)
        for environment in [
            ["AWS_ACCESS_KEY_ID": "a"],
            ["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_ENDPOINT_URL": "ftp://host"],
        ] {
            do {
                _ = try S3Configuration.fromEnvironment(environment)
                Issue.record("accepted \(environment)")
            } catch let error as S3Error {
                #expect(error.kind == .invalidConfiguration)
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }

    @Test("secrets appear in no description, debug description, dump or reflection")
    func secretsNeverPrinted() async throws {
        let credentials = S3Credentials(accessKeyID: Self.accessKey, secretAccessKey: Self.secret, sessionToken: Self.token)
        let configuration = S3Configuration(endpoint: URL(string: "http://127.0.0.1:1")!, region: "us-east-1", credentials: credentials)
        let client = S3Client(configuration: configuration)
        var dumped = ""
        dump(credentials, to: &dumped)
        var dumpedConfiguration = ""
        dump(configuration, to: &dumpedConfiguration)
        let texts = [
            credentials.description, credentials.debugDescription, String(describing: credentials), String(reflecting: credentials),
            "\(credentials)", dumped, configuration.description, String(reflecting: configuration), dumpedConfiguration,
            client.description, String(reflecting: client),
        ]
        for text in texts {
            #expect(!text.contains(Self.secret), "\(text)")
            #expect(!text.contains(Self.token), "\(text)")
            #expect(!text.contains(Self.accessKey), "\(text)")
        }
        #expect(credentials.description.contains("AKIA…"))
        #expect(credentials.description.contains("<redacted>"))
        try await client.shutdown()
    }
}

@Suite("S3 retry policy")
struct S3RetryPolicyTests {
    static func configuration() -> S3Configuration {
        S3Configuration(endpoint: URL(string: "http://127.0.0.1:1")!, region: "us-east-1", credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"))
    }

    @Test("the client's policy is the library's one, by default the same as the HTTP loader's")
    func sharedPolicy() {
        var configuration = Self.configuration()
        #expect(configuration.retryPolicy == RetryPolicy())
        #expect(configuration.retryPolicy == HTTPImageLoader.Configuration().retryPolicy)
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 4)
        #expect(configuration.description.contains("maximumAttempts: 4"))
    }

    /// Deprecated itself, so that the 1.0 spellings it calls warn nowhere.
    @available(*, deprecated, message: "exercises the deprecated 1.0 retry settings")
    @Test("the 1.0 settings read and write the policy")
    func deprecatedSettingsForward() {
        var configuration = Self.configuration()
        configuration.maximumAttempts = 5
        configuration.retryBaseDelay = .milliseconds(50)
        configuration.maximumRetryDelay = .seconds(9)
        #expect(configuration.retryPolicy == RetryPolicy(maximumAttempts: 5, baseDelay: .milliseconds(50), maximumDelay: .seconds(9)))
        #expect(configuration.maximumAttempts == 5)
        #expect(configuration.retryBaseDelay == .milliseconds(50))
        #expect(configuration.maximumRetryDelay == .seconds(9))
    }
}
