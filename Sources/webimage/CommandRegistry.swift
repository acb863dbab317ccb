import Foundation
import WebImage

extension CoderRegistry {
    /// The coders of every `webimage` command: the system's, with SVG documents and PDF pages
    /// drawn in a child of this program (`webimage render-svg`, `webimage render-pdf`) that is
    /// killed after five seconds. The commands read files and URLs from anywhere, and neither
    /// librsvg nor Poppler can interrupt a render; a renderer that cannot be started (no path to
    /// this program) leaves them drawn in this process.
    static func command() -> CoderRegistry {
        let registry = CoderRegistry.system()
        if let executable = Bundle.main.executableURL {
            registry.register(SVGDecoder(renderer: .childProcess(RenderProcess(executable: executable, arguments: ["render-svg"]))))
            registry.register(PDFDecoder(renderer: .childProcess(RenderProcess(executable: executable, arguments: ["render-pdf"]))))
        }
        return registry
    }
}
