import Foundation
import WebImage
import WebImageCore

/// One `GET /info` request, parsed and validated: the source to describe, and the components of
/// its BlurHash.
///
/// Parameters, in `/image`'s style: `url` (required; every source `/image` takes: `http`/`https`,
/// `s3://bucket/key` with an S3 service configured, `local:///path` with `--origin-dir`), `bh`
/// (the BlurHash's components across and down, `XxY`, 1 to 9 each; default `4x3`), and `sig`
/// (the signature of the whole target, `/info` included, as ``URLSigner`` checks `/image`'s).
/// An unknown or repeated parameter is an error, as for `/image`.
///
/// ```swift
/// let request = try InfoRequest(query: "url=https%3A%2F%2Fexample.com%2Fa.jpg&bh=3x3", allowsLocal: false)
/// print(request.blurHashComponents.x, request.key)   // 3 info1|https://example.com/a.jpg|bh=3x3
/// ```
struct InfoRequest: Sendable, Hashable {
    var source: ProxyRequest.Source
    var blurHashComponents = BlurHash.Components(x: 4, y: 3)

    init(source: ProxyRequest.Source, blurHashComponents: BlurHash.Components = .init(x: 4, y: 3)) {
        self.source = source
        self.blurHashComponents = blurHashComponents
    }

    static let parameters: Set<String> = ["url", "bh", URLSigner.parameter]

    /// Parses the raw (still percent-encoded) query of a request.
    ///
    /// - Throws: a ``ProxyError`` with status 400 naming the first parameter that is wrong.
    init(query: String?, allowsLocal: Bool) throws(ProxyError) {
        let values = try ProxyRequest.values(of: query, known: Self.parameters)
        guard let url = values["url"], !url.isEmpty else { throw .badRequest("url is required") }
        self.init(source: try ProxyRequest.source(url, allowsLocal: allowsLocal))
        if let bh = values["bh"] { blurHashComponents = try Self.components(bh) }
    }

    /// `XxY`, each a digit from 1 to 9 (BlurHash's own bounds).
    static func components(_ text: String) throws(ProxyError) -> BlurHash.Components {
        let digits = Array(text.utf8)
        let range = UInt8(ascii: "1")...UInt8(ascii: "9")
        guard digits.count == 3, range.contains(digits[0]), digits[1] == UInt8(ascii: "x"), range.contains(digits[2]) else {
            throw .badRequest("bh must be XxY, each from 1 to 9 (such as 4x3)")
        }
        return BlurHash.Components(x: Int(digits[0] - UInt8(ascii: "0")), y: Int(digits[2] - UInt8(ascii: "0")))
    }

    /// The key of its answer in the variant caches and the result store: the source and the
    /// components, under a prefix no image variant's key has (theirs start with the source).
    /// The `1` is the version of the answer's shape: a new shape is a new key, never an old
    /// answer served again.
    var key: String {
        "info1|" + RenderRecipe.sourceKey(source) + "|bh=\(blurHashComponents.x)x\(blurHashComponents.y)"
    }
}
