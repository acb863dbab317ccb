import CFFmpeg
import Foundation
import Testing
import WebImageCodecs
import WebImageCore
import WebImageTestSupport

/// Video posters through FFmpeg, compared with ffmpeg's own decode of the same frame.
///
/// Tolerances: at the clip's own size our conversion is the command line's (the same libswscale
/// call: bicubic, the frame's matrix and range), so SDR posters must match within a mean of
/// 0.5/255 and at most 2 per channel (measured: identical); so must scaled posters (a thumbnail,
/// non-square pixels), converted in one pass as the command line's `scale` filter does (measured:
/// identical). The references are taken at a frame's own time: `ffmpeg -ss T` gives the first
/// frame at or after T, where a poster is the frame shown at T (the last at or before it), so
/// between two frames the two differ by design. HDR: our tone curve is ffmpeg's `tonemap=hable:desat=0` after `zscale`, in other
/// arithmetic (16-bit integer R′G′B′ and tables against zimg's float): a mean within 6/255
/// (measured 4.4).
@Suite(.enabled(if: Requirement.met(VideoTestFiles.ffmpegInstalled), "ffmpeg is not installed (make deps)"))
struct VideoDecoderTests {
    typealias Files = VideoTestFiles

    /// One clip per codec, its first frame and the frame at 1.48 s (the 13th after the key frame
    /// at 1 s, `-g 25`), each against ffmpeg's; the 1.48 s poster is also shown not to be the
    /// key frame's.
    @Test(arguments: [
        ("h264.mp4", ["-c:v", "libx264", "-g", "25", "-pix_fmt", "yuv420p"]),
        ("hevc.mp4", ["-c:v", "libx265", "-x265-params", "log-level=error", "-tag:v", "hvc1", "-g", "25", "-pix_fmt", "yuv420p"]),
        ("vp9.webm", ["-c:v", "libvpx-vp9", "-g", "25", "-deadline", "realtime", "-cpu-used", "8"]),
        ("vp8.webm", ["-c:v", "libvpx", "-g", "25"]),
        ("av1.mkv", ["-c:v", "libaom-av1", "-cpu-used", "8", "-g", "25"]),
        ("av1.mp4", ["-c:v", "libsvtav1", "-preset", "12", "-g", "25"]),
        ("mjpeg.mov", ["-c:v", "mjpeg", "-q:v", "3"]),
        ("hevc10.mp4", ["-c:v", "libx265", "-x265-params", "log-level=error", "-tag:v", "hvc1", "-g", "25", "-pix_fmt", "yuv420p10le"]),
    ])
    func postersMatchFFmpeg(name: String, encoding: [String]) throws {
        let folder = TemporaryDirectory("video-\(name)")
        defer { folder.remove() }
        let clip = try Files.make(name, in: folder, encoding)
        for time in [0, 1.48] {
            let poster = try Files.poster(clip, at: time)
            #expect(poster.width == 160 && poster.height == 120)
            let difference = try #require(Files.difference(poster, try Files.reference(clip, at: time, in: folder)))
            #expect(difference.mean <= 0.5 && difference.max <= 2, "\(name) at \(time) s: \(difference)")
        }
        // Not the key frame at 1 s (MJPEG's every frame is one, and still not the frame at 1 s).
        let keyFrame = try Files.reference(clip, at: 1.0, in: folder)
        let away = try #require(Files.difference(try Files.poster(clip, at: 1.48), keyFrame))
        #expect(away.mean > 5, "\(name): the 1.48 s poster is the key frame's (\(away))")
    }

    /// Between two frames the poster is the earlier one (what a player shows), and past the end
    /// the last frame.
    @Test func theFrameShownAtATime() throws {
        let folder = TemporaryDirectory("video-times")
        defer { folder.remove() }
        let clip = try Files.make("h264.mp4", in: folder, ["-c:v", "libx264", "-g", "25", "-pix_fmt", "yuv420p"])
        let between = try #require(Files.difference(try Files.poster(clip, at: 1.5), try Files.reference(clip, at: 1.48, in: folder)))
        #expect(between.mean <= 0.5, "\(between)")
        let end = try #require(Files.difference(try Files.poster(clip, at: 60), try Files.reference(clip, at: 1.96, in: folder)))
        #expect(end.mean <= 0.5, "\(end)")
    }

