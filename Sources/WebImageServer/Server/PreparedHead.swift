import NIOCore
import Synchronization

/// The header fields of a recognized URL's answer from memory, written as bytes once per
/// variant rather than once per request: `CachedVariantHandler` adds the status line, `Date`
/// and the connection's field around them.
///
/// One is kept with each recognized request target (``ProxyServer/RecognizedRequest``); it holds
/// the fields of the variant last answered for it, known by its entity tag, for a `200` and for a
/// `304`. A URL whose fields change with the clock (an imgproxy URL with `expires`, whose
/// `max-age` counts down) has none.
final class PreparedHead: Sendable {
    struct Fields {
        var ok: ByteBuffer
        var notModified: ByteBuffer
    }

    private struct Prepared {
        var etag: String
        var isComplete: Bool
        var fields: Fields
    }

    private let prepared = Mutex<Prepared?>(nil)

    /// The fields of the variant whose entity tag is `etag`, made by `make` when the kept ones
    /// are another variant's.
    func fields(etag: String, isComplete: Bool, make: () -> Fields) -> Fields {
        let kept = prepared.withLock { prepared in
            prepared.flatMap { $0.etag == etag && $0.isComplete == isComplete ? $0.fields : nil }
        }
        if let kept { return kept }
        let fields = make()
        prepared.withLock { $0 = Prepared(etag: etag, isComplete: isComplete, fields: fields) }
        return fields
    }
}
