import Foundation
import Testing
@testable import WebImageS3

/// The signer against the examples AWS publishes in the S3 API reference ("Examples: Signature
/// Calculations" for the Authorization header, "Authenticating Requests: Using Query Parameters"
/// for presigned URLs). The expected signatures are AWS's, copied from the documentation, never
/// our own output.
@Suite("SigV4 signing (AWS's published examples)")
struct SigV4SignerTests {
    static let credentials = S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    /// 2013-05-24T00:00:00Z, the examples' date.
    static let date = Date(timeIntervalSince1970: 1_369_353_600)
    static let host = "examplebucket.s3.amazonaws.com"
    let signer = SigV4Signer(credentials: credentials, region: "us-east-1")

    func signature(of headers: [(String, String)]) -> String? {
        guard let authorization = headers.first(where: { $0.0 == "authorization" })?.1,
              let range = authorization.range(of: "Signature=") else { return nil }
        return String(authorization[range.upperBound...])
    }

    func authorization(of headers: [(String, String)]) -> String? {
        headers.first { $0.0 == "authorization" }?.1
    }

    @Test func timestampOfTheExamples() {
        let time = Timestamp(Self.date)
        #expect(time.dateTime == "20130524T000000Z")
        #expect(time.day == "20130524")
        #expect(Timestamp(Date(timeIntervalSince1970: 951_825_599)).dateTime == "20000229T115959Z")   // a leap day
        #expect(Timestamp(Date(timeIntervalSince1970: 0)).dateTime == "19700101T000000Z")
    }

    @Test("GET Object with a Range header")
    func getObject() {
        let signed = signer.sign(
            method: "GET", path: "/test.txt", query: [], headers: [("Host", Self.host), ("Range", "bytes=0-9")],
            payloadHash: SigV4Signer.emptyPayloadHash, date: Self.date)
        #expect(authorization(of: signed) == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test("PUT Object: a signed payload, a key that needs encoding, extra headers")
    func putObject() {
        let body = Data("Welcome to Amazon S3.".utf8)
        let hash = SigV4Signer.payloadHash(body)
        #expect(hash == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        let path = "/" + SigV4Signer.uriEncode("test$file.text", keepSlash: true)
        #expect(path == "/test%24file.text")
        let signed = signer.sign(
            method: "PUT", path: path, query: [],
            headers: [("Host", Self.host), ("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")],
            payloadHash: hash, date: Self.date)
        #expect(authorization(of: signed)?.contains("SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,") == true)
        #expect(signature(of: signed) == "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
    }

    @Test("GET Bucket lifecycle: a query parameter without a value")
    func getLifecycle() {
        let signed = signer.sign(
            method: "GET", path: "/", query: [("lifecycle", "")], headers: [("Host", Self.host)],
            payloadHash: SigV4Signer.emptyPayloadHash, date: Self.date)
        #expect(signature(of: signed) == "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
    }

    @Test("GET Bucket (List Objects): query parameters sorted whatever their order")
    func listObjects() {
        for query in [[("max-keys", "2"), ("prefix", "J")], [("prefix", "J"), ("max-keys", "2")]] {
            let signed = signer.sign(
                method: "GET", path: "/", query: query, headers: [("Host", Self.host)],
                payloadHash: SigV4Signer.emptyPayloadHash, date: Self.date)
            #expect(signature(of: signed) == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
        }
    }

    @Test("a presigned GET, built by the client for a virtual-hosted AWS endpoint")
    func presignedURL() async throws {
        let client = S3Client(configuration: S3Configuration(
            endpoint: URL(string: "https://s3.amazonaws.com")!, region: "us-east-1", credentials: Self.credentials))
        let url = client.presignedURL(bucket: "examplebucket", key: "test.txt", expires: .seconds(86400), date: Self.date)
        #expect(url.absoluteString == "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
        try await client.shutdown()
    }

    @Test("a session token is sent and signed, in headers and in presigned URLs")
    func sessionToken() {
        let credentials = S3Credentials(accessKeyID: "ASIAEXAMPLE", secretAccessKey: "secret", sessionToken: "token/with+chars")
        let signer = SigV4Signer(credentials: credentials, region: "eu-west-1")
        let signed = signer.sign(method: "GET", path: "/k", query: [], headers: [("host", "h")], payloadHash: SigV4Signer.emptyPayloadHash, date: Self.date)
        #expect(signed.contains { $0.0 == "x-amz-security-token" && $0.1 == "token/with+chars" })
        #expect(authorization(of: signed)?.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,") == true)
        let withoutToken = SigV4Signer(credentials: S3Credentials(accessKeyID: "ASIAEXAMPLE", secretAccessKey: "secret"), region: "eu-west-1")
            .sign(method: "GET", path: "/k", query: [], headers: [("host", "h")], payloadHash: SigV4Signer.emptyPayloadHash, date: Self.date)
        #expect(signature(of: signed) != signature(of: withoutToken))

        let query = signer.presignedQuery(method: "GET", path: "/k", query: [], host: "h", expires: 60, date: Self.date)
        #expect(query.contains("X-Amz-Security-Token=token%2Fwith%2Bchars"))
        #expect(query.contains("X-Amz-Credential=ASIAEXAMPLE%2F20130524%2Feu-west-1%2Fs3%2Faws4_request"))
    }

    @Test("URI encoding: unreserved bytes kept, everything else as uppercase %XX, / kept only in paths")
    func uriEncoding() {
        #expect(SigV4Signer.uriEncode("a-b_c.d~e", keepSlash: false) == "a-b_c.d~e")
        #expect(SigV4Signer.uriEncode("a b/c+d=é", keepSlash: false) == "a%20b%2Fc%2Bd%3D%C3%A9")
        #expect(SigV4Signer.uriEncode("photos/2024/a b.jpg", keepSlash: true) == "photos/2024/a%20b.jpg")
        #expect(SigV4Signer.canonicalQuery([("b", "2"), ("a", "x y"), ("a", "1")]) == "a=1&a=x%20y&b=2")
    }

    @Test("addressing: path style and virtual-hosted, ports and path prefixes")
    func addressing() async throws {
        var configuration = S3Configuration(endpoint: URL(string: "http://127.0.0.1:9000/prefix/")!, region: "us-east-1", credentials: Self.credentials)
        #expect(configuration.addressingStyle == .path)
        let path = S3Client(configuration: configuration)
        let address = path.address(bucket: "photos", key: "a b/c.jpg")
        #expect(address.origin == "http://127.0.0.1:9000")
        #expect(address.host == "127.0.0.1:9000")
        #expect(address.path == "/prefix/photos/a%20b/c.jpg")
        #expect(path.address(bucket: "photos", key: nil).path == "/prefix/photos")
        try await path.shutdown()

        configuration.endpoint = URL(string: "https://storage.example.com:443")!
        configuration.addressingStyle = .virtualHosted
        let virtual = S3Client(configuration: configuration)
        let hosted = virtual.address(bucket: "photos", key: "c.jpg")
        #expect(hosted.origin == "https://photos.storage.example.com")
        #expect(hosted.host == "photos.storage.example.com")
        #expect(hosted.path == "/c.jpg")
        try await virtual.shutdown()
    }
}
