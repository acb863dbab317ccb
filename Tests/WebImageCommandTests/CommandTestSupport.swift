import Foundation
import Testing
import WebImageTestSupport

/// The repository's files the command tests hand to `webimage`.
enum Fixture {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let directory = repository.appendingPathComponent("Tests/Fixtures")
    static let demoImages = repository.appendingPathComponent("Demo/images")

    static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }
    static func data(_ name: String) throws -> Data { try Data(contentsOf: url(name)) }

    /// The images of `Tests/Fixtures`, sorted.
    static func imageNames() throws -> [String] { try imageFileNames(in: directory) }

    /// A 1920×1080 progressive JPEG.
    static var elephants: Data { get throws { try Data(contentsOf: demoImages.appendingPathComponent("elephants-1920x1080-progressive.jpg")) } }
}

/// Runs the built `webimage` in the repository's root, off the cooperative pool (it blocks until
/// the process exits), with `input` on its standard input.
func runWebImage(_ arguments: [String], input: String? = nil, environment: [String: String] = [:]) async throws -> CommandRun {
    let executable = try #require(WebImageExecutable.url)
    let repository = Fixture.repository
    return try await Task.detached {
        try CommandRun(executable, arguments, in: repository, input: input.map { Data($0.utf8) }, environment: environment)
    }.value
}
