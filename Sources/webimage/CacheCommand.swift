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
            print("removed \(counted(count, "entry", "entries")) (\(Stats.format(bytes: size)))")
        }
    }

    struct Trim: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove expired entries, then least recently used ones until the cache fits a size."
        )

        @OptionGroup var cache: CacheOptions

        @Option(help: ArgumentHelp("The size to trim to: bytes, or with a unit (512K, 100MiB, 1GB; default: the cache's limit).", valueName: "size"))
        var size: ByteCount?

        func run() async throws {
            let disk = try cache.openCache()
            let (count, bytes) = (disk.count, disk.totalSize)
            let report = await disk.sweep()
            await disk.trim(toSize: size?.bytes ?? disk.configuration.sizeLimit)
            print("removed \(counted(count - disk.count, "entry", "entries")) (\(Stats.format(bytes: bytes - disk.totalSize))), \(report.expiredEntries) of them expired; \(counted(disk.count, "entry", "entries")) (\(Stats.format(bytes: disk.totalSize))) \(disk.count == 1 ? "remains" : "remain")")
        }
    }
}
