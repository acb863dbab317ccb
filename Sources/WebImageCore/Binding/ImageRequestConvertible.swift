import Foundation

/// What a target is bound to: a `URL`, or an ``ImageRequest`` when there is more to say
/// (options, a thumbnail size, processors, headers). Kingfisher's `Resource`: the one
/// `setImage(with:using:…)` of each kind of target takes either.
///
/// ```swift
/// cell.thumbnail.setImage(with: row.url, using: binder)
/// cell.thumbnail.setImage(with: ImageRequest(url: url, options: .progressiveLoad, thumbnail: .maxPixelSize(256)), using: binder)
/// ```
public protocol ImageRequestConvertible: Sendable {
    /// The request that loads the image.
    func asImageRequest() -> ImageRequest
}

extension URL: ImageRequestConvertible {
    /// A request for this URL with the default options.
    public func asImageRequest() -> ImageRequest {
        ImageRequest(url: self)
    }
}

extension ImageRequest: ImageRequestConvertible {
    /// The request itself.
    public func asImageRequest() -> ImageRequest {
        self
    }
}
