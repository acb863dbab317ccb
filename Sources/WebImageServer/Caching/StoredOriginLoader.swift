import Foundation
import WebImage

/// An HTTP loader that looks in the fleet's ``ResultStore`` before the origin and keeps what it
/// downloads there (`webimage serve --origin-store`): a fleet downloads each source once, not
/// once per instance.
///
/// A revalidation (a request with validators) always goes to the origin: the pipeline asks
/// only when its copy has expired, and the stored copy expires with it. The manager already
/// shares one load per URL within the instance, so the store is asked once per instance too.
///
/// Originals are kept under the URL and the instance's ``OriginGuard/policyDigest``, as the
/// instance's own cache keys them: a stored original answers no redirect, so one fetched under a
/// looser policy (an instance that allowed a host or loopback) must not serve an instance whose
/// policy would refuse the fetch.
struct StoredOriginLoader: ImageLoader {
    let origin: any ImageLoader
    let store: ResultStore
    let policyDigest: String

    func canLoad(_ url: URL) -> Bool {
        origin.canLoad(url)
    }

    func load(_ request: ImageLoadRequest, context: ImageLoadContext) async throws -> ImageLoadResponse {
        let key = request.url.absoluteString + "|policy=" + policyDigest
        if request.validators == nil, let (data, metadata) = await store.original(forURL: key) {
            context.didReceive(data, received: data.count, expected: data.count)
            return ImageLoadResponse(data: data, url: request.url, statusCode: 200, metadata: metadata)
        }
        let response = try await origin.load(request, context: context)
        if !response.isNotModified, response.statusCode.map({ (200..<300).contains($0) }) ?? true {
            store.storeOriginal(response.data, forURL: key, metadata: response.metadata)
        }
        return response
    }

    func shutdown() async throws {
        try await origin.shutdown()
    }
}
