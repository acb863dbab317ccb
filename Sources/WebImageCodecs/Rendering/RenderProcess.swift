import CCodecShims
import Foundation
import WebImageCore

/// Draws documents (SVG, PDF) in a child process that can be stopped: neither librsvg 2.54 nor
/// poppler-glib 22.12 has a way to interrupt a render, and a 198-byte
/// `<feTurbulence numOctaves="100000">` renders for more than ten minutes (hostile-input
/// finding 3). The child is this program, or any that answers the renderer's protocol
/// (`webimage render-svg`, `webimage render-pdf`): it limits its own memory and CPU time, reads
/// the document on its standard input, and writes the pixels (straight RGBA) on its standard
/// output. The parent waits at most ``timeLimit`` (or what is left of the work budget) and kills
/// it then, or as soon as the caller leaves.
///
/// `webimage serve --allow-svg` and `--allow-pdf` render this way, with their own executable as
/// the child:
///
/// ```swift
/// let executable = URL(fileURLWithPath: "/proc/self/exe")
/// let svg = SVGDecoder(renderer: .childProcess(RenderProcess(executable: executable, arguments: ["render-svg"])))
/// let pdf = PDFDecoder(renderer: .childProcess(RenderProcess(executable: executable, arguments: ["render-pdf"])))
/// ```
public struct RenderProcess: Sendable, Hashable {
    /// The renderer's executable.
    package var executable: URL
    /// Its arguments before the renderer's own (width, height, memory limit, time limit, and
    /// the format's own: a PDF's page and background).
    package var arguments: [String]
    /// The longest one render may take. Default: 5 seconds.
    public var timeLimit: Duration = .seconds(5)
    /// The child's address-space limit besides its output's bytes: what the renderer (librsvg or
    /// Poppler), cairo, fonts and the images a document embeds may take. Default: 1 GiB.
    public var memoryLimit = 1 << 30

    public init(executable: URL, arguments: [String] = []) {
        self.executable = executable
        self.arguments = arguments
    }

    /// Draws `document`, a `format` document, at `width` × `height` in a child; its pixels,
    /// straight RGBA. `extraArguments` follow the four every renderer reads (a PDF's page and
    /// background).
    ///
    /// - Throws: ``ImageError/timeout(_:)`` past the time limit (the child is killed),
    ///   ``ImageError/cancelled`` when the caller left, ``ImageError/corruptData(_:)``,
    ///   ``ImageError/tooLarge(_:)`` or ``ImageError/unsupportedFormat(_:)`` with the child's
    ///   own error.
    func render(_ document: Data, format: ImageFormat, width: Int, height: Int, extraArguments: [String] = []) throws -> Bitmap {
        let name = Self.name(of: format)
        let outputBytes = width * height * 4
        // The child's CPU limit is a backstop a second past the parent's own deadline.
        let seconds = max(1, Int((Double(timeLimit.components.seconds) + Double(timeLimit.components.attoseconds) / 1e18).rounded(.up))) + 1
        let arguments = arguments + [String(width), String(height), String(memoryLimit + outputBytes), String(seconds)] + extraArguments
        let child = try RendererChild(executable: executable, arguments: arguments, name: name)
        defer { child.end() }
        try child.send(document)
        let deadline = ContinuousClock.now + timeLimit
        return try Bitmap(width: width, height: height, pixelFormat: .rgba8) { buffer in
            let received = try child.receive(into: buffer, deadline: deadline)
            guard received == outputBytes else {
                let message = child.errorMessage()
                if child.ranOutOfCPUTime { throw ImageError.timeout("\(name): the renderer took longer than its time limit") }
                if message.hasPrefix("too large: ") { throw ImageError.tooLarge(String(message.dropFirst("too large: ".count))) }
                if message.hasPrefix("unsupported: ") { throw ImageError.unsupportedFormat(String(message.dropFirst("unsupported: ".count))) }
                if message.hasPrefix("corrupt: ") { throw ImageError.corruptData(String(message.dropFirst("corrupt: ".count))) }
                throw ImageError.corruptData("\(name): the renderer stopped (\(message.isEmpty ? child.exitDescription() : message))")
            }
        }
    }

