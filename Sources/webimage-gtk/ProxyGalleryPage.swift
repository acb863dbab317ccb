import Foundation
import WebImage

/// The items of a running `webimage serve`, read from its gallery page at `/`.
///
/// The page lists every image of the proxy's `--origin-dir` as a `<figure>`: a link to a large
/// `fit=contain` rendering around an `<img>` whose `srcset` offers square `fit=cover` thumbnails
/// of several widths, and its ThumbHash (`data-thumbhash`), the placeholder the page draws
/// until the thumbnail arrives. Those URLs are already built (and signed, when the proxy has a
/// key, which a client could not do itself), so the page is all the listing the gallery needs:
/// no endpoint of its own in the proxy.
enum ProxyGalleryPage {
    static func items(at url: URL, cellSize: Int) async throws -> [GalleryItem] {
        let loader = HTTPImageLoader()   // content types are not checked by default: HTML passes
        let page: Data
        do {
            page = try await loader.load(ImageLoadRequest(url: url), context: ImageLoadContext()).data
        } catch {
            try? await loader.shutdown()
            throw GallerySource.Failure.unreadable("\(url.absoluteString): \(error)")
        }
        try? await loader.shutdown()
        let items = parse(String(decoding: page, as: UTF8.self), base: url, cellSize: cellSize)
        guard !items.isEmpty else { throw GallerySource.Failure.noGallery(url.absoluteString) }
        return items
    }

    /// The figures of `html`, with the thumbnail of the `srcset` that covers `cellSize` pixels
    /// (the largest there is when none does).
    static func parse(_ html: String, base: URL, cellSize: Int) -> [GalleryItem] {
        html.components(separatedBy: "<figure>").dropFirst().compactMap { figure in
            guard let link = attribute("href", in: figure), let full = URL(string: link, relativeTo: base)?.absoluteURL,
                  let source = attribute("src", in: figure) else { return nil }
            let candidates = (attribute("srcset", in: figure) ?? "").split(separator: ",").compactMap { candidate -> (url: String, width: Int)? in
                let parts = candidate.split(separator: " ")
                guard parts.count == 2, parts[1].hasSuffix("w"), let width = Int(parts[1].dropLast()) else { return nil }
                return (String(parts[0]), width)
            }.sorted { $0.width < $1.width }
            let chosen = candidates.first { $0.width >= cellSize }?.url ?? candidates.last?.url ?? source
            guard let thumbnail = URL(string: chosen, relativeTo: base)?.absoluteURL else { return nil }
            // The image's alt text is its name; the caption may carry more markup after it.
            let name = attribute("alt", in: figure) ?? full.lastPathComponent
            let placeholder = attribute("data-thumbhash", in: figure).map { ImagePlaceholder.thumbHash($0) }
            return GalleryItem(name: name, thumbnail: thumbnail, full: full, placeholder: placeholder)
        }
    }

    /// The first `name="…"` in `html`, unescaped.
    private static func attribute(_ name: String, in html: String) -> String? {
        guard let start = html.range(of: " \(name)=\""), let end = html[start.upperBound...].firstIndex(of: "\"") else { return nil }
        return unescaped(html[start.upperBound..<end])
    }

    /// The five entities the proxy's page escapes.
    private static func unescaped(_ text: Substring) -> String {
        var result = String(text)
        for (entity, character) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&amp;", "&")] {
            result = result.replacingOccurrences(of: entity, with: character)
        }
        return result
    }
}
