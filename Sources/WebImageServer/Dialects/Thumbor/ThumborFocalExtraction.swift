/// thumbor's `extract_focal()`: the image is itself a thumbor URL (`host/unsafe/AxB:CxD/…/IMAGE`,
/// as a site's templates nest one thumbor URL in another), whose manual crop becomes a focal
/// region and whose IMAGE becomes the image, so that a second size of a hand-cropped image keeps
/// what the crop chose.
///
/// As thumbor reads it: what comes before the first `/` (a host, with `http://` or `https://`)
/// is dropped, the first segment is the signature (`unsafe` or any other), then thumbor's
/// options in their order; without a crop, the inner URL's IMAGE is read the same way, at most
/// ten levels down. When no level has a crop, the image stays as the URL gave it.
enum ThumborFocalExtraction {
    /// The image and the crop's region (left, top, right, bottom in source pixels), or `nil`.
    static func extract(_ image: Substring) -> (image: Substring, edges: [Int])? {
        var url = image
        for _ in 0..<10 {
            guard let (inner, edges) = level(droppingHost(url)) else { return nil }
            if let edges { return (inner, edges) }
            url = inner
        }
        return nil
    }

    /// `url` without its scheme and host: everything up to the first `/` after them.
    private static func droppingHost(_ url: Substring) -> Substring {
        var rest = url
        for scheme in ["http://", "https://"] where rest.hasPrefix(scheme) {
            rest = rest.dropFirst(scheme.count)
        }
        guard let slash = rest.firstIndex(of: "/") else { return url }
        return rest[rest.index(after: slash)...]
    }

    /// One level: the inner URL's IMAGE and its crop (`nil` when it has none), or `nil` when
    /// `url` is not a thumbor URL with a signature.
    private static func level(_ url: Substring) -> (image: Substring, edges: [Int]?)? {
        var cursor = ThumborURL.Cursor(rest: url.first == "/" ? url.dropFirst() : url)
        // An option is taken only when something is left for the image.
        func take(_ test: (Substring) -> Bool) -> Substring? {
            var trial = cursor
            guard let segment = trial.take(test), !trial.rest.isEmpty else { return nil }
            cursor = trial
            return segment
        }
        guard take({ !$0.isEmpty }) != nil else { return nil }
        _ = take { $0 == "debug" }
        _ = take { $0 == "meta" }
        _ = take { $0 == "trim" || $0.hasPrefix("trim:") }
        let edges = take { ThumborURL.numbers($0, "x:x") != nil }.flatMap { ThumborURL.numbers($0, "x:x") }
        _ = take { ThumborURL.fitModes[String($0)] != nil }
        _ = take { ThumborURL.isSize($0) }
        _ = take { ThumborURL.horizontal[String($0)] != nil }
        _ = take { ThumborURL.vertical[String($0)] != nil }
        _ = take { $0 == "smart" }
        if cursor.rest.hasPrefix("filters:"), let end = cursor.rest.firstRange(of: ")/"), end.upperBound < cursor.rest.endIndex {
            cursor.rest = cursor.rest[end.upperBound...]
        }
        return (cursor.rest, edges)
    }
}
