import ArgumentParser
import WebImage

@main
struct WebImageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webimage",
        abstract: "Download, cache, inspect and convert images.",
        version: versionText,
        subcommands: [InfoCommand.self, ConvertCommand.self, FetchCommand.self, PrefetchCommand.self, CacheCommand.self, DemoCommand.self, ServeCommand.self, RenderSVGCommand.self, RenderPDFCommand.self]
    )

    /// `webimage --version`: this package's version, then the codec libraries it runs with (what
    /// a bug report needs).
    ///
    /// The configuration is built at every start, whatever the command, and asking poppler-glib
    /// its version loads it (it is opened when first used, not linked: CLazyLibraries): the
    /// libraries are listed only when `--version` is among the arguments.
    static var versionText: String {
        let header = "webimage \(LibraryVersion.string)"
        guard CommandLine.arguments.dropFirst().contains("--version") else { return header }
        return ([header] + CodecLibraries.versions.map { "  \($0.library) \($0.version)" }).joined(separator: "\n")
    }

    static func main() async {
        // Decoding photo after photo, glibc would otherwise keep most freed decode buffers.
        ProcessMemory.returnLargeBlocksToSystem()
        await main(nil)
    }
}
