import Foundation
import Synchronization
import WebImage

/// The gallery's placeholders: behind each thumbnail, until it arrives, a small blurred
/// picture of the image, its ThumbHash decoded to 32 px and inlined in the page as a PNG data
/// URL in the `<img>`'s CSS `background` (a few hundred bytes a cell, no request of its own).
///
/// The hash is the one the proxy's pipeline remembers for the source (it computes one on every
/// first decode of a source, and keeps it beside the disk cache's index across restarts). A
/// source the pipeline never decoded has its hash computed while the page is built, by a small
/// decode of it (JPEG and WebP decode straight to that size): the browser asks for every
/// thumbnail of the page right after it, which would decode each source anyway, so the work is
/// done once, only earlier, and every cell of the very first page has its placeholder. A source
/// that does not decode gets none (its thumbnail will fail too).
///
/// ```swift
/// let gallery = Gallery(directory: URL(fileURLWithPath: "Demo/images"))
/// let placeholders = await gallery.placeholders(through: proxy.manager)
/// let html = gallery.html(signer: nil, placeholders: placeholders)
/// ```
extension Gallery {
    /// One cell's placeholder.
    package struct Placeholder: Sendable, Hashable {
        /// The ThumbHash, base64: the page's `data-thumbhash`, for clients that draw it themselves
        /// (the desktop gallery, `webimage-gtk`, reads it).
        package var thumbHash: String
        /// The CSS `background` that draws it: the PNG data URL, covering the cell as the
        /// square `fit=cover` thumbnail will.
        package var background: String
    }

    /// The longer side of the PNG a placeholder is drawn from: the browser scales it up
    /// smoothly, and more pixels would only add bytes to a picture with no detail.
    static let placeholderSide = 32

    /// The placeholder of each image that has one, by name: the ThumbHash `manager` remembers
    /// for the source, else the one a small decode of it now leaves behind.
    package func placeholders(through manager: ImageManager) async -> [String: Placeholder] {
        guard let directory else { return [:] }
        var hashes: [String: ImagePlaceholder] = [:]
        var unknown: [String] = []
        for name in names {
            if let known = manager.placeholder(for: Self.sourceURL(name, in: directory)) { hashes[name] = known } else { unknown.append(name) }
        }
        if !unknown.isEmpty {
            await withTaskGroup(of: (String, ImagePlaceholder?).self) { group in
                for name in unknown {
                    group.addTask { (name, await Self.computedPlaceholder(of: Self.sourceURL(name, in: directory), manager: manager)) }
                }
                for await (name, placeholder) in group { hashes[name] = placeholder }
            }
        }
        let registry = manager.configuration.registry
        return hashes.compactMapValues { placeholderCells.cell(for: $0, registry: registry) }
    }

    /// The URL the proxy loads `local:///name` from, as its pipeline knows the source.
    static func sourceURL(_ name: String, in directory: URL) -> URL {
        directory.appendingPathComponent(name)
    }

    /// Decodes `url` small through `manager`, which remembers its ThumbHash as it does for every
    /// first decode; if the manager keeps none (its configuration turned that off), the hash of
    /// the small decode itself.
    private static func computedPlaceholder(of url: URL, manager: ImageManager) async -> ImagePlaceholder? {
        let request = ImageRequest(url: url, options: [.decodeFirstFrameOnly], thumbnail: .maxPixelSize(100))
        guard let response = try? await manager.image(for: request) else { return nil }
        return manager.placeholder(for: url) ?? .thumbHash(ThumbHash(encoding: response.container.image).base64)
    }
}

/// The cells' placeholders, kept by hash: the page is built on every visit, and a hash's PNG
/// is the same every time.
package final class GalleryPlaceholderCells: Sendable {
    private let cells = Mutex<[ImagePlaceholder: Gallery.Placeholder]>([:])

    package init() {}

    /// `placeholder`'s cell: its hash and its PNG background; `nil` for a hash that does not
    /// decode (a remembered hash is the pipeline's own, so in practice never).
    func cell(for placeholder: ImagePlaceholder, registry: CoderRegistry) -> Gallery.Placeholder? {
        if let cell = cells.withLock({ $0[placeholder] }) { return cell }
        guard case .thumbHash(let hash) = placeholder,
              let bitmap = try? placeholder.bitmap(maxSide: Gallery.placeholderSide),
              let png = try? registry.encode(ImageContainer(image: bitmap), as: .png) else { return nil }
        let cell = Gallery.Placeholder(thumbHash: hash, background: "url(data:image/png;base64,\(png.base64EncodedString())) center / cover no-repeat")
        cells.withLock { $0[placeholder] = cell }
        return cell
    }
}
