import ArgumentParser
import Foundation
import WebImage

/// `webimage convert INPUT OUTPUT`: decode, orient, optionally resize, and encode by the output's
/// extension.
///
/// ```
/// $ webimage convert shell-5120x2880.jpg thumb.webp --resize 256x256 --fit cover --quality 75
/// ```
struct ConvertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert an image, a video's poster frame or a PDF page to PNG, JPEG, WebP, GIF, AVIF or JPEG XL, optionally resized.",
        discussion: """
            The output format follows OUTPUT's extension: .png, .jpg or .jpeg, .webp, .gif, \
            .avif, .jxl. Animated sources stay animated in WebP, GIF, APNG, AVIF and JPEG XL; --frame N picks one composed frame (from 0). The \
            pixels are turned upright by the EXIF orientation unless --keep-orientation is \
            given. Large images are scaled while decoding where the format allows (JPEG, WebP), \
            so a thumbnail of a huge photo needs little memory. A video (MP4, MOV, WebM, \
            Matroska) gives its first frame, or the frame shown at --time SECONDS, or with \
            --clip SECONDS an animated preview of that long from there (--fps, default 10; \
            written animated to WebP, GIF, APNG, AVIF and JPEG XL); a PDF its first page, or \
            --page N (from 1), drawn at the --resize size.
            """
    )

    @Argument(help: "The image file or http(s) URL to read; URLs load through the pipeline and its disk cache.")
    var input: String

    @Argument(help: "The file to write; its extension picks the format.")
    var output: String

    @Option(help: "Write only this composed frame of an animation, counting from 0.")
    var frame: Int?

    @Option(help: ArgumentHelp("For a video, the poster frame's time in seconds: the frame a player shows then (default 0, the first frame).", valueName: "SECONDS"))
    var time: Double?

    @Option(help: ArgumentHelp("For a video, an animated preview this many seconds long from --time instead of one frame.", valueName: "SECONDS"))
    var clip: Double?

    @Option(help: ArgumentHelp("The frames a second of --clip (default 10).", valueName: "N"))
    var fps: Double?

    @Option(help: "For a PDF, the page to draw, counting from 1.")
    var page: Int?

    @Option(help: ArgumentHelp("Resize to fit a box: WxH, W or Wx (width only), xH (height only).", valueName: "WxH"))
    var resize: ResizeBox?

    @Option(help: "How the image meets the --resize box: contain (fit inside), cover (fill and crop), fill (stretch).")
    var fit: Fit = .contain

    @Option(help: "Quality for JPEG and lossy WebP, 0-100.")
    var quality: Int = 80

    @Flag(help: "Keep the pixels as stored instead of turning them upright by the EXIF orientation.")
    var keepOrientation = false

    @Flag(help: "Leave out metadata (the ICC profile kept by --keep-color-profile).")
    var strip = false

    @Flag(help: "Keep the stored colour values and the source's ICC profile, embedded in the output, instead of converting to sRGB.")
    var keepColorProfile = false

    @OptionGroup var cache: CacheOptions

    enum Fit: String, ExpressibleByArgument, CaseIterable {
        case contain, cover, fill

        var contentMode: ContentMode {
            switch self {
            case .contain: .fit
            case .cover: .fill
            case .fill: .stretch
            }
        }
    }

    /// A box to fit: `WxH`, `Wx` or `xH`; a bare number is a width, as in ImageMagick's geometry.
    struct ResizeBox: ExpressibleByArgument {
        var width: Int?
        var height: Int?

        init?(argument: String) {
            let text = argument.lowercased()
            let parts = (text.contains("x") ? text : text + "x").split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            width = parts[0].isEmpty ? nil : Int(parts[0])
            height = parts[1].isEmpty ? nil : Int(parts[1])
            guard width != nil || height != nil, (width ?? 1) > 0, (height ?? 1) > 0,
                  parts[0].isEmpty || width != nil, parts[1].isEmpty || height != nil else { return nil }
        }
    }

    func validate() throws {
        guard (0...100).contains(quality) else { throw ValidationError("--quality must be between 0 and 100") }
        if let frame, frame < 0 { throw ValidationError("--frame counts from 0") }
        if let time, !(time >= 0 && time.isFinite) { throw ValidationError("--time must be a number of seconds from 0") }
        if let page, page < 1 { throw ValidationError("--page counts from 1") }
        if let clip, !(clip > 0 && clip.isFinite) { throw ValidationError("--clip must be a number of seconds above 0") }
        if let fps, !(fps > 0 && fps.isFinite) { throw ValidationError("--fps must be a number above 0") }
        if fps != nil, clip == nil { throw ValidationError("--fps is the frame rate of --clip") }
    }

    func run() async throws {
        do {
            try await convert()
        } catch let error as ConvertError {
            FileHandle.standardError.write(Data("webimage convert: \(error.message)\n".utf8))
            throw ExitCode.failure
        } catch let error as ImageError {
            FileHandle.standardError.write(Data("webimage convert: \(input): \(plainDescription(of: error))\n".utf8))
            throw ExitCode.failure
        } catch let error as CommandFailure {
            FileHandle.standardError.write(Data("webimage convert: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }

    struct ConvertError: Error {
        var message: String
    }

    private func convert() async throws {
        let registry = CoderRegistry.command()
        let format = try outputFormat(registry: registry)
        let data: Data
        if isRemote(input) {
            data = try await remoteBytes(input, cache: cache)
        } else {
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: input), options: .mappedIfSafe)
            } catch {
                throw ConvertError(message: "\(input): cannot read it (\(error.localizedDescription))")
            }
        }

        var decoding = ImageDecodingOptions()
        decoding.appliesOrientation = !keepOrientation
        decoding.colorSpace = keepColorProfile ? .preserve : .sRGB
        if let time { decoding.videoTime = time }
        if let clip { decoding.videoClip = VideoClip(duration: clip, framesPerSecond: fps ?? 10) }
        if let page { decoding.page = page }
        if let resize {
            // Let the decoder scale down on the way in (DCT scaling, WebP's scaler); the resize
            // processor below then makes the exact size.
            decoding.thumbnail = .size(width: resize.width ?? Int(Int32.max), height: resize.height ?? Int(Int32.max),
                                       contentMode: resize.width == nil || resize.height == nil ? .fit : fit.contentMode)
        }
        var image = try registry.decode(data, options: decoding)

        if let frame {
            let frames = image.animation?.frames.map(\.bitmap) ?? [image.image]
            guard frame < frames.count else {
                throw ConvertError(message: "\(input) has \(frames.count) frame\(frames.count == 1 ? "" : "s"); there is no frame \(frame)")
            }
            image.image = frames[frame]
            image.animation = nil
        }
        if let resize {
            let mode = resize.width == nil || resize.height == nil ? .fit : fit.contentMode
            image = try ImageProcessors.Resize(width: resize.width, height: resize.height, contentMode: mode, upscale: true).process(image)
        }

        var encoding = ImageEncodingOptions()
        encoding.quality = quality
        encoding.stripsMetadata = strip
        let bytes = try registry.encode(image, as: format, options: encoding)
        do {
            try bytes.write(to: URL(fileURLWithPath: output), options: .atomic)
        } catch {
            throw ConvertError(message: "\(output): cannot write it (\(error.localizedDescription))")
        }
    }

    private func outputFormat(registry: CoderRegistry) throws -> ImageFormat {
        let ext = (output as NSString).pathExtension.lowercased()
        let format: ImageFormat? = switch ext {
        case "png": .png
        case "jpg", "jpeg": .jpeg
        case "webp": .webp
        case "gif": .gif
        case "avif": .avif
        case "jxl": .jxl
        default: nil
        }
        guard let format, registry.encoder(for: format) != nil else {
            let known = [ImageFormat.png, .jpeg, .webp, .gif, .avif, .jxl].filter { registry.encoder(for: $0) != nil }.map(\.fileExtension)
            throw ConvertError(message: "\(output): cannot tell the output format from .\(ext); use one of .\(known.joined(separator: ", ."))")
        }
        return format
    }
}
