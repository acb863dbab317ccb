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
    static var versionText: String {
        (["webimage \(LibraryVersion.string)"] + CodecLibraries.versions.map { "  \($0.library) \($0.version)" })
            .joined(separator: "\n")
    }

    static func main() async {
        // Decoding photo after photo, glibc would otherwise keep most freed decode buffers.
        ProcessMemory.returnLargeBlocksToSystem()
        await main(nil)
    }
}
