import Foundation

/// imgproxy's `Content-Disposition`, which every image of its URLs carries: `inline` (or
/// `attachment` with `return_attachment`), with the URL's file name (or the source's, without
/// its extension) and the output's extension.
///
/// Made from the URL once, so that `CachedVariantHandler` can keep it with a recognized URL
/// and add only the output's extension to each answer.
struct ImgproxyDisposition: Sendable {
    /// The file name without its extension: printable ASCII that is safe between quotes
    /// without escaping, anything else `_`; `image` when the URL and the source give none.
    let name: String
    let isAttachment: Bool

    init(_ url: ImgproxyURL) {
        var name = url.filename
        if name == nil, case .remote(let source) = url.recipe.source {
            name = source.deletingPathExtension().lastPathComponent
        } else if name == nil, case .local(let path) = url.recipe.source {
            name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        }
        let safe = String((name ?? "").unicodeScalars.map { scalar -> Character in
            (0x20..<0x7F).contains(scalar.value) && scalar != "\"" && scalar != "\\" && scalar != "/" ? Character(scalar) : "_"
        })
        self.name = safe.isEmpty ? "image" : safe
        isAttachment = url.returnsAttachment
    }

    /// The header's value for an answer of `contentType` (no extension for any other type, or none).
    func value(contentType: String?) -> String {
        let ext = switch contentType {
        case "image/jpeg": ".jpg"
        case "image/png": ".png"
        case "image/webp": ".webp"
        case "image/gif": ".gif"
        default: ""
        }
        return (isAttachment ? "attachment" : "inline") + "; filename=\"\(name)\(ext)\""
    }
}
