import Foundation
import WebImage
import WebImageCore

/// One `GET /image` request, parsed and validated: what to fetch and what to make of it.
///
/// ```swift
/// let request = try ProxyRequest(query: "url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300&dpr=2&format=webp",
///                                limits: .init())
/// print(request.pixelWidth ?? 0)   // 600
/// print(request.outputFormat)      // webp
/// ```
///
/// Parameters: `url` (required; `http`/`https`, `s3://bucket/key` when an S3 service is
/// configured, or `local:///path` for the folder served with `--origin-dir`), `w` and `h` (CSS pixels, 1 to the limit), `fit` (`contain`, `cover`,
/// `fill`; default `contain`), `format` (`auto`, `jpeg`, `png`, `webp`, `gif`, `avif`, `jxl`; default `auto`),
/// `q` (1–100, default 80), `blur` (a Gaussian sigma in CSS pixels, 0–100), `dpr` (1–4,
/// multiplies `w`, `h` and `blur`), `t` (a video source's poster time in seconds, default 0:
/// the first frame), `page` (a PDF source's page, from 1), and `sig` (the signature, checked by ``URLSigner``). An
/// unknown or repeated parameter is an error, so that typos fail loudly instead of serving
/// the original. Values are percent-decoded; `+` is kept as it is (it is not a space).
public struct ProxyRequest: Sendable, Hashable {
    /// Where the source image is.
    public enum Source: Sendable, Hashable {
        /// An `http` or `https` URL, fetched through the origin guard; or an `s3://bucket/key`
        /// URL, read from the proxy's configured S3 service (``ImageProxy/Configuration/s3``).
        case remote(URL)
        /// A path inside the `--origin-dir` folder (from `local:///path`), without its leading `/`.
        case local(String)
    }

    /// How the image fits the `w` × `h` box, in CSS `object-fit` terms.
    public enum Fit: String, Sendable, Hashable, CaseIterable {
        /// Inside the box, aspect ratio kept.
        case contain
        /// Covers the box, aspect ratio kept, the overflow cropped (centred).
        case cover
        /// Exactly the box, stretched.
        case fill

        var contentMode: ContentMode {
            switch self {
            case .contain: .fit
            case .cover: .fill
            case .fill: .stretch
            }
        }
    }

