import Foundation
import WebImage

/// One line of the results table: our figure beside a reference measured in the same run.
struct BenchmarkRow: Codable {
    enum Goal: Codable {
        /// `ours / reference` must not exceed this (times, where lower is better).
        case ratioAtMost(Double)
        /// `ours - reference` must be at least this (percentages, where higher is better).
        case differenceAtLeast(Double)
        /// `ours` must not exceed this absolute value (in the row's unit); the reference is shown
        /// for context.
        case valueAtMost(Double)
        /// Reported for information; no target.
        case none
    }

    var group: String
    var name: String
    var ours: Double
    var reference: Double
    var referenceName: String
    var unit: String
    var goal: Goal

    var ratio: Double { ours / reference }

    var comparison: String {
        switch goal {
        case .differenceAtLeast: String(format: "%+.2f pt", ours - reference)
        default: String(format: "%.3f×", ratio)
        }
    }

    var target: String {
        switch goal {
        case .ratioAtMost(let limit): String(format: "≤ %.2f×", limit)
        case .valueAtMost(let limit): "ours ≤ \(Report.format(limit, unit))"
        case .differenceAtLeast(let limit): String(format: "≥ %+.1f pt", limit)
        case .none: "—"
        }
    }

    var met: Bool? {
        switch goal {
        case .ratioAtMost(let limit): ratio <= limit
        case .valueAtMost(let limit): ours <= limit
        case .differenceAtLeast(let limit): ours - reference >= limit
        case .none: nil
        }
    }
}

/// Collects rows and prints them as one Markdown table.
final class Report {
    private(set) var rows: [BenchmarkRow] = []

    func add(_ row: BenchmarkRow) {
        rows.append(row)
        let status = row.met.map { $0 ? "ok" : "MISSED" } ?? ""
        FileHandle.standardError.write(Data(
            "  \(row.group) / \(row.name): \(format(row.ours, row.unit)) vs \(format(row.reference, row.unit)) \(row.comparison) \(status)\n".utf8))
    }

    func printTable() {
        print("| group | benchmark | ours | reference | ref. value | ours vs ref. | target | met |")
        print("|---|---|---:|---|---:|---:|---|---|")
        for row in rows {
            let met = row.met.map { $0 ? "yes" : "**no**" } ?? "—"
            print("| \(row.group) | \(row.name) | \(format(row.ours, row.unit)) | \(row.referenceName) | \(format(row.reference, row.unit)) | \(row.comparison) | \(row.target) | \(met) |")
        }
    }

    func format(_ value: Double, _ unit: String) -> String {
        Report.format(value, unit)
    }

    static func format(_ value: Double, _ unit: String) -> String {
        switch unit {
        case "ns": value >= 10_000 ? String(format: "%.1f µs", value / 1000) : String(format: "%.1f ns", value)
        case "%": String(format: "%.2f %%", value)
        case "ms": String(format: "%.2f ms", value)
        default: String(format: "%.2f %@", value, unit)
        }
    }
}

/// Monotonic nanoseconds.
@inline(__always)
func now() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// Nanoseconds per operation: `body` performs `operations` operations; it runs `rounds` times
/// after one warm-up, and the median round counts (robust to a noisy neighbour on 2 cores).
func nanosecondsPerOperation(operations: Int, rounds: Int = 7, _ body: () -> Void) -> Double {
    body()
    var samples: [Double] = []
    for _ in 0..<rounds {
        let start = now()
        body()
        samples.append(Double(now() - start) / Double(operations))
    }
    samples.sort()
    return samples[samples.count / 2]
}

/// Keeps the optimizer from deleting a computation whose result is otherwise unused.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// The corpus photos that `CoderRegistry.system()` decodes, by file name (sorted), in the
/// standardized `../shared/corpus/photos`; `nil`, after a note naming `group`, when there are none.
func decodableCorpusPhotos(for group: String) -> (folder: URL, names: [String])? {
    let photos = URL(fileURLWithPath: "../shared/corpus/photos").standardizedFileURL
    let registry = CoderRegistry.system()
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: photos.path).sorted().filter({ name in
        guard let data = try? Data(contentsOf: photos.appendingPathComponent(name)), let format = ImageFormat(sniffing: data) else { return false }
        return registry.decoder(for: format) != nil
    }), !names.isEmpty else {
        FileHandle.standardError.write(Data("  \(group): ../shared/corpus/photos is absent; skipped\n".utf8))
        return nil
    }
    return (photos, names)
}
