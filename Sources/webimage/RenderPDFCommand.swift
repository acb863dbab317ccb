import ArgumentParser
import Foundation
import WebImageCodecs

/// The PDF renderer child of `webimage serve --allow-pdf` and of the other commands
/// (``RenderProcess``): not for people, so hidden from the help.
struct RenderPDFCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render-pdf",
        abstract: "Draw a page of the PDF document on standard input as RGBA on standard output (the renderer child).",
        shouldDisplay: false
    )

    @Argument(help: "WIDTH HEIGHT MEMORY-BYTES SECONDS PAGE BACKGROUND(0|1) SCALE-X SCALE-Y")
    var values: [String] = []

    func run() throws {
        let status = RenderProcess.serve(.pdf, arguments: values)
        if status != 0 { throw ExitCode(status) }
    }
}
