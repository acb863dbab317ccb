import Foundation
import FuzzSupport
import WebImageCodecs
import WebImageCore

/// Every incremental decoder, fed the input in chunks whose sizes come from the input, asking
/// for a preview after each chunk as the progressive pipeline does. When both the incremental
/// and the one-shot decode succeed, the final images must be identical: a difference is a
/// finding.
private let registry = CoderRegistry.system()

func fuzzIncremental(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = FuzzInput.data(bytes, count)
    let options = FuzzInput.decodingOptions
    guard let format = ImageHeader(sniffing: data)?.format,
          let incremental = registry.makeIncrementalDecoder(for: format, options: options) else { return 0 }

    var random = InputRandom(data)
    // At most about 32 chunks, so that previews (each a full-size image) stay cheap.
    let largest = max(1, data.count / 4)
    let smallest = max(1, data.count / 32)
    var offset = 0
    var appended = true
    while offset < data.count {
        let end = min(data.count, offset + smallest + random.next(below: max(1, largest - smallest + 1)))
        // Sometimes a slice (indices not starting at 0), sometimes a copy.
        let chunk = random.next(below: 2) == 0 ? data[offset..<end] : Data(data[offset..<end])
        offset = end
        do {
            try incremental.append(chunk)
            if let preview = try incremental.preview() {
                ContainerSanity.check(preview, options: options)
                if !preview.isPreview { FuzzInput.finding("a preview without isPreview") }
            }
        } catch is ImageError {
            appended = false
            break
        } catch {
            FuzzInput.finding("an incremental decode threw \(type(of: error)), not an ImageError: \(error)")
        }
    }
    guard appended, let final = result({ try incremental.finish() }) else { return 0 }
    ContainerSanity.check(final, options: options)
    guard let oneShot = result({ try registry.decode(data, options: options) }) else { return 0 }
    if final.image != oneShot.image, !isKnownJPEGChunkingDifference(data, format: format, oneShot: oneShot, options: options) {
        FuzzInput.finding("""
            \(format.rawValue): the incremental decode (\(final.image.width)×\(final.image.height)) differs \
            from the one-shot decode (\(oneShot.image.width)×\(oneShot.image.height))
            """)
    }
    if (final.animation?.frames.count ?? 1) != (oneShot.animation?.frames.count ?? 1) {
        FuzzInput.finding("\(format.rawValue): the incremental decode has \(final.animation?.frames.count ?? 1) frames, the one-shot decode \(oneShot.animation?.frames.count ?? 1)")
    }
    return 0
}

/// The decode's result, `nil` for an ``ImageError``; any other error is a finding.
private func result(_ decode: () throws -> ImageContainer) -> ImageContainer? {
    do {
        return try decode()
    } catch is ImageError {
        return nil
    } catch {
        FuzzInput.finding("a decode threw \(type(of: error)), not an ImageError: \(error)")
    }
}

/// Open finding (docs/reliability.md, Tests/Fixtures/fuzz/fuzz-incremental): on a JPEG with
/// corrupt entropy-coded data, the incremental decoder's final image depends on how the bytes
/// were split, while the same decoder given the whole file at once equals the one-shot decode.
/// Such a mismatch is let through unless WEBIMAGE_FUZZ_STRICT is set, so that a campaign goes on
/// to find other things; any other mismatch is a finding.
private func isKnownJPEGChunkingDifference(_ data: Data, format: ImageFormat, oneShot: ImageContainer, options: ImageDecodingOptions) -> Bool {
    guard format == .jpeg, ProcessInfo.processInfo.environment["WEBIMAGE_FUZZ_STRICT"] == nil,
          let whole = registry.makeIncrementalDecoder(for: format, options: options) else { return false }
    guard let final = result({ try whole.append(data); return try whole.finish() }) else { return false }
    return final.image == oneShot.image
}
