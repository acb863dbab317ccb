import Foundation
import WebImage

/// One image of the gallery: the small version its cell shows and the large one the detail
/// view shows (the same URL unless a proxy renders thumbnails).
struct GalleryItem: Sendable, Equatable {
    var name: String
    var thumbnail: URL
    var full: URL
    /// The image's ThumbHash, when the source gives it (a proxy's gallery page does): shown
    /// while the thumbnail, or the full image, loads.
    var placeholder: ImagePlaceholder?
}

/// What the command line names, turned into items: a folder, a file of URLs, or a running
/// `webimage serve`.
enum GallerySource {
    enum Failure: Error, CustomStringConvertible {
        case unreadable(String)
        case empty(String)
        case noGallery(String)

        var description: String {
            switch self {
            case .unreadable(let detail): "cannot read \(detail)"
            case .empty(let source): "\(source) holds no images"
            case .noGallery(let url): "\(url) shows no gallery: is it a `webimage serve --origin-dir DIR`?"
            }
        }
    }

    static func items(for source: String, cellSize: Int) async throws -> [GalleryItem] {
        let items: [GalleryItem]
        if let url = URL(string: source), ["http", "https"].contains(url.scheme?.lowercased()) {
            items = try await ProxyGalleryPage.items(at: url, cellSize: cellSize)
        } else {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: source, isDirectory: &isFolder) else { throw Failure.unreadable(source) }
            items = isFolder.boolValue ? try folderItems(source) : try listItems(source)
        }
        guard !items.isEmpty else { throw Failure.empty(source) }
        return items
    }

    /// The regular files directly in `path` whose first bytes are an image format we know (by
    /// content, as the pipeline sniffs it, never by extension), sorted by name.
    static func folderItems(_ path: String) throws -> [GalleryItem] {
        let folder = URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: folder.path) } catch { throw Failure.unreadable(path) }
        return names.filter { !$0.hasPrefix(".") }.sorted().compactMap { name in
            let url = folder.appendingPathComponent(name)
            guard isImageFile(url) else { return nil }
            return GalleryItem(name: name, thumbnail: url, full: url)
        }
    }

    private static func isImageFile(_ url: URL) -> Bool {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
              attributes[.type] as? FileAttributeType == .typeRegular,
              let handle = try? FileHandle(forReadingFrom: url) else { return false }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 64) else { return false }
        return head.withUnsafeBytes { ImageFormat(sniffing: $0) } != nil
    }

    /// One URL (or path, relative to the list's folder) a line; blank lines and lines starting
    /// with `#` are skipped.
    static func listItems(_ path: String) throws -> [GalleryItem] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw Failure.unreadable(path) }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        return text.split(whereSeparator: \.isNewline).compactMap { line in
            let entry = line.trimmingCharacters(in: .whitespaces)
            guard !entry.isEmpty, !entry.hasPrefix("#") else { return nil }
            let url = if let url = URL(string: entry), url.scheme != nil {
                url
            } else {
                URL(fileURLWithPath: entry, relativeTo: folder).standardizedFileURL
            }
            return GalleryItem(name: url.lastPathComponent.isEmpty ? entry : url.lastPathComponent, thumbnail: url, full: url)
        }
    }
}
