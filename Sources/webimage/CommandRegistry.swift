import Foundation
import WebImage

extension CoderRegistry {
    /// The coders of every `webimage` command: the system's, with SVG drawn in a child of this
    /// program (`webimage render-svg`) that is killed after five seconds. The commands read files
    /// and URLs from anywhere, and librsvg cannot interrupt a render; a renderer that cannot be
    /// started (no path to this program) leaves SVG drawn in this process.
    static func command() -> CoderRegistry {
        let registry = CoderRegistry.system()
        if let executable = Bundle.main.executableURL {
            registry.register(SVGDecoder(renderer: .childProcess(SVGRenderProcess(executable: executable, arguments: ["render-svg"]))))
        }
        return registry
    }
}
