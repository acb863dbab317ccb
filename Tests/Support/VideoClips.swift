import Foundation

/// Clips made by the `ffmpeg` command line (the video tests' reference tool, `make deps`
/// installs it): the test pattern encoded as a test asks.
public enum VideoClips {
    /// The `ffmpeg` executable, when installed.
    public static let ffmpeg: URL? = ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
        .map { URL(fileURLWithPath: $0) }

    /// The 2-second, 25 fps test pattern of 160 × 120: every frame differs (a moving gradient
    /// and a clock), so the frame at a time is recognisable.
    public static let pattern = "testsrc2=size=160x120:rate=25:duration=2"

    /// Why ffmpeg failed: its error output.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `ffmpeg` with `arguments`.
    public static func run(_ arguments: [String]) throws {
        guard let ffmpeg else { throw Failure(description: "ffmpeg is not installed (make deps)") }
        let run = try CommandRun(ffmpeg, ["-hide_banner", "-v", "error", "-y"] + arguments)
        guard run.status == 0 else { throw Failure(description: "ffmpeg \(arguments.joined(separator: " ")): \(run.stderr)") }
    }

    /// A clip of ``pattern`` (or `source`) encoded with `encoding`, written to `url`.
    public static func make(_ url: URL, _ encoding: [String], source: String = pattern) throws {
        try run(["-f", "lavfi", "-i", source] + encoding + [url.path])
    }

    /// The bytes of an H.264 MP4 of ``pattern`` (a key frame a second), made in a temporary folder.
    public static func h264() throws -> Data {
        let folder = TemporaryDirectory("clip")
        defer { folder.remove() }
        let url = folder.url.appendingPathComponent("clip.mp4")
        try make(url, ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "25"])
        return try Data(contentsOf: url)
    }
}