    /// The format asked for, among those of version 1.0: see ``OutputFormat``, which replaces it.
    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// A format negotiated from the client's `Accept`, else the source's own format.
        case auto
        case jpeg
        case png
        case webp
        case gif
    }


    public var source: Source
    /// Requested width and height in CSS pixels; `nil` when not given.
    public var width: Int?
    public var height: Int?
    public var fit: Fit = .contain
    /// The format asked for.
    public var outputFormat: OutputFormat = .auto
    /// ``outputFormat`` as the 1.0 enum; ``Format/auto`` for a format it cannot name (AVIF).
    @available(*, deprecated, renamed: "outputFormat")
    public var format: Format {
        get { Format(rawValue: outputFormat.rawValue) ?? .auto }
        set { outputFormat = OutputFormat(rawValue: newValue.rawValue) ?? .auto }
    }
    public var quality = 80
    public var blur = 0.0
    public var dpr = 1.0
    /// For a video source, the time of the poster frame in seconds (`t`); `nil`: the first frame.
    public var videoTime: Double?
    /// For a video source, an animated preview from ``videoTime`` instead of the poster (`clip`
    /// seconds at `fps` frames a second, 10 unless given); `nil`: the poster.
    public var videoClip: VideoClip?
    /// For a PDF source, the page (`page`, from 1); `nil`: the first page.
    public var page: Int?

    public init(source: Source) {
        self.source = source
    }

    /// The output width in pixels (`w` × `dpr`, rounded), `nil` when `w` was not given.
    public var pixelWidth: Int? { width.map { Int((Double($0) * dpr).rounded()) } }
    public var pixelHeight: Int? { height.map { Int((Double($0) * dpr).rounded()) } }
    /// The blur sigma in output pixels.
    public var pixelBlur: Double { blur * dpr }

    /// Parses the raw (still percent-encoded) query of a request.
    ///
    /// - Throws: a ``ProxyError`` with status 400 naming the first parameter that is wrong.
    public init(query: String?, limits: ImageProxy.Limits = .init(), allowsLocal: Bool = false) throws(ProxyError) {
        let values = try Self.values(of: query, known: Self.parameters)
        guard let url = values["url"], !url.isEmpty else { throw .badRequest("url is required") }
        self.init(source: try Self.source(url, allowsLocal: allowsLocal))

        if let dpr = values["dpr"] {
            self.dpr = try Self.number(dpr, "dpr", in: 1...limits.maximumDPR)
        }
        let maximum = limits.maximumDimension
        if let w = values["w"] {
            width = try Self.integer(w, "w", in: 1...maximum)
            guard pixelWidth! <= maximum else { throw .badRequest("w × dpr must be at most \(maximum)") }
        }
        if let h = values["h"] {
            height = try Self.integer(h, "h", in: 1...maximum)
            guard pixelHeight! <= maximum else { throw .badRequest("h × dpr must be at most \(maximum)") }
        }
        if let fit = values["fit"] {
            guard let value = Fit(rawValue: fit) else { throw .badRequest("fit must be contain, cover or fill") }
            self.fit = value
        }
        if let format = values["format"] {
            guard let value = OutputFormat(rawValue: format) else {
                throw .badRequest("format must be auto, jpeg, png, webp, gif, avif or jxl")
            }
            outputFormat = value
        }
        if let q = values["q"] {
            quality = try Self.integer(q, "q", in: 1...100)
        }
        if let blur = values["blur"] {
            self.blur = try Self.number(blur, "blur", in: 0...limits.maximumBlur)
        }
        if let t = values["t"] {
            videoTime = try Self.number(t, "t", in: 0...Self.maximumVideoTime)
        }
        if let page = values["page"] {
            self.page = try Self.integer(page, "page", in: 1...Self.maximumPage)
        }
        if let clip = values["clip"] {
            let duration = try Self.number(clip, "clip", in: 0...Self.maximumClip)
            var fps = 10.0
            if let rate = values["fps"] { fps = try Self.number(rate, "fps", in: 0...Self.maximumFramesPerSecond) }
            guard duration > 0, fps > 0 else { throw .badRequest("clip and fps must be above 0") }
            videoClip = VideoClip(duration: duration, framesPerSecond: fps)
        } else if values["fps"] != nil {
            throw .badRequest("fps is the frame rate of clip, which is missing")
        }
    }

    static let parameters: Set<String> = ["url", "w", "h", "fit", "format", "q", "blur", "dpr", "t", "clip", "fps", "page", URLSigner.parameter]
    /// The longest `clip` a URL may give, in seconds (its frames are bounded besides by the
    /// animation limits of ``ImageProxy/Limits``).
    static let maximumClip = 60.0
    /// The most frames a second a `clip` may have.
    static let maximumFramesPerSecond = 60.0
    /// The largest `t` a URL may give: a day (the decoder's duration limit refuses longer sources).
    static let maximumVideoTime = 86_400.0
    /// The largest `page` a URL may give (the decoder's page-count limit refuses larger documents).
    static let maximumPage = 1_000_000

    /// The percent-decoded values of a raw query's parameters, by name, once each is one of
    /// `known` and given once: the rule of every query the proxy reads (`/image`'s, `/info`'s).
    ///
    /// - Throws: a ``ProxyError`` with status 400 naming the parameter that is repeated or not
    ///   valid percent-encoding, or the first unknown one in alphabetical order.
    static func values(of query: String?, known: Set<String>) throws(ProxyError) -> [String: String] {
        var values: [String: String] = [:]
        var unknown: String?
        // Split on the bytes: "&" or "=" after a character that joins the next one (U+0600)
        // is still a separator, as it is for the signer and for every HTTP server.
        for item in (query ?? "").utf8[...].split(separator: UInt8(ascii: "&")) {
            let parts = item.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(decoding: parts[0], as: UTF8.self)
            guard let value = PercentDecoding.string(parts.count > 1 ? Substring(parts[1]) : "") else {
                throw .badRequest("\(name) is not valid percent-encoding")
            }
            guard values.updateValue(value, forKey: name) == nil else {
                throw .badRequest("\(name) is given more than once")
            }
            // The first in alphabetical order is named, whatever the order in the URL.
            if !known.contains(name), unknown.map({ name < $0 }) ?? true { unknown = name }
        }
        if let unknown { throw .badRequest("unknown parameter \(unknown)") }
        return values
    }

    static func source(_ text: String, allowsLocal: Bool) throws(ProxyError) -> Source {
        if text.prefix(8).lowercased() == "local://" {
            guard allowsLocal else { throw .badRequest("local:// sources need --origin-dir") }
            let path = text.dropFirst("local://".count).drop { $0 == "/" }
            let components = path.split(separator: "/", omittingEmptySubsequences: false)
            guard !path.isEmpty, !path.utf8.contains(0),
                  components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
                throw .badRequest("url is not a usable local path")
            }
            return .local(String(path))
        }
        if text.prefix(5).lowercased() == "s3://" {
            return .remote(try s3Source(text))
        }
        guard let components = URLComponents(string: text),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty,
              let url = components.url else {
            throw .badRequest("url must be an absolute http or https URL")
        }
        guard components.user == nil, components.password == nil else {
            throw .badRequest("url must not carry credentials")
        }
        return .remote(url)
    }

    /// `s3://bucket/key`: a bucket name as S3 allows them (3–63 lower-case letters, digits,
    /// dots and hyphens) and a non-empty key without `..` segments, so that the key cannot
    /// address another object by path tricks on stores that map keys to files.
    private static func s3Source(_ text: String) throws(ProxyError) -> URL {
        let rest = text.dropFirst("s3://".count)
        guard let slash = rest.firstIndex(of: "/") else { throw .badRequest("url is not a usable s3://bucket/key") }
        let bucket = rest[..<slash], key = rest[rest.index(after: slash)...]
        let bucketCharacters = bucket.utf8.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-")
        }
        let segments = key.split(separator: "/", omittingEmptySubsequences: false)
        guard (3...63).contains(bucket.utf8.count), bucketCharacters, !key.isEmpty, key.utf8.count <= 1024,
              !key.utf8.contains(0), segments.allSatisfy({ $0 != "." && $0 != ".." }),
              let encoded = key.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed),
              let url = URL(string: "s3://\(bucket)/\(encoded)") else {
            throw .badRequest("url is not a usable s3://bucket/key")
        }
        return url
    }

    private static func integer(_ text: String, _ name: String, in range: ClosedRange<Int>) throws(ProxyError) -> Int {
        guard text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), text.count <= 9,
              let value = Int(text), range.contains(value) else {
            throw .badRequest("\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    private static func number(_ text: String, _ name: String, in range: ClosedRange<Double>) throws(ProxyError) -> Double {
        guard text.count <= 12, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: ".") }),
              let value = Double(text), value.isFinite, range.contains(value) else {
            throw .badRequest("\(name) must be a number from \(Self.text(range.lowerBound)) to \(Self.text(range.upperBound))")
        }
        return value
    }

    static func text(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// The source as a stable string: the cache key of the original bytes' variants.
    var sourceKey: String { RenderRecipe.sourceKey(source) }

    /// The key of one output: the source and every parameter that changes the bytes, in a fixed
    /// order, with `format` as negotiated (`webp`, or `source` for "the source's own format").
    /// Parameters that make no difference are normalised away (`dpr=2&w=100` is `w=200`). It is
    /// the key of the request's ``RenderRecipe``, which other URL dialects share.
    func variantKey(format negotiated: String) -> String {
        recipe.variantKey(format: negotiated)
    }
}
