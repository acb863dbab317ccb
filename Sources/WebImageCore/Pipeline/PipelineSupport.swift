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
    /// Any error from the pipeline's work, as an ``ImageError``: one the application's own
    /// code threw (a loader's, when `origin` is given) is ``custom(_:)``.
    init(_ error: any Error, origin: CustomFailure.Origin = .loader) {
        if let error = error as? ImageError { self = error }
        else if error is CancellationError { self = .cancelled }
        else { self = .custom(CustomFailure(origin: origin, error: error)) }
    }
}

extension Array where Element == any ImageProcessor {
    /// Runs the processors in order; an error of a processor's own is reported as
    /// ``ImageError/custom(_:)`` naming it.
    func apply(to container: ImageContainer) throws -> ImageContainer {
        try reduce(container) { image, processor in
            do {
                return try processor.process(image)
            } catch {
                throw ImageError(error, origin: .processor(processor.identifier))
            }
        }
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
