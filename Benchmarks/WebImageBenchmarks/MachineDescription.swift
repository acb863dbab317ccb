import Foundation

/// The machine a run happened on, for the header of the results.
enum MachineDescription {
    static var current: String {
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n")
            .first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
        let memory = Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824
        let kernel = ProcessInfo.processInfo.operatingSystemVersionString
        return String(format: "%@, %d cores, %.0f GiB, %@", cpu, ProcessInfo.processInfo.activeProcessorCount, memory, kernel)
    }
}
