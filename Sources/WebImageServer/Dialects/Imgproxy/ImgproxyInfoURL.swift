import Foundation
import WebImage
import WebImageCore

/// One imgproxy info URL (imgproxy Pro's `/info` endpoint), answered from the proxy's own
/// `/info` facts (``SourceInfo``) in imgproxy's documented form where the two overlap.
///
/// `/info/SIGNATURE/OPTIONS/plain/SOURCE` or `/info/SIGNATURE/OPTIONS/BASE64SOURCE`, under the
/// dialect's prefix; the signature is imgproxy's, of the path after it (as for a processing
/// URL: `/info` is not signed), checked by ``ImgproxyRoute`` before this parses anything.
/// Options, `name:arg` separated by `/`:
///
/// | option | answered |
/// |---|---|
/// | `size`/`s`, `format`/`f`, `dimensions`/`d` (booleans, default true) | `size` (the source's bytes), `format` (imgproxy's name: `jpeg`, `png`, `webp`, `gif`, `avif`, `heic`, `jxl`, `svg`, `bmp`, `ico`, `tiff`), `width` and `height` (after orientation) |
/// | `blurhash`/`bh`:X:Y (0 to 9 each, default `0:0`: none) | `blurhash`, with X × Y components when both are above 0 |
/// | `exif`, `iptc`, `xmp`, `video_meta`/`vm` (booleans) | accepted; nothing is answered for them (the proxy reads none of that metadata) |
/// | `page`/`pg` | only 0, the first frame, which the placeholders are made from |
/// | `cachebuster`/`cb`, `expires`/`exp` | as in a processing URL (an expired URL is a `404`) |
///
/// `dominant_colors`, `palette`, `average`, `detect_objects` and `crop` are accepted when they
/// ask for nothing (`dc:0`, `p:0`, …) and refused (`400`) when they ask for something: imgproxy's
/// dominant colours are six swatches (vibrant, muted, …), which the proxy does not compute (its
/// `/info?url=` answers one dominant colour). Presets, video and security options are refused.
///
/// ```swift
/// let url = try ImgproxyInfoURL(path: "/insecure/bh:4:3/plain/https://example.com/a.jpg", allowsLocal: false)
/// print(url.request.blurHashComponents)   // 4×3, and `blurhash` in the answer
/// ```
struct ImgproxyInfoURL: Sendable {
    /// The facts asked for: the source, and the BlurHash's components (4×3 when none is asked).
    var request: InfoRequest
    /// What the answer shows.
    var options: Options

    /// What the URL's options ask of the answer.
    struct Options: Sendable {
        var answersSize = true
        var answersFormat = true
        var answersDimensions = true
        /// The BlurHash's components when `blurhash` asks for one.
        var blurHash: BlurHash.Components?
        /// `expires`, in seconds since 1970, when the URL has one.
        var expires: Int?
    }

    /// What the URL adds to its answer's headers: `expires`.
    var headers: DialectHeaders { DialectHeaders(expires: options.expires) }

    /// Parses `path`, the request's path after `/info` (`/insecure/bh:4:3/plain/…`), still
    /// percent-encoded.
    ///
    /// - Throws: ``ProxyError`` 400 naming what is wrong, 404 when the URL has expired.
    init(path: Substring, allowsLocal: Bool, now: Date = Date()) throws(ProxyError) {
        let parts = path.drop { $0 == "/" }.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw .badRequest("an imgproxy info URL is /info/SIGNATURE/OPTIONS/SOURCE")
        }
        var rest = parts[1], options = Options()
        // The options are the segments with a colon; base64 has none, and `plain` ends them.
        while let slash = rest.firstIndex(of: "/"), rest[..<slash].contains(":") {
            if slash != rest.startIndex { try options.apply(option: rest[..<slash]) }
            rest = rest[rest.index(after: slash)...]
        }
        // imgproxy reads no extension here; one given is of no consequence.
        let (source, _) = try ImgproxyURL.source(rest)
        // Without `blurhash`, the facts of the default components: /info's own answer, shared.
        request = InfoRequest(
            source: try ProxyRequest.source(source, allowsLocal: allowsLocal),
            blurHashComponents: options.blurHash ?? BlurHash.Components(x: 4, y: 3))
        self.options = options
        // imgproxy's own answer to an expired URL.
        guard !headers.hasExpired(at: now) else { throw ProxyError(status: 404, message: "the URL has expired") }
    }
}

