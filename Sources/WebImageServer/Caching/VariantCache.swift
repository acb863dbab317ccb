import Crypto
import Foundation
import NIOCore
import WebImage
import WebImageCore

/// One encoded output of the proxy, ready to send.
///
/// ```swift
/// let image = try await proxy.image(for: try ProxyRequest(query: "url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300"), accept: ["image/webp"]).image
/// print(image.contentType)   // "image/webp"
/// print(image.etag)          // "\"3f2a…\"": the first 16 bytes of the SHA-256 of the bytes, in hex
/// ```
public struct EncodedImage: Sendable, Hashable {
    /// The bytes, kept as the buffer every response sends as it is (a cached variant is never
    /// copied per request).
    public let body: ByteBuffer
    public let contentType: String
    /// A strong validator: a digest of ``data``, quoted. Equal bytes always have equal tags,
    /// whichever process or run made them.
    public let etag: String

    /// The bytes, copied out of ``body``.
    public var data: Data { Data(body.readableBytesView) }

    package init(data: Data, contentType: String) {
        let digest = SHA256.hash(data: data)
        self.init(data: data, contentType: contentType, etag: "\"" + Hex.encode(digest.prefix(16)) + "\"")
    }

    init(data: Data, contentType: String, etag: String) {
        self.body = ByteBuffer(bytes: data)
        self.contentType = contentType
        self.etag = etag
    }
}

/// Where a response came from, for the `X-Cache` header, the log and the metrics.
///
/// ```swift
/// let result = try await proxy.image(for: try ProxyRequest(query: "url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300"), accept: ["image/webp"])
/// if result.source == .miss { print("made now") }
/// ```
public enum VariantSource: String, Sendable {
    /// The encoded variant, from memory.
    case memory
    /// The encoded variant, from disk, or from the fleet's result store
    /// (``ImageProxy/Output/isFromResultStore``).
    case disk
    /// Made now: the pipeline loaded (or found) the original, decoded, processed, encoded.
    case miss
}

/// The proxy's encoded outputs: the library's ``MemoryCache`` over the bytes, then its
/// ``DiskCache`` (the one that holds the originals, under keys of their own), so a repeated
/// variant is answered without the origin, the decoder or the encoder.
///
/// The manager's own caches cannot do this on their own: its memory level holds decoded
/// images (the proxy would encode every response again), and its processed-bytes disk level
/// (``ImageRequest/processedDataFormat``) is decoded again on a hit.
///
/// Memory is held in two parts, so a burst of variants asked once (a crawler, a new page of
/// random sizes) cannot push out the ones asked again and again: a new variant enters a
/// probation part of an eighth of the memory limit, where such one-off variants evict each
/// other, and moves to the protected rest when it is asked for again (nginx's
/// `proxy_cache_min_uses 2` and segmented LRU caches do the same). A burst of new variants
/// therefore holds at most an eighth of the limit once it is over.
///
/// Variants live as long as the `max-age` the proxy gives clients: after that they are made
/// again, from the original as the pipeline's disk cache then has it (which follows the
/// origin's own expiry), so a changed source shows within a day by default.
///
/// ```swift
/// let cache = VariantCache(memoryLimit: 256 << 20, disk: disk, lifetime: .seconds(86_400))
/// await cache.store(encoded, forKey: key)
/// if let (image, source) = await cache.image(forKey: key) { … }
/// ```
package final class VariantCache: Sendable {
    /// Variants asked for once, within an eighth of the memory limit.
    let probation: MemoryCache<String, EncodedImage>?
    /// Variants asked for again, within the rest.
    let protected: MemoryCache<String, EncodedImage>?
    let disk: DiskCache?
    let lifetime: Duration?
    /// The clock expiry dates are computed from; tests share it with the disk cache's.
    let now: @Sendable () -> Date

    /// `memoryLimit` 0 keeps nothing in memory; `disk` `nil` keeps nothing on disk; `lifetime`
    /// `nil` keeps variants until they are evicted.
    package convenience init(memoryLimit: Int, disk: DiskCache?, lifetime: Duration? = nil) {
        self.init(memoryLimit: memoryLimit, disk: disk, lifetime: lifetime, now: { Date() })
    }

    init(memoryLimit: Int, disk: DiskCache?, lifetime: Duration?, now: @escaping @Sendable () -> Date) {
        if memoryLimit > 0 {
            // One variant may cost a tenth of the whole limit in either part, as it could in
            // one cache: a big variant is not refused a place in probation.
            let probationLimit = max(memoryLimit / 8, 1), protectedLimit = max(memoryLimit - probationLimit, 1)
            let entryLimit = Double(memoryLimit) / 10
            probation = MemoryCache(configuration: .init(
                costLimit: probationLimit, ageLimit: lifetime, entryCostLimitFraction: min(1, entryLimit / Double(probationLimit))))
            protected = MemoryCache(configuration: .init(
                costLimit: protectedLimit, ageLimit: lifetime, entryCostLimitFraction: min(1, entryLimit / Double(protectedLimit))))
        } else {
            probation = nil
            protected = nil
        }
        self.disk = disk
        self.lifetime = lifetime
        self.now = now
    }

    /// Disk keys are kept apart from the originals' (which the pipeline stores under their
    /// URLs): a variant key is never an original's.
    static func diskKey(_ key: String) -> ImageCacheKey { ImageCacheKey(source: key, variant: ["proxy"]) }

    /// The variant from memory, or `nil`: a lookup under one lock, with no hop and no I/O, so
    /// the server can answer it on the connection's event loop.
    /// A hit in probation is the variant's second request: it moves to the protected part.
    package func memoryImage(forKey key: String) -> EncodedImage? {
        if let hit = protected?.value(forKey: key) { return hit }
        guard let hit = probation?.removeValue(forKey: key) else { return nil }
        protected?.set(hit, forKey: key, cost: hit.body.readableBytes)
        return hit
    }

    /// The variant from memory, else from disk; each lookup in a span when a span is current.
    package func image(forKey key: String) async -> (EncodedImage, VariantSource)? {
        if let hit = PipelineStage.memoryLookup.lookUp({ memoryImage(forKey: key) }) { return (hit, .memory) }
        return await PipelineStage.diskRead.lookUp { await diskImage(forKey: key) }.map { ($0, .disk) }
    }

    /// The variant from disk, then kept in memory (protected: it was asked for before).
    private func diskImage(forKey key: String) async -> EncodedImage? {
        guard let disk, disk.contains(Self.diskKey(key)),
              let entry = await disk.entry(forKey: Self.diskKey(key)),
              let contentType = entry.metadata.contentType, let etag = entry.metadata.etag else { return nil }
        let image = EncodedImage(data: entry.data, contentType: contentType, etag: etag)
        protected?.set(image, forKey: key, cost: image.body.readableBytes)
        return image
    }

    package func store(_ image: EncodedImage, forKey key: String) async {
        probation?.set(image, forKey: key, cost: image.body.readableBytes)
        let expiresAt = lifetime.map { now().addingTimeInterval(Double($0.components.seconds)) }
        try? await disk?.store(image.data, forKey: Self.diskKey(key), metadata: .init(contentType: image.contentType, etag: image.etag, expiresAt: expiresAt))
    }
}
