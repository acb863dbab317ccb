import Foundation

/// A copy of a file's bytes at an address that never moves, for a frame source that keeps
/// parsing the file between calls: `Data.withUnsafeBytes` only lends its address for the
/// length of one closure, and libwebp's demuxer and the GIF and APNG walks keep pointers
/// into the bytes for as long as the source lives.
final class StableBytes {
    let buffer: UnsafeRawBufferPointer
    private let storage: UnsafeMutableRawBufferPointer

    init(_ data: Data) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(data.count, 1), alignment: 16)
        data.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { storage.baseAddress!.copyMemory(from: base, byteCount: bytes.count) }
        }
        self.storage = storage
        buffer = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[0..<data.count])
    }

    deinit {
        storage.deallocate()
    }
}
