import CCodecShims
import Foundation
import WebImageCore

/// Draws SVG documents in a child process that can be stopped: librsvg 2.54 has no way to
/// interrupt a render, and a 198-byte `<feTurbulence numOctaves="100000">` renders for more than
/// ten minutes (hostile-input finding 3). The child is this program, or any that answers the
/// renderer's protocol (`webimage render-svg`): it limits its own memory and CPU time, reads the document
/// on its standard input, and writes the pixels (straight RGBA) on its standard output. The
/// parent waits at most ``timeLimit`` (or what is left of the work budget) and kills it then, or
/// as soon as the caller leaves.
///
/// `webimage serve --allow-svg` renders this way, with its own executable as the child:
///
/// ```swift
/// let renderer = SVGRenderProcess(executable: URL(fileURLWithPath: "/proc/self/exe"), arguments: ["render-svg"])
/// let decoder = SVGDecoder(renderer: .childProcess(renderer))
/// ```
public struct SVGRenderProcess: Sendable, Hashable {
    /// The renderer's executable.
    package var executable: URL
    /// Its arguments before the renderer's own (width, height, memory limit, time limit).
    package var arguments: [String]
    /// The longest one render may take. Default: 5 seconds.
    public var timeLimit: Duration = .seconds(5)
    /// The child's address-space limit besides its output's bytes: what librsvg, cairo and the
    /// images a document embeds may take. Default: 1 GiB.
    public var memoryLimit = 1 << 30

    public init(executable: URL, arguments: [String] = []) {
        self.executable = executable
        self.arguments = arguments
    }

    /// Draws `document` at `width` × `height` in a child; its pixels, straight RGBA.
    ///
    /// - Throws: ``ImageError/timeout(_:)`` past the time limit (the child is killed),
    ///   ``ImageError/cancelled`` when the caller left, ``ImageError/corruptData(_:)`` or
    ///   ``ImageError/tooLarge(_:)`` with the child's own error.
    func render(_ document: Data, width: Int, height: Int) throws -> Bitmap {
        let outputBytes = width * height * 4
        // The child's CPU limit is a backstop a second past the parent's own deadline.
        let seconds = max(1, Int((Double(timeLimit.components.seconds) + Double(timeLimit.components.attoseconds) / 1e18).rounded(.up))) + 1
        let arguments = arguments + [String(width), String(height), String(memoryLimit + outputBytes), String(seconds)]
        let child = try RendererChild(executable: executable, arguments: arguments)
        defer { child.end() }
        try child.send(document)
        let deadline = ContinuousClock.now + timeLimit
        return try Bitmap(width: width, height: height, pixelFormat: .rgba8) { buffer in
            let received = try child.receive(into: buffer, deadline: deadline)
            guard received == outputBytes else {
                let message = child.errorMessage()
                if child.ranOutOfCPUTime { throw ImageError.timeout("SVG: the renderer took longer than its time limit") }
                if message.hasPrefix("too large") { throw ImageError.tooLarge("SVG: \(message)") }
                throw ImageError.corruptData("SVG: the renderer stopped (\(message.isEmpty ? child.exitDescription() : message))")
            }
        }
    }

    /// The child's side: reads the arguments (width, height, memory limit, time limit), limits
    /// this process, reads the document from standard input, draws it in this process and writes
    /// the pixels to standard output. Errors go to standard error, one line, with exit status 1.
    /// `webimage render-svg` is this.
    package static func serve(arguments: [String]) -> Int32 {
        guard arguments.count == 4, let width = Int(arguments[0]), let height = Int(arguments[1]),
              let memory = UInt64(arguments[2]), let seconds = UInt(arguments[3]), width > 0, height > 0 else {
            FileHandle.standardError.write(Data("usage: WIDTH HEIGHT MEMORY-BYTES SECONDS\n".utf8))
            return 2
        }
        guard wi_limit_self(memory, seconds) == 0 else {
            FileHandle.standardError.write(Data("cannot limit the renderer: errno \(errno)\n".utf8))
            return 1
        }
        let document = FileHandle.standardInput.readDataToEndOfFile()
        do {
            let bitmap = try SVGDecoder.drawInProcess(document, width: width, height: height)
            bitmap.pixels.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = write(1, bytes.baseAddress! + offset, bytes.count - offset)
                    if written <= 0 { break }
                    offset += written
                }
            }
            return 0
        } catch ImageError.tooLarge(let message) {
            FileHandle.standardError.write(Data("too large: \(message)\n".utf8))
            return 1
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            return 1
        }
    }
}
