import Foundation
import WebImageCore

/// The harness of the hostile-input suites (docs/reliability.md): the limits a damaged file is
/// decoded under, what a decode ended in, the damage done to a fixture (bit flips, runs of
/// 0xFF), and a decode in a child process under limits (``runProbeLimited(_:addressSpaceKiB:seconds:)``).
///
/// A failure goes to the caller's `failure` closure rather than to Swift Testing: executables
/// link this target too (the test probe, the benchmarks). A suite wraps it once:
///
/// ```swift
/// func outcome(_ data: Data, _ label: String) -> HostileInput.Outcome {
///     HostileInput.outcome(data, label, decode: { try WebPDecoder().decode($0, options: $1) }) { Issue.record("\($0)") }
/// }
/// ```
public enum HostileInput {
    /// What decoding a damaged input ended in.
    public enum Outcome: Equatable, Sendable { case image, error }

    /// The pixel limit of ``options``.
    public static let maximumPixelCount = 4_000_000

    /// The limits a damaged input is decoded under: small enough that a decoder that believed a
    /// lying header is refused rather than allocating for it.
    public static var options: ImageDecodingOptions {
        var options = ImageDecodingOptions()
        options.maximumPixelCount = maximumPixelCount
        options.maximumAnimationBytes = 64 << 20
        return options
    }

    /// Decodes `data` with `decode` under ``options``: `.image` for an image, `.error` for an
    /// ``ImageError``. An image past the pixel limit, or an error of another type, is also given
    /// to `failure` (with `label`): a typed error or a sane image are the only right answers.
    public static func outcome(
        _ data: Data, _ label: String,
        decode: (Data, ImageDecodingOptions) throws -> ImageContainer,
        failure: (String) -> Void
    ) -> Outcome {
        do {
            let image = try decode(data, options).image
            if image.width * image.height > maximumPixelCount {
                failure("\(label): \(image.width)×\(image.height), past the limit of \(maximumPixelCount) pixels")
            }
            return .image
        } catch is ImageError {
            return .error
        } catch {
            failure("\(label): not an ImageError: \(error)")
            return .error
        }
    }

    /// `original` with one to eight bits flipped at or after `start`, drawn from `generator`
    /// (seeded, so that a failure reproduces).
    public static func flippingBits<Generator: RandomNumberGenerator>(
        of original: [UInt8], from start: Int, using generator: inout Generator
    ) -> [UInt8] {
        var bytes = original
        for _ in 0..<Int.random(in: 1...8, using: &generator) {
            let index = Int.random(in: start..<bytes.count, using: &generator)
            bytes[index] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &generator)
        }
        return bytes
    }

    /// `original` with four bytes of 0xFF at some thirty offsets from `start` on, one copy each:
    /// whatever size or count those bytes held, at its maximum.
    public static func maximumRuns(of original: [UInt8], from start: Int) -> [(offset: Int, bytes: [UInt8])] {
        stride(from: start, to: original.count - 4, by: max(1, original.count / 30)).map { offset in
            var bytes = original
            bytes.replaceSubrange(offset..<offset + 4, with: [0xFF, 0xFF, 0xFF, 0xFF])
            return (offset: offset, bytes: bytes)
        }
    }
}

/// Runs `webimage-test-probe` under `ulimit -v` and a wall-clock limit; returns its one line of
/// output, or a description of how it died.
public func runProbeLimited(_ arguments: [String], addressSpaceKiB: Int, seconds: Int) throws -> String {
    let process = SpawnedProcess()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    let quoted = ([Probe.executable.path] + arguments).map { "'\($0.replacingOccurrences(of: "'", with: "'\\''"))'" }.joined(separator: " ")
    process.arguments = ["-c", "ulimit -v \(addressSpaceKiB); exec timeout -s KILL \(seconds) \(quoted)"]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let line = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    if process.terminationReason == .uncaughtSignal || process.terminationStatus != 0 {
        return "died (status \(process.terminationStatus)): \(line)"
    }
    return line
}