extension ImgproxyInfoURL.Options {
    /// Applies one option of an info URL.
    mutating func apply(option: Substring) throws(ProxyError) {
        let parts = option.split(separator: ":", omittingEmptySubsequences: false)
        let name = String(parts[0]), arguments = Array(parts.dropFirst())
        func flag() throws(ProxyError) -> Bool {
            guard let first = arguments.first else { throw .badRequest("\(name) takes a boolean") }
            return try ImgproxyOptions.boolean(first, name)
        }
        switch name {
        case "size", "s": answersSize = try flag()
        case "format", "f": answersFormat = try flag()
        case "dimensions", "d": answersDimensions = try flag()
        case "exif", "iptc", "xmp", "video_meta", "vm": _ = try flag()
        case "blurhash", "bh":
            guard arguments.count == 2 else { throw .badRequest("\(name) takes x and y components") }
            let x = try ImgproxyOptions.integer(arguments[0], name, in: 0...9), y = try ImgproxyOptions.integer(arguments[1], name, in: 0...9)
            blurHash = x > 0 && y > 0 ? BlurHash.Components(x: x, y: y) : nil
        case "dominant_colors", "dc", "average", "avg", "detect_objects", "do":
            if try flag() { throw Self.notComputed(name) }
        case "palette", "p":
            guard try ImgproxyOptions.integer(arguments.first ?? "", name, in: 0...256) == 0 else { throw Self.notComputed(name) }
        case "crop", "c":
            guard arguments.prefix(2).allSatisfy({ $0.isEmpty || $0 == "0" }) else { throw Self.notComputed(name) }
        case "page", "pg":
            guard try ImgproxyOptions.integer(arguments.first ?? "", name, in: 0...1_000_000) == 0 else {
                throw .badRequest("\(name): only the first page (0) is described")
            }
        case "cachebuster", "cb":
            // Changes the URL (and so the caches in front), never the answer.
            guard arguments.count == 1 else { throw .badRequest("\(name) takes 1 argument") }
        case "expires", "exp":
            expires = try ImgproxyOptions.integer(arguments.first ?? "", name, in: 0...999_999_999_999)
        default:
            throw .badRequest("option \(ImgproxyOptions.printable(Substring(name))) is not supported in info URLs")
        }
    }

    private static func notComputed(_ name: String) -> ProxyError {
        .badRequest("\(name) is not supported: /info?url= gives the dominant colour, ThumbHash and BlurHash")
    }
}

extension ImgproxyInfoURL {
    /// imgproxy's JSON of `info`: `format`, `width`, `height`, `size` and `blurhash` as the
    /// options ask, keys sorted.
    func json(_ info: SourceInfo) -> Data {
        var document: [String: Any] = [:]
        if options.answersFormat { document["format"] = Self.formatName(info.format) }
        if options.answersDimensions, let width = info.width, let height = info.height {
            document["width"] = width
            document["height"] = height
        }
        if options.answersSize { document["size"] = info.bytes }
        if options.blurHash != nil { document["blurhash"] = info.blurHash }
        return (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    }

    /// imgproxy's name of a format: an animated PNG is `png`, every HEIF `heic`.
    static func formatName(_ format: String) -> String {
        switch ImageFormat(rawValue: format) {
        case .apng?: "png"
        case .heif?: "heic"
        default: format
        }
    }
}
