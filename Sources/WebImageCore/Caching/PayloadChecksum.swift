/// The checksum of an entry's payload, verified on the first read of each entry's file in a
/// process (``DiskCache``), so that a byte flipped on the medium (or by another program) is not
/// served as an image. It runs at about 18 GB/s, yet that is more than a hot entry's whole read
/// from the page cache (a 200 KB entry: 11 µs against 7 µs), hence once, not on every read.
///
/// Four lanes take eight bytes each per step, the lanes independent so their multiplies overlap
/// (the structure of xxHash64, written here for the cache's one use). Each step, each merge and
/// the final mix are bijections of the value they change, so any change confined to one word —
/// every single-byte flip — always changes the result. Not a defence against an adversary who
/// can write to the cache folder, which nothing is.
///
/// ```swift
/// let checksum = data.withUnsafeBytes(payloadChecksum)
/// ```
package func payloadChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    let prime1: UInt64 = 0x9E37_79B1_85EB_CA87, prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F, prime3: UInt64 = 0x1656_67B1_9E37_79F9
    @inline(__always) func rotated(_ value: UInt64, _ bits: UInt64) -> UInt64 { (value << bits) | (value >> (64 - bits)) }
    @inline(__always) func round(_ lane: UInt64, _ word: UInt64) -> UInt64 {
        rotated(lane &+ word &* prime2, 31) &* prime1
    }
    var lanes: (UInt64, UInt64, UInt64, UInt64) = (prime1, prime2, ~prime1, ~prime2)
    let count = bytes.count
    var offset = 0
    while offset + 32 <= count {
        lanes.0 = round(lanes.0, UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
        lanes.1 = round(lanes.1, UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
        lanes.2 = round(lanes.2, UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self)))
        lanes.3 = round(lanes.3, UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self)))
        offset += 32
    }
    // The last bytes, one at a time, into the first lane.
    while offset < count {
        lanes.0 = round(lanes.0, UInt64(bytes[offset]))
        offset += 1
    }
    var hash = UInt64(count) &* prime3
    for lane in [lanes.0, lanes.1, lanes.2, lanes.3] {
        hash = rotated((hash ^ round(0, lane)) &* prime1 &+ prime3, 27)
    }
    hash ^= hash >> 33
    hash &*= prime2
    hash ^= hash >> 29
    hash &*= prime3
    return hash ^ (hash >> 32)
}
