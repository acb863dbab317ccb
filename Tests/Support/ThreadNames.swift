import Foundation

/// The calling thread's name as the kernel knows it (what `top` and `gdb` show; Linux keeps
/// 15 bytes of it).
public func currentThreadName() -> String {
    (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) ?? ""
}

/// The names of every thread of process `pid`, as the kernel knows them.
public func threadNames(ofProcess pid: Int32) throws -> [String] {
    let tasks = "/proc/\(pid)/task"
    return try FileManager.default.contentsOfDirectory(atPath: tasks).compactMap { task in
        try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8).trimmingCharacters(in: .newlines)
    }
}
