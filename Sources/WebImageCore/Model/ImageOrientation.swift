/// How a stored image must be turned to be seen upright: the eight EXIF orientations.
///
/// The raw values are EXIF's (1–8). Decoders report the stored orientation and, unless asked
/// not to, return pixels already turned upright.
///
/// ```swift
/// let orientation = ImageOrientation(rawValue: 6)   // .right: rotate 90° clockwise to view
/// ```
public enum ImageOrientation: Int, Sendable, Hashable, CaseIterable {
    /// Stored upright.
    case up = 1
    /// Mirrored left to right.
    case upMirrored = 2
    /// Upside down (rotate 180°).
    case down = 3
    /// Mirrored top to bottom.
    case downMirrored = 4
    /// Mirrored along the top-left to bottom-right diagonal (transposed).
    case leftMirrored = 5
    /// Rotate 90° clockwise to view.
    case right = 6
    /// Mirrored along the top-right to bottom-left diagonal (transversed).
    case rightMirrored = 7
    /// Rotate 90° counter-clockwise to view.
    case left = 8

    /// The orientation for an EXIF `Orientation` tag value; `nil` outside 1–8.
    package init?(exifValue: Int) {
        self.init(rawValue: exifValue)
    }

    /// Whether viewing upright swaps width and height.
    package var swapsDimensions: Bool { rawValue >= 5 }
}
