import Crypto

/// The SHA-256 of a cache key: the entry's identity in the index and its file name on disk.
///
/// Stored as four words so the index hashes and compares it without touching the heap.
struct DiskCacheDigest: Hashable, Sendable {
    var w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64

    init(key: ImageCacheKey) {
        self = key.withIdentityBytes { DiskCacheDigest(bytes: $0) }
    }

    init(bytes: UnsafeRawBufferPointer) {
        let digest = SHA256.hash(data: bytes)
        self = digest.withUnsafeBytes { DiskCacheDigest(words: $0) }
    }

    /// Reads 32 bytes as four little-endian words.
    init(words raw: UnsafeRawBufferPointer) {
        w0 = raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
        w1 = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        w2 = raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self)
        w3 = raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
    }

    /// Parses the 64-character lowercase hex file name back into a digest.
    init?(fileName: some StringProtocol) {
        guard fileName.utf8.count == 64 else { return nil }
        var words: [UInt64] = []
        var index = fileName.startIndex
        for _ in 0..<4 {
            let end = fileName.index(index, offsetBy: 16)
            guard let word = UInt64(fileName[index..<end], radix: 16) else { return nil }
            words.append(word.byteSwapped)
            index = end
        }
        self.init(w0: words[0], w1: words[1], w2: words[2], w3: words[3])
    }

    init(w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64) {
        (self.w0, self.w1, self.w2, self.w3) = (w0, w1, w2, w3)
    }

    func hash(into hasher: inout Hasher) {
        // The words are already uniformly distributed; one is plenty.
        hasher.combine(w0)
    }

    func write(to raw: UnsafeMutableRawPointer) {
        raw.storeBytes(of: w0, toByteOffset: 0, as: UInt64.self)
        raw.storeBytes(of: w1, toByteOffset: 8, as: UInt64.self)
        raw.storeBytes(of: w2, toByteOffset: 16, as: UInt64.self)
        raw.storeBytes(of: w3, toByteOffset: 24, as: UInt64.self)
    }

    /// The digest as 64 lowercase hex characters, in byte order.
    var fileName: String {
        let digits = Hex.digits
        return String(unsafeUninitializedCapacity: 64) { out in
            var position = 0
            for word in [w0, w1, w2, w3] {
                var bytes = word  // little-endian in memory: byte 0 first
                for _ in 0..<8 {
                    let byte = UInt8(truncatingIfNeeded: bytes)
                    out[position] = digits[Int(byte >> 4)]
                    out[position + 1] = digits[Int(byte & 0x0f)]
                    position += 2
                    bytes >>= 8
                }
            }
            return 64
        }
    }

}

/// FNV-1a over bytes: a cheap checksum for journal records and entry footers, which only need to
/// catch torn or foreign bytes, not an adversary.
func fnv1a64(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
    var hash = seed
    for byte in bytes {
        hash ^= UInt64(byte)
        hash &*= 0x0000_0100_0000_01b3
    }
    return hash
}
