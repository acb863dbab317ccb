import Foundation
import FuzzSupport
import WebImageCore

/// A corrupt cache directory. A cache holding one entry is written, then the input replaces
/// either its journal (first byte even) or the entry's file (first byte odd) with the rest of
/// the input, and the cache is opened again and read, written and swept. Whatever the bytes,
/// opening must not fail for them, and a read must give either nothing or the stored entry,
/// intact: a damaged file is dropped, never served.
private let key: ImageCacheKey = "https://example.com/fuzz.png"
/// Computed, not a stored global: LeakSanitizer does not follow the spare-bit-tagged pointer
/// a global `Data` keeps its storage in, and would report it as a leak.
private var payload: Data { Data("the entry's payload, long enough to be worth a checksum".utf8) }
private let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("webimage-fuzz-disk-cache-\(getpid())")
/// No sweep in the background: the harness sweeps itself, on its own thread, so that nothing
/// touches the directory while the next input is written into it.
private let configuration: DiskCache.Configuration = {
    var configuration = DiskCache.Configuration()
    configuration.sweepsOnOpen = false
    return configuration
}()

/// Seeds (a whole journal and a whole entry file, as the cache writes them) go to the folder
/// named by `WEBIMAGE_FUZZ_SEEDS`, so the campaign starts from valid files.
func writeSeedsIfAsked() {
    guard let seeds = ProcessInfo.processInfo.environment["WEBIMAGE_FUZZ_SEEDS"] else { return }
    let files = freshCache()
    try? FileManager.default.createDirectory(atPath: seeds, withIntermediateDirectories: true)
    for (index, file) in [files.journal, files.entry].enumerated() {
        guard let bytes = FileManager.default.contents(atPath: file) else { continue }
        let seed = Data([UInt8(index)]) + bytes
        _ = FileManager.default.createFile(atPath: seeds + "/\(index == 0 ? "journal" : "entry")", contents: seed)
    }
}

func fuzzDiskCache(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = FuzzInput.data(bytes, count)
    guard let selector = data.first else { return 0 }
    let files = pristine.restore()
    let target = selector & 1 == 0 ? files.journal : files.entry
    guard FileManager.default.createFile(atPath: target, contents: data.dropFirst()) else {
        FuzzInput.finding("cannot write \(target)")
    }

    let cache: DiskCache
    do {
        cache = try DiskCache(directory: directory, configuration: configuration)
    } catch {
        FuzzInput.finding("a corrupt \(selector & 1 == 0 ? "journal" : "entry file") fails the open: \(error)")
    }
    let blocking = cache.blocking
    if let entry = blocking.entry(forKey: key) {
        if entry.data != payload || entry.key != key { FuzzInput.finding("a damaged entry was served") }
    }
    blocking.sweep()
    do {
        try blocking.store(payload, forKey: key)
    } catch {
        FuzzInput.finding("a store after damage fails: \(error)")
    }
    if blocking.data(forKey: key) != payload { FuzzInput.finding("a stored entry does not read back") }
    return 0
}

/// The cache with one entry, as `freshCache()` writes it, kept as bytes: every input starts
/// from a copy of it. Writing it back (the folders, then each file) leaves the directory as a
/// new `freshCache()` would, byte for byte, without opening a cache, storing an entry and
/// listing the folder for each input, none of which is under test (the open after the damage
/// is): a quarter less CPU per input (5,000 inputs on tmpfs: 3.0 s before, 2.2 s after). The
/// larger gain is scripts/fuzz.sh's cache folder on tmpfs: on this machine's disk the same
/// inputs took 30 times as long, waiting on the file system.
private struct Pristine {
    let journal: String
    let entry: String
    /// Every folder under the cache's directory, parents first, and every file with its bytes
    /// (`[UInt8]`, not `Data`: see `payload`).
    let folders: [String]
    let files: [(path: String, bytes: [UInt8])]

    init() {
        (journal, entry) = freshCache()
        var folders = [directory.path]
        var files: [(String, [UInt8])] = []
        let manager = FileManager.default
        for relative in (manager.subpaths(atPath: directory.path) ?? []).sorted() {
            let path = directory.path + "/" + relative
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                folders.append(path)
            } else if let bytes = manager.contents(atPath: path) {
                files.append((path, [UInt8](bytes)))
            } else {
                FuzzInput.finding("cannot read \(path) of the pristine cache")
            }
        }
        self.folders = folders
        self.files = files
    }

    /// Empties the directory and writes the pristine cache back; returns the journal's path and
    /// the entry file's.
    func restore() -> (journal: String, entry: String) {
        let manager = FileManager.default
        try? manager.removeItem(at: directory)
        for folder in folders {
            do {
                try manager.createDirectory(atPath: folder, withIntermediateDirectories: false)
            } catch {
                FuzzInput.finding("cannot create \(folder): \(error)")
            }
        }
        for file in files where !manager.createFile(atPath: file.path, contents: Data(file.bytes)) {
            FuzzInput.finding("cannot write \(file.path)")
        }
        return (journal, entry)
    }
}

private let pristine = Pristine()

/// Empties the directory and writes a cache with one entry; returns the journal's path and
/// the entry file's.
private func freshCache() -> (journal: String, entry: String) {
    try? FileManager.default.removeItem(at: directory)
    do {
        let cache = try DiskCache(directory: directory, configuration: configuration)
        try cache.blocking.store(payload, forKey: key)
    } catch {
        FuzzInput.finding("cannot set up the cache: \(error)")
    }
    let root = directory.appendingPathComponent("v1").path
    let entries = FileManager.default.enumerator(atPath: root + "/data")?
        .compactMap { $0 as? String }
        .map { root + "/data/" + $0 }
        .filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
        } ?? []
    guard entries.count == 1 else { FuzzInput.finding("expected one entry file, found \(entries)") }
    return (root + "/journal", entries[0])
}
