import Foundation

/// Loads `data:` URLs (RFC 2397), base64 or percent-encoded.
///
/// ```swift
/// let url = URL(string: "data:image/gif;base64,R0lGODlhAQABAAAAACw=")!
/// let response = try await DataURLImageLoader().load(ImageLoadRequest(url: url), context: ImageLoadContext())
/// ```
public struct DataURLImageLoader: ImageLoader {
    /// The most bytes a data URL may decode to. Default: 50 MB, as for downloads.
    package var maximumSize: Int

    public init(maximumSize: Int = 50_000_000) {
        self.maximumSize = maximumSize
    }

    public func canLoad(_ url: URL) -> Bool { url.scheme?.lowercased() == "data" }

    public func load(_ request: ImageLoadRequest, context: ImageLoadContext) async throws -> ImageLoadResponse {
        let (data, mediaType) = try Self.parse(request.url.absoluteString, limit: maximumSize)
        context.didReceive(data, received: data.count, expected: data.count)
        return ImageLoadResponse(data: data, url: request.url, metadata: .init(contentType: mediaType))
    }

    /// The bytes and media type of a `data:` URL.
    ///
    /// - Throws: ``ImageError/invalidURL(_:)`` for a malformed URL, ``ImageError/tooLarge(_:)``
    ///   past `limit` (checked from the encoded length before decoding). Package access for the
    ///   fuzz target that feeds it hostile URLs directly (Fuzz/).
    package static func parse(_ string: String, limit: Int) throws -> (Data, String?) {
        let utf8 = string.utf8
        guard utf8.count > 5, string.prefix(5).lowercased() == "data:", let comma = utf8.firstIndex(of: UInt8(ascii: ",")) else {
            throw ImageError.invalidURL("malformed data URL: no comma after the media type")
        }
        let header = String(string[string.index(string.startIndex, offsetBy: 5)..<comma])
        let payload = Substring(string[string.index(after: comma)...])
        var parameters = header.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let isBase64 = parameters.last?.lowercased() == "base64"
        if isBase64 { parameters.removeLast() }
        let mediaType = parameters.first.flatMap { $0.isEmpty ? nil : $0.lowercased() }

        // Base64 yields three bytes for every four characters; percent-encoding at most one per
        // character. Either way the encoded length bounds the decoded one.
        let bound = isBase64 ? payload.utf8.count / 4 * 3 : payload.utf8.count
        guard bound <= limit else {
            throw ImageError.tooLarge("data URL of up to \(bound) bytes, over the limit of \(limit)")
        }
        guard let bytes = PercentDecoding.bytes(payload) else {
            throw ImageError.invalidURL("malformed data URL: bad percent escape")
        }
        if isBase64 {
            let text = bytes.filter { !$0.isWhitespace }
            guard let data = Data(base64Encoded: Data(text)) else {
                throw ImageError.invalidURL("malformed data URL: invalid base64")
            }
            return (data, mediaType)
        }
        return (Data(bytes), mediaType)
    }
}

private extension UInt8 {
    var isWhitespace: Bool { self == 0x20 || self == 0x09 || self == 0x0A || self == 0x0D }
}
