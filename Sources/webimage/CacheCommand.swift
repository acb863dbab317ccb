import ArgumentParser
import Foundation
import WebImage

/// `webimage cache stats|clear|trim`: look after the disk cache the other commands share.
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Show, clear or trim the disk cache.",
        subcommands: [Stats.self, Clear.self, Trim.self]
    )

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the cache's folder, entries and size.")

        @OptionGroup var cache: CacheOptions

        @Flag(help: "Print one JSON object (keys: directory, entries, bytes, limit).")
        var json = false

        func run() async throws {
            let disk = try cache.openCache()
            if json {
                let object: [String: Any] = ["directory": disk.directory.path, "entries": disk.count, "bytes": disk.totalSize, "limit": disk.configuration.sizeLimit]
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
            } else {
                print("directory  \(disk.directory.path)")
                print("entries    \(disk.count)")
                print("size       \(Self.format(bytes: disk.totalSize)) of \(Self.format(bytes: disk.configuration.sizeLimit))")
            }
        }

        static func format(bytes: Int) -> String {
            let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
            var value = Double(bytes)
            var unit = 0
            while value >= 1024, unit < units.count - 1 {
                value /= 1024
                unit += 1
            }
            return unit == 0 ? "\(bytes) bytes" : String(format: "%.1f %@", value, units[unit])
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every entry.")

        @OptionGroup var cache: CacheOptions

        func run() async throws {
            let disk = try cache.openCache()
            let (count, size) = (disk.count, disk.totalSize)
            try await disk.removeAll()
            print("removed \(count) entries (\(Stats.format(bytes: size)))")
        }
    }

    struct Trim: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove expired entries, then least recently used ones until the cache fits a size."
        )

        @OptionGroup var cache: CacheOptions

        @Option(help: ArgumentHelp("The size to trim to, in bytes (default: the cache's limit).", valueName: "bytes"))
        var size: Int?

        func validate() throws {
            if let size, size < 0 { throw ValidationError("--size cannot be negative") }
        }

        func run() async throws {
            let disk = try cache.openCache()
            let (count, bytes) = (disk.count, disk.totalSize)
            let report = await disk.sweep()
            await disk.trim(toSize: size ?? disk.configuration.sizeLimit)
            print("removed \(count - disk.count) entries (\(Stats.format(bytes: bytes - disk.totalSize))), \(report.expiredEntries) of them expired; \(disk.count) entries (\(Stats.format(bytes: disk.totalSize))) remain")
        }
    }
}
