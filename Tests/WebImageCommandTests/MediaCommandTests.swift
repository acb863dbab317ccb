import Foundation
import Testing
import WebImageCodecs
import WebImageCore
import WebImageTestSupport

/// `webimage convert` and `webimage info` on a video and a PDF, run as the built executable:
/// `--time` and `--page` pick the still, `--clip` makes an animated preview, `info` reports the duration, frame rate, codec and page
/// count.
@Suite(.enabled(if: WebImageExecutable.url != nil, "the webimage executable was not built beside the tests"))
struct MediaCommandTests {
    let directory = TemporaryDirectory("media-command")

    func run(_ arguments: [String]) throws -> CommandRun {
        try CommandRun(try #require(WebImageExecutable.url), arguments, in: directory.url)
    }

    func decoded(_ name: String) throws -> Bitmap {
        try CoderRegistry.system().decode(try Data(contentsOf: directory.url.appendingPathComponent(name))).image
    }

    /// The 160 × 120, 2-second clip of `VideoClips.h264`, written as clip.mp4.
    func clip() throws -> Data {
        let data = try VideoClips.h264()
        try data.write(to: directory.url.appendingPathComponent("clip.mp4"))
        return data
    }

    @Test(.enabled(if: Requirement.met(VideoClips.ffmpeg != nil), "ffmpeg is not installed (make deps)"))
    func convertWritesThePosterAtTheTimeAsked() throws {
        defer { directory.remove() }
        let data = try clip()
        for (time, name) in [(nil, "first.png"), (1.5, "later.png")] as [(Double?, String)] {
            let result = try run(["convert", "clip.mp4", name, "--resize", "80"] + (time.map { ["--time", String($0)] } ?? []))
            #expect(result.status == 0, "\(result.stderr)")
        }
        let first = try decoded("first.png"), later = try decoded("later.png")
        #expect(first.width == 80 && first.height == 60)
        #expect(first.pixels != later.pixels)
        // The library's own poster at 1.5 s, at the same size: the same pixels (PNG keeps them).
        var options = ImageDecodingOptions()
        options.videoTime = 1.5
        options.thumbnail = .size(width: 80, height: Int(Int32.max), contentMode: .fit)
        let library = try CoderRegistry.system().decode(data, options: options).image
        #expect(library.width == later.width && library.height == later.height)
        let samePixels = (0..<later.height).allSatisfy { y in (0..<later.width).allSatisfy { library.rgb($0, y) == later.rgb($0, y) } }
        #expect(samePixels)

        let refused = try run(["convert", "clip.mp4", "x.png", "--time", "-1"])
        #expect(refused.status != 0 && refused.stderr.contains("--time"))
    }

    @Test(.enabled(if: Requirement.met(VideoClips.ffmpeg != nil), "ffmpeg is not installed (make deps)"))
    func convertWritesAnAnimatedClip() throws {
        defer { directory.remove() }
        let data = try clip()
        let result = try run(["convert", "clip.mp4", "clip.png", "--time", "0.4", "--clip", "1", "--fps", "5", "--resize", "80"])
        #expect(result.status == 0, "\(result.stderr)")
        let written = try CoderRegistry.system().decode(try Data(contentsOf: directory.url.appendingPathComponent("clip.png")))
        let frames = try #require(written.animation?.frames)
        #expect(frames.count == 5)
        #expect(frames.allSatisfy { abs(($0.duration - .milliseconds(200)) / .milliseconds(1)) < 1 }, "\(frames.map(\.duration))")
        // The library's own clip at the same size: the same frames (APNG keeps them).
        var options = ImageDecodingOptions()
        options.videoTime = 0.4
        options.videoClip = VideoClip(duration: 1, framesPerSecond: 5)
        options.thumbnail = .size(width: 80, height: Int(Int32.max), contentMode: .fit)
        let library = try #require(try CoderRegistry.system().decode(data, options: options).animation?.frames)
        #expect(library.count == frames.count)
        for (ours, theirs) in zip(frames, library) {
            let bitmap = ours.bitmap, expected = theirs.bitmap
            #expect(bitmap.width == 80 && bitmap.height == 60 && expected.width == 80)
            #expect((0..<bitmap.height).allSatisfy { y in (0..<bitmap.width).allSatisfy { bitmap.rgb($0, y) == expected.rgb($0, y) } })
        }
        #expect(frames[0].bitmap.pixels != frames[4].bitmap.pixels)

        let refused = try run(["convert", "clip.mp4", "x.png", "--fps", "5"])
        #expect(refused.status != 0 && refused.stderr.contains("--fps"), "\(refused.stderr)")
    }

    @Test func convertWritesThePageAsked() throws {
        defer { directory.remove() }
        // Page 1 red, 200 × 100 pt; page 2 green, 100 × 200 pt.
        try PDFBuilder.pages([(200, 100), (100, 200)]).write(to: directory.url.appendingPathComponent("pages.pdf"))
        let second = try run(["convert", "pages.pdf", "second.png", "--page", "2", "--resize", "50"])
        #expect(second.status == 0, "\(second.stderr)")
        let image = try decoded("second.png")
        #expect(image.width == 50 && image.height == 100)
        #expect(image.rgb(25, 50) == [0, 255, 0])

        let absent = try run(["convert", "pages.pdf", "x.png", "--page", "3"])
        #expect(absent.status == 1 && absent.stderr.contains("pages.pdf"), "\(absent.stderr)")
        let zero = try run(["convert", "pages.pdf", "x.png", "--page", "0"])
        #expect(zero.status != 0 && zero.stderr.contains("--page counts from 1"))
    }

    @Test(.enabled(if: Requirement.met(VideoClips.ffmpeg != nil), "ffmpeg is not installed (make deps)"))
    func infoReportsDurationFrameRateCodecAndPages() throws {
        defer { directory.remove() }
        _ = try clip()
        try PDFBuilder.pages([(200, 100), (100, 200), (50, 50)]).write(to: directory.url.appendingPathComponent("pages.pdf"))
        let result = try run(["info", "--json", "clip.mp4", "pages.pdf"])
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try result.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        try #require(objects.count == 2)
        let video = objects[0], pdf = objects[1]
        #expect(video["format"] as? String == "mp4" && video["mime"] as? String == "video/mp4")
        #expect(video["width"] as? Int == 160 && video["height"] as? Int == 120)
        #expect(video["codec"] as? String == "h264")
        #expect(video["duration"] as? Double == 2 && video["frameRate"] as? Double == 25)
        #expect(video["frames"] as? Int == 50)
        #expect(video["thumbHash"] is String)
        #expect(pdf["format"] as? String == "pdf" && pdf["pages"] as? Int == 3)
        #expect(pdf["width"] as? Int == 200 && pdf["height"] as? Int == 100)

        let table = try run(["info", "clip.mp4", "pages.pdf"])
        let lines = table.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 3)
        let lastColumns = lines.map { $0.split(separator: " ").suffix(4).map(String.init) }
        #expect(lastColumns[0] == ["(s)", "FPS", "CODEC", "PAGES"], "\(lines[0])")
        #expect(lastColumns[1] == ["2", "25", "h264", "-"], "\(lines[1])")
        #expect(lastColumns[2] == ["-", "-", "-", "3"], "\(lines[2])")
    }
}
