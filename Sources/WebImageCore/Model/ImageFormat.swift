/// An image file format, sniffed from the file's first bytes (never from a URL or file name).
///
/// The sniffing itself is filled in by the format-sniffing work; these are the formats the
/// library names.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    case jpeg, png, apng, gif, webp, tiff, bmp, ico, heic, heif, avif, jxl, svg
}
