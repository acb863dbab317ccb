import Foundation

/// Real ICC profiles (Debian's colord-data, installed by `make deps`) and profiles made from them.
public enum ICCProfiles {
    /// colord-data's profiles.
    public static let folder = URL(fileURLWithPath: "/usr/share/color/icc/colord")

    /// The named profile of colord-data, `nil` when the package is absent.
    public static func named(_ name: String) -> Data? {
        try? Data(contentsOf: folder.appendingPathComponent(name))
    }

    /// `profile` grown to at least `size` bytes by a private tag (`wiPD`) of zeros: still a valid
    /// profile, describing the same colours, as large as a printer's profile with its tables
    /// (what a photo straight from a print workflow carries). The tag table grows by one entry,
    /// so every existing tag's offset moves by 12 bytes.
    public static func padded(_ profile: Data, toAtLeast size: Int) -> Data {
        var bytes = [UInt8](profile)
        func read(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        func write(_ value: Int, at: Int) {
            for index in 0..<4 { bytes[at + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
        }
        let count = read(128)
        for entry in 0..<count { write(read(132 + 12 * entry + 4) + 12, at: 132 + 12 * entry + 4) }
        let padding = max(0, (size - bytes.count - 12 + 3) / 4 * 4)
        let tagOffset = (bytes.count + 12 + 3) / 4 * 4
        bytes.insert(contentsOf: Array("wiPD".utf8) + [0, 0, 0, 0, 0, 0, 0, 0], at: 132 + 12 * count)
        write(tagOffset, at: 132 + 12 * count + 4)
        write(padding, at: 132 + 12 * count + 8)
        bytes += [UInt8](repeating: 0, count: tagOffset - bytes.count + padding)
        write(count + 1, at: 128)
        write(bytes.count, at: 0)
        return Data(bytes)
    }
}
