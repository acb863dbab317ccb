import Foundation

/// An X server of a test's (or benchmark's) own (Debian's xvfb), on a display number it picks
/// itself.
public struct Xvfb: Sendable {
    public static let executable: URL? = ["/usr/bin/Xvfb", "/usr/local/bin/Xvfb"].map(URL.init(fileURLWithPath:))
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    public let process: ChildProcess
    /// `:N`, for `DISPLAY`.
    public let name: String

    /// Why a GTK program could not start.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// Starts Xvfb and returns once it has chosen its display (`-displayfd` writes the number
    /// when the server is ready for clients).
    public static func start() async throws -> Xvfb {
        guard let executable else { throw Unavailable(description: "Xvfb is not installed (make test installs xvfb)") }
        let process = try ChildProcess(executable, ["-displayfd", "1", "-screen", "0", "640x480x24", "-nolisten", "tcp"])
        guard let number = await process.waitForLine(where: { Int($0) != nil }) else {
            process.kill(SIGKILL)
            throw Unavailable(description: "Xvfb: \(process.stderr)")
        }
        return Xvfb(process: process, name: ":" + number)
    }

    /// SIGKILL: a process started from the test runner's threads inherits their blocked signal
    /// mask, so Xvfb would never see a SIGTERM; nothing of it needs a graceful end.
    public func stop() {
        process.kill(SIGKILL)
    }
}

/// `webimage-gtk-probe` (Tests/GTKProbe), built beside the tests and the benchmarks: a GTK
/// window holding a WebImageView, driven over its standard input.
public enum GTKProbe {
    public static let executable: URL? = {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let url = directory.appendingPathComponent("webimage-gtk-probe")
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }()

    public static func start(origin: String, display: String, unmappedCancellationMilliseconds: Int? = nil) throws -> ChildProcess {
        guard let executable else { throw Xvfb.Unavailable(description: "webimage-gtk-probe was not built beside this program") }
        // The cairo renderer: Xvfb has no GL. A session bus is not needed.
        return try ChildProcess(executable, [origin] + (unmappedCancellationMilliseconds.map { [String($0)] } ?? []), environment: [
            "DISPLAY": display, "GDK_BACKEND": "x11", "GSK_RENDERER": "cairo", "NO_AT_BRIDGE": "1", "GTK_A11Y": "none",
        ])
    }
}
