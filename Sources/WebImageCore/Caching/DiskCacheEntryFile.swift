import Foundation

/// The layout of one entry's file:
///
///     [payload][metadata][footer: 64 bytes]
///
/// The footer sits at the end so that a hit reads the whole file into one buffer and hands the
/// payload out as that buffer's prefix, with no copy. A file is valid only when the footer's
/// magic, checksum and lengths agree with the file's size: a torn or truncated file (a writer
/// killed before `rename`, a crash, another program's bytes) never reads back as an entry.
///
/// Footer (little-endian): magic u32 · version u16 · reserved u16 · payload length u64 ·
/// metadata length u32 · reserved u32 · stored-at ms i64 · expires-at ms i64 (0: none) ·
/// first digest word u64 (guards against a file under the wrong name) · payload checksum u64
/// (``payloadChecksum(_:)``, verified on a file's first read in a process: truncation is caught
/// by the lengths, a flipped byte inside the payload only by this) · checksum u64 (FNV-1a over the metadata and
/// the footer before it). Version 1 files had no payload checksum and read as damaged.
enum DiskCacheEntryFile {
    static let footerSize = 64
    static let magic: UInt32 = 0x3143_4957  // "WIC1"
    static let version: UInt16 = 2

    struct Footer: Equatable {
        var payloadLength: Int
        var metadataLength: Int
        var storedAt: Int64
        var expiresAt: Int64
        var digestWord: UInt64
        var payloadChecksum: UInt64
    }

    /// The metadata and footer that follow `payloadLength` bytes of payload.
    static func trailer(
        metadata: DiskCache.Metadata, key: ImageCacheKey, payloadLength: Int, payloadChecksum: UInt64, storedAt: Int64, digest: DiskCacheDigest
    ) -> [UInt8] {
        var bytes = encode(metadata: metadata, key: key)
        let metadataLength = bytes.count
        bytes.reserveCapacity(metadataLength + footerSize)
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }
        append(magic)
        append(version)
        append(UInt16(0))
        append(UInt64(payloadLength))
        append(UInt32(metadataLength))
        append(UInt32(0))
        append(storedAt)
        append(metadata.expiresAt.map(milliseconds) ?? 0)
        append(digest.w0)
        append(payloadChecksum)
        let checksum = bytes.withUnsafeBytes { fnv1a64($0) }
        append(checksum)
        return bytes
    }

    /// Parses and checks the footer at the end of a file's bytes. `tail` holds the last bytes of a
    /// file of `fileSize` bytes: at least the footer, and the metadata before it for the checksum
    /// to be verified (the whole file on a hit; only the tail when the index is rebuilt).
    static func footer(inTail tail: UnsafeRawBufferPointer, fileSize: Int, digest: DiskCacheDigest) -> Footer? {
        guard tail.count >= footerSize, fileSize >= tail.count else { return nil }
        let start = tail.count - footerSize
        func load<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            T(littleEndian: tail.loadUnaligned(fromByteOffset: start + offset, as: T.self))
        }
        guard load(0, UInt32.self) == magic, load(4, UInt16.self) == version else { return nil }
        let payloadLength = load(8, UInt64.self)
        let metadataLength = Int(load(16, UInt32.self))
        let bodySize = UInt64(fileSize - footerSize)
        guard payloadLength <= bodySize, UInt64(metadataLength) == bodySize - payloadLength, metadataLength <= start else {
            return nil
        }
        let checked = UnsafeRawBufferPointer(rebasing: tail[(start - metadataLength)..<(tail.count - 8)])
        guard fnv1a64(checked) == load(56, UInt64.self) else { return nil }
        let footer = Footer(
            payloadLength: Int(payloadLength),
            metadataLength: metadataLength,
            storedAt: load(24, Int64.self),
            expiresAt: load(32, Int64.self),
            digestWord: load(40, UInt64.self),
            payloadChecksum: load(48, UInt64.self)
        )
        guard footer.digestWord == digest.w0 else { return nil }
        return footer
    }

    /// The size of the tail (metadata and footer) a footer describes.
    static func tailSize(_ footer: Footer) -> Int { footer.metadataLength + footerSize }

    // MARK: Metadata: a few tagged, length-prefixed strings (cheaper to parse than JSON on a hit).

    private enum Tag: UInt8 {
        case key = 1, contentType, url, etag, lastModified
        /// One part of a variant key, repeated in order; the encoding of processed bytes.
        case variantPart, encoding
    }

    static func encode(metadata: DiskCache.Metadata, key: ImageCacheKey) -> [UInt8] {
        var bytes: [UInt8] = []
        func field(_ tag: Tag, _ value: String?) {
            guard let value else { return }
            let utf8 = Array(value.utf8.prefix(Int(UInt16.max)))
            bytes.append(tag.rawValue)
            withUnsafeBytes(of: UInt16(utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: utf8)
        }
        field(.key, key.source)
        for part in key.variant { field(.variantPart, part) }
        field(.encoding, key.encoding?.rawValue)
        field(.contentType, metadata.contentType)
        field(.url, metadata.url)
        field(.etag, metadata.etag)
        field(.lastModified, metadata.lastModified)
        return bytes
    }

    /// Decodes the metadata of a validated file; unknown tags are skipped for forward
    /// compatibility.
    static func decodeMetadata(_ raw: UnsafeRawBufferPointer, expiresAt: Int64) -> (key: ImageCacheKey?, metadata: DiskCache.Metadata) {
        var metadata = DiskCache.Metadata()
        var key: ImageCacheKey?
        var variant: [String] = []
        var encoding: ImageFormat?
        var offset = 0
        while offset + 3 <= raw.count {
            let tag = raw[offset]
            let length = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 1, as: UInt16.self)))
            offset += 3
            guard offset + length <= raw.count else { break }
            let value = String(decoding: UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + length)]), as: UTF8.self)
            offset += length
            switch Tag(rawValue: tag) {
            case .key: key = ImageCacheKey(value)
            case .variantPart: variant.append(value)
            case .encoding: encoding = ImageFormat(rawValue: value)
            case .contentType: metadata.contentType = value
            case .url: metadata.url = value
            case .etag: metadata.etag = value
            case .lastModified: metadata.lastModified = value
            case nil: continue
            }
        }
        if expiresAt != 0 { metadata.expiresAt = date(milliseconds: expiresAt) }
        key?.variant = variant
        key?.encoding = encoding
        return (key, metadata)
    }
}

/// Milliseconds since 1970, saturating: a date a caller made up (`Metadata.expiresAt` far beyond
/// year 292 million) is recorded as the farthest one, not a trap.
func milliseconds(_ date: Date) -> Int64 {
    let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
    if value.isNaN { return 0 }
    return Int64(exactly: value) ?? (value < 0 ? .min : .max)
}

func date(milliseconds: Int64) -> Date {
    Date(timeIntervalSince1970: Double(milliseconds) / 1000)
}
