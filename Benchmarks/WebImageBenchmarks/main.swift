import Foundation

// `make bench` runs every group; `WebImageBenchmarks memory disk` runs the named ones.
if CommandLine.arguments.dropFirst().first == "--child" {
    // A fresh process for a memory measurement (see CodecBenchmarks.swift, PrefetchBenchmarks.swift).
    if CommandLine.arguments.dropFirst(2).first == "prefetch" {
        runPrefetchChild(Array(CommandLine.arguments.dropFirst(3)))
    }
    runMemoryChild(Array(CommandLine.arguments.dropFirst(3)))
}
let requested = Set(CommandLine.arguments.dropFirst())
let report = Report()

func shouldRun(_ group: String) -> Bool { requested.isEmpty || requested.contains(group) }

let machine = MachineDescription.current
FileHandle.standardError.write(Data("machine: \(machine)\n".utf8))

for (group, run) in benchmarkGroups where shouldRun(group) {
    FileHandle.standardError.write(Data("== \(group)\n".utf8))
    run(report)
}

print("Machine: \(machine)\n")
report.printTable()

if let path = ProcessInfo.processInfo.environment["BENCH_JSON"] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(report.rows).write(to: URL(fileURLWithPath: path))
}