    /// The name of `format` in messages: "SVG", "PDF".
    static func name(of format: ImageFormat) -> String {
        format.rawValue.uppercased()
    }

    /// The child's side: reads the arguments (width, height, memory limit, time limit, then the
    /// format's own), limits this process, reads the document from standard input, draws it in
    /// this process and writes the pixels to standard output. Errors go to standard error, one
    /// line, with exit status 1. `webimage render-svg` is `serve(.svg, …)`, `webimage render-pdf`
    /// `serve(.pdf, …)`, whose own arguments are PAGE (counting from 1), BACKGROUND (1 for a
    /// white page, 0 for a transparent one) and the scales from points to pixels of each axis,
    /// SCALE-X and SCALE-Y: the parent's, so that the child draws what the parent worked out
    /// (pixels a side are rounded up from the page's size, which WIDTH and HEIGHT alone would
    /// not undo).
    package static func serve(_ format: ImageFormat, arguments: [String]) -> Int32 {
        let extraCount = format == .pdf ? 4 : 0
        guard arguments.count == 4 + extraCount, let width = Int(arguments[0]), let height = Int(arguments[1]),
              let memory = UInt64(arguments[2]), let seconds = UInt(arguments[3]), width > 0, height > 0 else {
            let usage = format == .pdf ? "WIDTH HEIGHT MEMORY-BYTES SECONDS PAGE BACKGROUND(0|1) SCALE-X SCALE-Y" : "WIDTH HEIGHT MEMORY-BYTES SECONDS"
            FileHandle.standardError.write(Data("usage: \(usage)\n".utf8))
            return 2
        }
        let extra = Array(arguments.dropFirst(4))
        guard wi_limit_self(memory, seconds) == 0 else {
            FileHandle.standardError.write(Data("cannot limit the renderer: errno \(errno)\n".utf8))
            return 1
        }
        let document = FileHandle.standardInput.readDataToEndOfFile()
        do {
            let bitmap = try draw(document, format: format, width: width, height: height, extraArguments: extra)
            bitmap.pixels.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = write(1, bytes.baseAddress! + offset, bytes.count - offset)
                    if written <= 0 { break }
                    offset += written
                }
            }
            return 0
        } catch let error as ImageError {
            // The kind travels as a prefix, so that the parent throws the same error.
            let line = switch error {
            case .tooLarge(let message): "too large: \(message)"
            case .unsupportedFormat(let message): "unsupported: \(message)"
            case .corruptData(let message): "corrupt: \(message)"
            default: "\(error)"
            }
            FileHandle.standardError.write(Data("\(LibraryMessage.oneLine(line))\n".utf8))
            return 1
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            return 1
        }
    }

    /// The drawing of one document, in this process: the child's work.
    private static func draw(_ document: Data, format: ImageFormat, width: Int, height: Int, extraArguments: [String]) throws -> Bitmap {
        switch format {
        case .svg:
            return try SVGDecoder.drawInProcess(document, width: width, height: height)
        case .pdf:
            guard let page = Int(extraArguments[0]), page >= 1, let background = Int(extraArguments[1]), background == 0 || background == 1,
                  let scaleX = Double(extraArguments[2]), let scaleY = Double(extraArguments[3]),
                  scaleX.isFinite, scaleY.isFinite, scaleX > 0, scaleY > 0 else {
                throw ImageError.corruptData("PDF: the renderer's arguments are not a page, 0 or 1, and two scales")
            }
            let drawing = PDFDrawing(width: width, height: height, scaleX: scaleX, scaleY: scaleY)
            return try PDFDecoder.drawInProcess(document, page: page, drawing: drawing, drawsPageBackground: background == 1)
        default:
            throw ImageError.unsupportedFormat("no renderer child draws \(format.rawValue)")
        }
    }
}
