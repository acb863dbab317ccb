import Foundation
import Testing
import WebImageCodecs
import WebImageCore
import WebImageTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// FFmpeg reads nothing beyond the bytes given: an HLS playlist, an ffconcat script and an MP4
/// whose data reference points outside are handed straight to `VideoDecoder`; a loopback origin
/// counts requests and inotify watches the folder of the file they name.
@Suite(.enabled(if: Requirement.met(VideoTestFiles.ffmpegInstalled), "ffmpeg is not installed (make deps)"))
struct VideoSecurityTests {
    /// Opens and reads of anything in a folder, from the moment it is watched.
    final class FolderWatch {
        let descriptor: Int32

        init(_ folder: URL) throws {
            descriptor = inotify_init1(O_NONBLOCK | O_CLOEXEC)
            try #require(descriptor >= 0, "inotify_init1: \(errno)")
            let watch = inotify_add_watch(descriptor, folder.path, UInt32(IN_OPEN | IN_ACCESS))
            try #require(watch >= 0, "inotify_add_watch: \(errno)")
        }

        deinit { close(descriptor) }

        /// The bytes of events queued so far (0: nothing was opened or read).
        func eventBytes() -> Int {
            var buffer = [UInt8](repeating: 0, count: 4096)
            var total = 0
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                guard count > 0 else { return total }
                total += count
            }
        }
    }

    @Test func nothingOutsideTheBytesIsOpened() async throws {
        let folder = TemporaryDirectory("video-security")
        defer { folder.remove() }
        let clip = try VideoTestFiles.make("outside.mp4", in: folder, ["-c:v", "libx264", "-pix_fmt", "yuv420p"],
                                          source: "testsrc2=size=160x120:rate=25:duration=0.4")
        let clipData = try Data(contentsOf: clip)
        let origin = try await TestOrigin.start()
        defer { Task { try? await origin.shutdown() } }
        origin.register("/x.mp4", data: clipData, contentType: "video/mp4")
        origin.register("/x.ts", data: clipData, contentType: "video/mp2t")
        let remote = origin.url("/x.mp4").absoluteString, remoteSegment = origin.url("/x.ts").absoluteString

        let playlist = Data("""
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:1
            #EXTINF:0.4,
            \(remoteSegment)
            #EXTINF:0.4,
            \(clip.path)
            #EXTINF:0.4,
            file://\(clip.path)
            #EXT-X-ENDLIST

            """.utf8)
        let concat = Data("ffconcat version 1.0\nfile '\(remote)'\nfile '\(clip.path)'\n".utf8)
        let inputs: [(String, Data)] = [
            ("HLS playlist", playlist), ("ffconcat script", concat),
            ("MP4 with an external URL reference", try Self.withExternalReference(clipData, location: remote)),
            ("MP4 with an external file reference", try Self.withExternalReference(clipData, location: "file://" + clip.path)),
            ("MP4 with a relative file reference", try Self.withExternalReference(clipData, location: "outside.mp4")),
        ]
        let watch = try FolderWatch(folder.url)
        for (name, data) in inputs {
            do {
                // The MP4s' own samples are in the file: an image is fine, so long as it came
                // from the bytes given.
                _ = try VideoDecoder().decode(data, options: .init())
            } catch is ImageError {
            } catch {
                Issue.record("\(name): \(error) is not an ImageError")
            }
        }
        #expect(watch.eventBytes() == 0, "a file in the folder was opened or read")
        #expect(origin.allRequests.isEmpty, "the origin saw \(origin.allRequests.map(\.uri))")
    }

    /// `mp4` with its `dref` holding one `url ` entry whose flags say the data is elsewhere
    /// (flag 1 clear), at `location`.
    static func withExternalReference(_ mp4: Data, location: String) throws -> Data {
        let entry = VideoTestFiles.box("url ", [0, 0, 0, 0] + Array(location.utf8) + [0])
        let dref = VideoTestFiles.box("dref", [0, 0, 0, 0, 0, 0, 0, 1] + [UInt8](entry))
        return try VideoTestFiles.replacingBox(["moov", "trak", "mdia", "minf", "dinf", "dref"], in: mp4, with: dref)
    }
}
