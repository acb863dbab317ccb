import Foundation

extension DiskCache.Metadata {
    /// Takes what a `304` refreshed (validators and expiry), keeping the rest.
    mutating func merge(_ fresh: DiskCache.Metadata) {
        if let etag = fresh.etag { self.etag = etag }
        if let lastModified = fresh.lastModified { self.lastModified = lastModified }
        if let expiresAt = fresh.expiresAt { self.expiresAt = expiresAt }
        if let contentType = fresh.contentType { self.contentType = contentType }
    }
}

extension ImageError {
    /// Any error from the pipeline's work, as an ``ImageError``.
    init(_ error: any Error) {
        if let error = error as? ImageError { self = error }
        else if error is CancellationError { self = .cancelled }
        else { self = .network(.init(.other, "\(error)")) }
    }
}

extension ImageResponse.Timings {
    init(total: Duration) {
        self.init()
        self.total = total
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
