import Foundation

/// A value read from the first bytes of an image file: ``ImageFormat`` and ``ImageHeader``.
///
/// Conforming types implement the raw-buffer initializer; this protocol adds the same
/// initializer for `Data`, `[UInt8]` and any other `DataProtocol`.
///
/// ```swift
/// let format = ImageFormat(sniffing: [0xFF, 0xD8, 0xFF, 0xE0])    // .jpeg
/// let header = ImageHeader(sniffing: try Data(contentsOf: url))   // format, size, alpha, animation
/// ```
public protocol Sniffable {
    /// Reads the value from borrowed bytes, the start of a file; `nil` when they are not an
    /// image this type recognises.
    init?(sniffing bytes: UnsafeRawBufferPointer)
}

extension Sniffable {
    /// Reads the value from the start of `data`. Contiguous storage (`[UInt8]`, `Data`, their
    /// slices) is read in place; anything else (a `DispatchData` in several regions) is copied
    /// once.
    @inlinable
    public init?(sniffing data: some DataProtocol) {
        // Inlinable so that it is specialised in the caller's module, where the concrete
        // collection type is known.
        let value = data.withContiguousStorageIfAvailable { Self(sniffing: UnsafeRawBufferPointer($0)) }
            ?? Array(data).withUnsafeBytes { Self(sniffing: $0) }
        guard let value else { return nil }
        self = value
    }

    /// Reads the value from the start of `data`.
    @inlinable
    public init?(sniffing data: Data) {
        guard let value = data.withUnsafeBytes({ Self(sniffing: $0) }) else { return nil }
        self = value
    }
}
