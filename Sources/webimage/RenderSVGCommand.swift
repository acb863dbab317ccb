import ArgumentParser
import Foundation
import WebImageCodecs

/// The SVG renderer child of `webimage serve --allow-svg` (``RenderProcess``): not for people,
/// so hidden from the help.
struct RenderSVGCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render-svg",
        abstract: "Draw the SVG document on standard input as RGBA on standard output (the proxy's renderer child).",
        shouldDisplay: false
    )

    @Argument(help: "WIDTH HEIGHT MEMORY-BYTES SECONDS")
    var values: [String] = []

    func run() throws {
        let status = RenderProcess.serve(.svg, arguments: values)
        if status != 0 { throw ExitCode(status) }
    }
}
