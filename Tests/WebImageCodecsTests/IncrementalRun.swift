import Foundation
import Testing
import WebImageCore

/// What an incremental decoder gave for a file appended in chunks: the previews it offered,
/// asked for after each chunk, and the finished image.
struct IncrementalRun {
    var previews: [ImageContainer]
    var final: ImageContainer

    /// Appends `data` to `decoder`'s incremental decoder in pieces of `chunkSize`, asking for a
    /// preview after each, then finishes it.
    static func feed(
        _ decoder: some ImageDecoder, _ data: Data, chunkSize: Int, options: ImageDecodingOptions = .init()
    ) throws -> IncrementalRun {
        let incremental = try #require(decoder.makeIncrementalDecoder(options: options))
        var previews: [ImageContainer] = []
        var offset = 0
        while offset < data.count {
            let end = min(offset + chunkSize, data.count)
            try incremental.append(data.subdata(in: offset..<end))
            if let preview = try incremental.preview() { previews.append(preview) }
            offset = end
        }
        return IncrementalRun(previews: previews, final: try incremental.finish())
    }
}
