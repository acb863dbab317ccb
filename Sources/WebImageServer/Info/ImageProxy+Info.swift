import Foundation
import WebImage

extension ImageProxy {
    /// The `/info` answer for `request`: the JSON of its source's ``SourceInfo``, made and kept as
    /// a variant is. The same checks as an image first (the origin guard, without DNS for a
    /// cache hit), then the variant caches and the fleet's result store under
    /// ``infoKey(for:)``, else the original through the pipeline (its caches, its loaders and
    /// their size limits), read and decoded small on the decode executor within the work
    /// budget. A source that is no image is a `415`, one past the limits a `413`, as for
    /// `/image`.
    ///
    /// - Throws: a ``ProxyError`` with the status to answer.
    func info(for request: InfoRequest) async throws(ProxyError) -> Output {
        try await output(forKey: try infoKey(for: request), of: request.source, variesOnAccept: false) {
            try await self.makeInfo(request, from: try await self.checkedSourceURL(request.source))
        }
    }

    /// The cache key of `request`'s answer, once its source passes the checks that need no DNS:
    /// ``InfoRequest/key``, and for an HTTP origin the origin policy, as variant keys carry it.
    ///
    /// - Throws: ``ProxyError/forbiddenOrigin(_:)``, or a `400` for an `s3://` source that is
    ///   not enabled.
    func infoKey(for request: InfoRequest) throws(ProxyError) -> String {
        try checkWithoutResolving(request.source) ? request.key + "|policy=" + policyDigest : request.key
    }

    /// The original at `url` (checked already), then its facts as JSON. Never the full-size
    /// raster where the format decodes smaller: see ``PlaceholderReport/decodingOptions(from:)``.
    private func makeInfo(_ request: InfoRequest, from url: URL) async throws -> Rendered {
        var original = originalRequest(url, options: [.retryFailed])
        if configuration.cachesDisabled { original.options.insert(.fromLoaderOnly) }
        let data = try await manager.data(for: original).data
        let registry = manager.configuration.registry, options = manager.configuration.decodingOptions
        let components = request.blurHashComponents
        let (info, isComplete) = try await withinWorkBudget {
            try await manager.configuration.executor.run {
                try SourceInfo.reading(data, registry: registry, options: options, blurHashComponents: components)
            }
        }
        return Rendered(image: EncodedImage(data: info.json, contentType: Self.jsonContentType), isComplete: isComplete)
    }

    static let jsonContentType = "application/json"
}
