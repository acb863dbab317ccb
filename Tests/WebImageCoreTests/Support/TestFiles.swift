import Foundation
import WebImageTestSupport

/// Where the tests find image files: the fixtures committed in the repository, and the
/// shared corpus beside it when present (CI always has it; a user's clone does not).
enum TestFiles {
    /// The repository root, found from this source file's path so that tests work from any
    /// working directory.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent() // Support
        .deletingLastPathComponent() // WebImageCoreTests
        .deletingLastPathComponent() // Tests
        .deletingLastPathComponent()

    static let fixtures = repositoryRoot.appendingPathComponent("Tests/Fixtures")

    static let corpus = repositoryRoot.appendingPathComponent("../shared/corpus").standardizedFileURL

    /// Whether `../shared/corpus` is there. When it is not, the corpus tests are skipped by
    /// their `.enabled(if:)` trait, and this prints one line saying so, so that a green run
    /// in a clone does not pass for a run over the corpus.
    static let corpusIsPresent: Bool = {
        let present = ProcessInfo.processInfo.environment["WEBIMAGE_HIDE_CORPUS"] != "1"
            && FileManager.default.fileExists(atPath: corpus.appendingPathComponent("reference.json").path)
        if !present {
            print("note: \(corpus.path) is absent; the tests over the shared image corpus are skipped")
        }
        return present
    }()

    /// A fixture's bytes; fails the calling test when it is missing.
    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    /// The names of every file in `Tests/Fixtures` that is an image, sorted.
    static func fixtureImageNames() throws -> [String] {
        try imageFileNames(in: fixtures)
    }
}

