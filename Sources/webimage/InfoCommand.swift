import ArgumentParser
import Foundation
import WebImage

/// `webimage info FILE...`: what each file is, judged from its bytes alone.
///
/// ```
/// $ webimage info Demo/images/thumb-Kite.jpg Demo/images/apng-delay.png
/// FILE                           FORMAT  MIME TYPE   BYTES  DIMENSIONS
/// Demo/images/thumb-Kite.jpg     jpeg    image/jpeg  33026  400×250
/// Demo/images/apng-delay.png     apng    image/apng   1068  128×64
/// ```
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show each image file's format, MIME type, size in bytes and pixel dimensions.",
        discussion: """
            The format is sniffed from the file's first bytes, never from its name: a .png \
            that is really an animated PNG shows as apng. Dimensions come from the file's \
            header without decoding, as stored (before any EXIF rotation); a dash means the \
            header does not give them.

            A file that cannot be read, or is no image format webimage knows, is reported on \
            standard error; the others are still listed, and the exit status is 1.
            """
    )

    @Argument(help: ArgumentHelp("The image files to inspect.", valueName: "input"))
    var inputs: [String]

    @Flag(help: "Print one JSON object per line (keys: file, format, mime, bytes, width, height) instead of a table.")
    var json = false

    func run() throws {
        var records: [ImageFileInfo] = []
        var failed = false
        for path in inputs {
            do {
                let record = try ImageFileInfo(path: path)
                if json {
                    // One line per file as it is read, so a long run streams into `jq`.
                    print(try record.jsonLine())
                } else {
                    records.append(record)
                }
            } catch {
                failed = true
                FileHandle.standardError.write(Data("webimage info: \(path): \(error)\n".utf8))
            }
        }
        if !json, !records.isEmpty {
            print(ImageFileInfo.table(records), terminator: "")
        }
        if failed { throw ExitCode.failure }
    }
}
