import Crypto
import Foundation
import NIOCore
import WebImage

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
    let memory: MemoryCache<String, EncodedImage>?
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
        memory = memoryLimit > 0 ? MemoryCache(configuration: .init(costLimit: memoryLimit, ageLimit: lifetime)) : nil
        self.disk = disk
        self.lifetime = lifetime
        self.now = now
    }

    /// Disk keys are kept apart from the originals' (which the pipeline stores under their
    /// URLs): a variant key is never an original's.
    static func diskKey(_ key: String) -> ImageCacheKey { ImageCacheKey(source: key, variant: ["proxy"]) }

    /// The variant from memory, or `nil`: a lookup under one lock, with no hop and no I/O, so
    /// the server can answer it on the connection's event loop.
    package func memoryImage(forKey key: String) -> EncodedImage? {
        memory?.value(forKey: key)
    }

    package func image(forKey key: String) async -> (EncodedImage, VariantSource)? {
        if let hit = memoryImage(forKey: key) { return (hit, .memory) }
        guard let disk, disk.contains(Self.diskKey(key)),
              let entry = await disk.entry(forKey: Self.diskKey(key)),
              let contentType = entry.metadata.contentType, let etag = entry.metadata.etag else { return nil }
        let image = EncodedImage(data: entry.data, contentType: contentType, etag: etag)
        memory?.set(image, forKey: key, cost: image.body.readableBytes)
        return (image, .disk)
    }

    package func store(_ image: EncodedImage, forKey key: String) async {
        memory?.set(image, forKey: key, cost: image.body.readableBytes)
        let expiresAt = lifetime.map { now().addingTimeInterval(Double($0.components.seconds)) }
        try? await disk?.store(image.data, forKey: Self.diskKey(key), metadata: .init(contentType: image.contentType, etag: image.etag, expiresAt: expiresAt))
    }
}