    /// A display matrix of 90° (written by the mov muxer from `rotate`) and a 2:1 sample aspect
    /// ratio, against ffmpeg's command line, which applies both (`autorotate`, and
    /// `scale=iw*sar:ih` asked for).
    @Test func rotationAndSampleAspectRatio() throws {
        let folder = TemporaryDirectory("video-display")
        defer { folder.remove() }
        let plain = try Files.make("plain.mp4", in: folder, ["-c:v", "libx264", "-pix_fmt", "yuv420p"])
        let rotated = folder.url.appendingPathComponent("rotated.mp4")
        try Files.run(["-i", plain.path, "-c", "copy", "-metadata:s:v:0", "rotate=90", rotated.path])
        let poster = try Files.poster(rotated, at: 0.4)
        #expect(poster.width == 120 && poster.height == 160)
        let turned = try #require(Files.difference(poster, try Files.reference(rotated, at: 0.4, in: folder)))
        #expect(turned.mean <= 0.5 && turned.max <= 2, "\(turned)")
        let info = try VideoDecoder.probe(try Data(contentsOf: rotated), options: .init())
        #expect(info.width == 120 && info.height == 160 && info.codec == "h264" && info.frameCount == 50)

        let wide = try Files.make("sar.mp4", in: folder, ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-vf", "setsar=2/1"])
        let stretched = try Files.poster(wide, at: 0.4)
        #expect(stretched.width == 320 && stretched.height == 120)
        let reference = try Files.reference(wide, at: 0.4, filter: "scale=iw*sar:ih,setsar=1", in: folder)
        let difference = try #require(Files.difference(stretched, reference))
        #expect(difference.mean <= 0.5 && difference.max <= 2, "\(difference)")
    }

    /// A PQ clip (BT.2020, 10 bits) is tone-mapped as ffmpeg's zscale/tonemap chain does with a
    /// 1,000 cd/m² peak (the clip states none); without zscale, its properties are checked.
    @Test func hdrIsToneMapped() throws {
        let folder = TemporaryDirectory("video-hdr")
        defer { folder.remove() }
        let clip = try Files.make("pq.mp4", in: folder, [
            "-c:v", "libx265", "-x265-params", "log-level=error:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc",
            "-tag:v", "hvc1", "-pix_fmt", "yuv420p10le", "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace", "bt2020nc",
        ])
        let info = try VideoDecoder.probe(try Data(contentsOf: clip), options: .init())
        #expect(info.bitDepth == 10 && info.hdrTransfer == "smpte2084")
        let poster = try Files.poster(clip, at: 0.4)
        let chain = "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=hable:desat=0:peak=10,zscale=t=iec61966-2-1:m=gbr,format=rgba"
        let reference = try Files.reference(clip, at: 0.4, filter: chain, in: folder)
        let difference = try #require(Files.difference(poster, reference))
        #expect(difference.mean <= 6, "\(difference)")
    }

    /// A 64 px thumbnail is 64 × 48, drawn from the frame (close to ffmpeg's own scale).
    @Test func thumbnails() throws {
        let folder = TemporaryDirectory("video-thumbnail")
        defer { folder.remove() }
        let clip = try Files.make("vp9.webm", in: folder, ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"])
        var options = ImageDecodingOptions()
        options.thumbnail = .maxPixelSize(64)
        let poster = try Files.poster(clip, at: 0.48, options: options)
        #expect(poster.width == 64 && poster.height == 48)
        let difference = try #require(Files.difference(poster, try Files.reference(clip, at: 0.48, filter: "scale=64:48", in: folder)))
        #expect(difference.mean <= 0.5 && difference.max <= 2, "\(difference)")
    }

    /// Claims refused before decoding: 100,000 × 100,000 pixels (Matroska's PixelWidth and
    /// PixelHeight), 65,535 × 65,535 (an MP4's sample entry), a million frames (an MP4's `stts`).
    @Test func claimedSizesAndFrameCountsAreRefused() throws {
        let folder = TemporaryDirectory("video-claims")
        defer { folder.remove() }
        let webm = try Files.make("sar.webm", in: folder, ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-vf", "setsar=2/1"],
                                  source: "testsrc2=size=160x120:rate=25:duration=0.4")
        let huge = try Files.claimingMatroskaSize(try Data(contentsOf: webm), width: 100_000, height: 100_000)
        expectTooLarge { try VideoDecoder().decode(huge, options: .init()) }
        expectTooLarge { try VideoDecoder.probe(huge, options: .init()) }

        let mp4 = try Data(contentsOf: try Files.make("h264.mp4", in: folder, ["-c:v", "libx264", "-pix_fmt", "yuv420p"]))
        let stsd = [UInt8](mp4)
        // The sample entry, not the `avc1` brand of the `ftyp`: the first `avc1` after `stsd`.
        let table = try #require((0..<stsd.count - 4).first { stsd[$0..<$0 + 4].elementsEqual("stsd".utf8) })
        let entry = try #require((table..<stsd.count - 4).first { stsd[$0..<$0 + 4].elementsEqual("avc1".utf8) })
        var wide = stsd
        // The visual sample entry's width and height: 24 bytes after its type.
        wide.replaceSubrange(entry + 28..<entry + 32, with: [0xFF, 0xFF, 0xFF, 0xFF])
        expectTooLarge { try VideoDecoder().decode(Data(wide), options: .init()) }

        let stts = Files.box("stts", [0, 0, 0, 0, 0, 0, 0, 1] + [0x00, 0x0F, 0x42, 0x40] + [0, 0, 0, 1])
        let million = try Files.replacingBox(["moov", "trak", "mdia", "minf", "stbl", "stts"], in: mp4, with: stts)
        expectTooLarge { try VideoDecoder().decode(million, options: .init()) }
    }

    /// Cut at every twentieth, each clip gives a typed error or an image; a frame limit of 5
    /// refuses a poster 1.48 s in (13 frames after the key frame).
    /// fuzz-video's finding: 2,301 bytes whose sample tables made the mov demuxer ask for
    /// 1.28 GB in one `realloc` (libFuzzer's 512 MB allocation limit caught it; the input is in
    /// Tests/Fixtures/fuzz/fuzz-video, replayed by every fuzz run). One FFmpeg allocation is now
    /// bounded to 256 MiB, so the demuxer fails with a typed error; and the bound holds for any
    /// allocation of FFmpeg's once the decoder has set it.
    @Test func oneAllocationOfFFmpegsIsBounded() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/fuzz/fuzz-video/mov-table-asks-1-28-gb")
        #expect(throws: ImageError.self) { try VideoDecoder().decode(try Data(contentsOf: url), options: ImageDecodingOptions()) }
        let past = av_malloc(257 << 20), within = av_malloc(1 << 20)
        defer { av_free(past); av_free(within) }
        #expect(past == nil && within != nil)
    }

    @Test func truncationsAndTheFrameLimit() throws {
        let folder = TemporaryDirectory("video-truncated")
        defer { folder.remove() }
        for (name, encoding) in [("h264.mp4", ["-c:v", "libx264"]), ("vp9.webm", ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"])] {
            let data = try Data(contentsOf: try Files.make(name, in: folder, encoding + ["-g", "25"]))
            for twentieth in 0..<20 {
                let cut = data.prefix(data.count * twentieth / 20)
                do {
                    let image = try VideoDecoder().decode(cut, options: .init()).image
                    #expect(image.width == 160 && image.height == 120)
                } catch is ImageError {
                } catch {
                    Issue.record("\(name) cut at \(cut.count): \(error)")
                }
            }
            var options = ImageDecodingOptions()
            options.videoTime = 1.48
            options.maximumFrameCount = 5
            expectTooLarge { try VideoDecoder().decode(data, options: options) }
        }
    }

    /// Registered in the system registry, sniffed from the bytes.
    @Test func theSystemRegistryDecodesVideos() throws {
        let folder = TemporaryDirectory("video-registry")
        defer { folder.remove() }
        let clip = try Files.make("clip.webm", in: folder, ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"])
        let container = try CoderRegistry.system().decode(try Data(contentsOf: clip))
        #expect(container.format == .webm && container.image.width == 160)
    }

    private func expectTooLarge(_ body: () throws -> Any, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sourceLocation: sourceLocation) {
            _ = try body()
        } throws: { error in
            guard case .tooLarge = error as? ImageError else { return false }
            return true
        }
    }
}
