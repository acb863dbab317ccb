import ArgumentParser
import Foundation
import WebImage

/// `webimage info FILE...`: what each file is, judged from its bytes: the sniffed format and
/// the ``ImageMetadata`` its headers and chunks give (size after orientation, orientation,
/// frames, loop count, durations, bit depth), read without decoding pixels; its colour (the
/// profile a decode converts from, and whether converting to sRGB changes the pixels); and its
/// placeholders, from the same small decode: the dominant colour, the ThumbHash and the 4×3
/// BlurHash that a page or an app can show before the image arrives.
///
/// ```
/// $ webimage info Demo/images/thumb-Kite.jpg Demo/images/apng-delay.png
/// FILE                           FORMAT  MIME TYPE   BYTES  DIMENSIONS
/// Demo/images/thumb-Kite.jpg     jpeg    image/jpeg  33026  400×250
/// Demo/images/apng-delay.png     apng    image/apng   1068  128×64
/// ```
struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show each image's format, MIME type, bytes, dimensions, orientation, frames, loop count, frame durations, bit depth, colour profile, dominant colour, ThumbHash and BlurHash.",
        discussion: """
            The format is sniffed from the file's first bytes, never from its name: a .png \
            that is really an animated PNG shows as apng. Apart from the colour and placeholder \
            columns, nothing is decoded: the facts come \
            from the headers and a walk over the file's chunks or blocks (a GIF's frames are \
            counted without decompressing them). Dimensions are after EXIF orientation, which \
            is shown as stored (1-8). A dash means the file does not say; a frame count with \
            a + means the file stops early and more frames may follow.

            The colour columns come from one small decode of the first frame: COLOUR PROFILE \
            is the description of the profile the decode converts from (an embedded ICC \
            profile's, or one naming the coded colour space of an AVIF or HEIF nclx box, a PNG \
            cICP chunk or PNG gAMA with cHRM; a dash for sRGB), and TO SRGB says whether the \
            default decode changes the pixels (no for sRGB by another name, or for a profile \
            that cannot be used and is ignored).

            The same decode, at most 100 pixels a side (a JPEG at 1/8 scale through its DCT, \
            never full size) and upright, gives the placeholder columns, read in sRGB: \
            DOMINANT, the most common colour as #rrggbb (transparent pixels ignored); \
            THUMBHASH, the image's ThumbHash in base64 (its aspect ratio and alpha included); \
            BLURHASH, its BlurHash with 4×3 components.

            A file that cannot be read, or is no image format webimage knows, is reported on \
            standard error; the others are still listed, and the exit status is 1.
            """
    )

    @Argument(help: ArgumentHelp("The image files or http(s) URLs to inspect; URLs load through the pipeline and its disk cache.", valueName: "input"))
    var inputs: [String]

    @OptionGroup var cache: CacheOptions

    @Flag(help: "Print one JSON object per line instead of a table (keys: file, format, mime, bytes, width, height, orientation, frames, loopCount, durations, bitDepth, convertsToSRGB, colorProfile, dominantColor, thumbHash, blurHash, truncated; unknown ones left out).")
    var json = false

    func run() async throws {
        var records: [ImageFileInfo] = []
        var failed = false
        for path in inputs {
            do {
                let record = isRemote(path)
                    ? try ImageFileInfo(file: path, data: try await remoteBytes(path, cache: cache))
                    : try ImageFileInfo(path: path)
                if json {
                    // One line per file as it is read, so a long run streams into `jq`.
                    print(try record.jsonLine())
                } else {
                    records.append(record)
                }
            } catch {
                failed = true
                FileHandle.standardError.write(Data("webimage info: \(path): \(plainDescription(of: error))\n".utf8))
            }
        }
        if !json, !records.isEmpty {
            print(ImageFileInfo.table(records), terminator: "")
        }
        if failed { throw ExitCode.failure }
    }
}
