import Foundation

/// The names of every file directly in `directory` that is an image: not the licence notes
/// (`.md`), a generator script (`.py`, `.c`) or a folder (`Tests/Fixtures` keeps `licenses/`, and
/// `pixels/` with the decoded pixels the processing tests read, beside its images); sorted.
public func imageFileNames(in directory: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path)
        .filter { name in
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path, isDirectory: &isDirectory)
            return !isDirectory.boolValue && !name.hasSuffix(".md") && !name.hasSuffix(".py") && !name.hasSuffix(".c")
        }
        .sorted()
}
