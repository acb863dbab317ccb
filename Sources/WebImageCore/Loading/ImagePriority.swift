/// How soon a load should run relative to others waiting for a download slot.
///
/// A request's priority can change while it waits or runs (for instance when a cell scrolls
/// back into view); a download shared by several requests runs at the highest of theirs.
///
/// ```swift
/// var request = ImageRequest(url: url)
/// request.priority = .high
/// let task = manager.loadImage(with: request)
/// task.priority = .veryHigh
/// ```
public enum ImagePriority: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    case veryLow = 0
    case low = 1
    case normal = 2
    case high = 3
    case veryHigh = 4

    public static func < (lhs: ImagePriority, rhs: ImagePriority) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .veryLow: "veryLow"
        case .low: "low"
        case .normal: "normal"
        case .high: "high"
        case .veryHigh: "veryHigh"
        }
    }
}
