import ArgumentParser
import WebImage

@main
struct WebImageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webimage",
        abstract: "Download, cache, inspect and convert images.",
        subcommands: [InfoCommand.self, ConvertCommand.self, FetchCommand.self, PrefetchCommand.self, CacheCommand.self, DemoCommand.self, ServeCommand.self, RenderSVGCommand.self]
    )

    static func main() async {
        // Decoding photo after photo, glibc would otherwise keep most freed decode buffers.
        ProcessMemory.returnLargeBlocksToSystem()
        await main(nil)
    }
}
