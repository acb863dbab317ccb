import AsyncHTTPClient
import Foundation
import Testing
import WebImage
@_spi(Testing) import WebImageServer
import WebImageTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The real thumbor 7 (from PyPI; scripts/deps.sh installs it), on loopback with its file loader
/// on Demo/images, beside the proxy with its origin folder there too: the same unsafe URLs must
/// answer with the same status, format and size from both.
/// Whether `import thumbor` works: without it the side-by-side suite shows as skipped, not passed.
enum ThumborInstallation {
    static let isInstalled = (try? CommandRun(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import thumbor"]).status == 0) ?? false
}

@Suite(.enabled(if: ThumborInstallation.isInstalled, "thumbor is not installed (pip install thumbor, or scripts/deps.sh)"))
struct ThumborSideBySideTests {

    static let options = [
        "300x200", "fit-in/300x200", "adaptive-fit-in/200x300", "full-fit-in/300x200", "adaptive-full-fit-in/200x300",
        "-300x-200", "-x-", "300x300/left/top", "300x300/right/bottom/smart", "100x100:500x400/200x0", "100x100:500x400",
        "0x100", "fit-in/3000x3000", "3000x100", "400x400/filters:no_upscale()", "origx100",
        "fit-in/400x400/filters:format(webp):quality(40)", "fit-in/400x400/filters:rotate(90)", "200x200/filters:stretch()",
        "fit-in/200x200/filters:grayscale():format(png)", "5000x5000:6000x6000/100x100", "100x0/filters:proportion(0.5)",
    ]
    static let images = ["elephants-1920x1080-progressive.jpg", "Spring.png", "hopper_orientation_6.jpg", "flower.webp"]

    /// A socket listening on 127.0.0.1 at a free port. thumbor gets it as its standard input
    /// (`--fd 0`): connections wait in its backlog until thumbor accepts them, so nothing waits
    /// for thumbor to be ready.
    static func listeningSocket() -> (descriptor: Int32, port: Int)? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, listen(fd, 128) == 0 else {
            close(fd)
            return nil
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// thumbor serving Demo/images on the socket (the suite runs only when thumbor is installed).
    static func startThumbor(in folder: TemporaryDirectory) throws -> (process: Process, port: Int)? {
        let configuration = folder.url.appendingPathComponent("thumbor.conf")
        try """
        LOADER = 'thumbor.loaders.file_loader'
        FILE_LOADER_ROOT_PATH = '\(Fixture.demoImages.path)'
        ALLOW_UNSAFE_URL = True
        NON_BLOCKING_SOCKETS = True
        STORAGE = 'thumbor.storages.no_storage'
        RESULT_STORAGE = 'thumbor.result_storages.no_storage'
        """.write(to: configuration, atomically: true, encoding: .utf8)
        guard let (descriptor, port) = listeningSocket() else { throw CancellationError() }
        defer { close(descriptor) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["thumbor", "--fd", "0", "-c", configuration.path]
        process.standardInput = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        // Its log, for a failure's message.
        let log = folder.url.appendingPathComponent("thumbor.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: log)
        defer { try? logHandle.close() }
        process.standardOutput = logHandle
        process.standardError = logHandle
        try process.run()
        return (process, port)
    }

    /// Status, sniffed format and decoded size of one answer.
    static func summary(_ status: Int, _ body: Data) -> String {
        guard status == 200 else { return "\(status)" }
        guard let container = try? CoderRegistry.system().decode(body) else { return "200 undecodable" }
        return "200 \(ImageFormat(sniffing: body).map { "\($0)" } ?? "?") \(container.image.width)x\(container.image.height)"
    }

    /// thumbor serving Demo/images and the proxy over the same folder, both answering unsafe
    /// URLs, for `body`; thumbor is killed after it.
    static func withThumborAndProxy(_ body: (_ folder: TemporaryDirectory, _ port: Int, _ harness: ProxyHarness) async throws -> Void) async throws {
        let folder = TemporaryDirectory("thumbor-side-by-side")
        defer { folder.remove() }
        guard let (thumbor, port) = try startThumbor(in: folder) else { return }
        // SIGKILL: a process started from the test runner's threads inherits their blocked
        // signal mask, so thumbor would never see a SIGTERM (each run left one behind).
        defer {
            kill(thumbor.processIdentifier, SIGKILL)
            thumbor.waitUntilExit()
        }
        let harness = try await ProxyHarness.start { configuration in
            configuration.originDirectory = Fixture.demoImages
            configuration.thumbor.allowsUnsafe = true
        }
        defer { Task { await harness.stop() } }
        try await body(folder, port, harness)
    }

    @Test func sameFormatsAndSizesAsThumbor() async throws {
        try await Self.withThumborAndProxy { folder, port, harness in
            for image in Self.images {
                for options in Self.options {
                    let path = "/unsafe/\(options)/\(image)"
                    let response: HTTPClientResponse
                    do {
                        response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: .seconds(60))
                    } catch {
                        let log = (try? String(contentsOf: folder.url.appendingPathComponent("thumbor.log"), encoding: .utf8)) ?? ""
                        Issue.record("thumbor did not answer \(path): \(error); its log: \(log.suffix(3000))")
                        return
                    }
                    let body = try await response.body.collect(upTo: 64 << 20)
                    let theirs = Self.summary(Int(response.status.code), Data(body.readableBytesView))
                    let ours = try await harness.request("/thumbor" + path)
                    #expect(Self.summary(ours.status, ours.body) == theirs, "\(path)")
                }
            }
        }
    }
}

extension ThumborSideBySideTests {
    /// The mean absolute difference of two decoded answers' R, G and B; nil when the sizes differ.
    static func meanDifference(_ a: Data, _ b: Data) throws -> Double? {
        let x = try CoderRegistry.system().decode(a).image, y = try CoderRegistry.system().decode(b).image
        guard x.width == y.width, x.height == y.height else { return nil }
        var total = 0
        for row in 0..<x.height {
            for column in 0..<x.width {
                let p = row * x.bytesPerRow + column * x.pixelFormat.bytesPerPixel, q = row * y.bytesPerRow + column * y.pixelFormat.bytesPerPixel
                for channel in 0..<3 { total += abs(Int(x.pixels[p + channel]) - Int(y.pixels[q + channel])) }
            }
        }
        return Double(total) / Double(x.width * x.height * 3)
    }

    /// thumbor's colour filters give thumbor's pixels: after the filter, ours and thumbor's
    /// differ no more than without it (their resize and ours differ a little), while the filter
    /// itself changes the image.
    @Test func colourFiltersGiveThumborsPixels() async throws {
        try await Self.withThumborAndProxy { _, port, harness in
            func both(_ path: String) async throws -> (ours: Data, theirs: Data) {
                let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: .seconds(60))
                let theirs = Data((try await response.body.collect(upTo: 64 << 20)).readableBytesView)
                let ours = try await harness.request("/thumbor" + path)
                #expect(response.status.code == 200 && ours.status == 200, "\(path)")
                return (ours.body, theirs)
            }
            let filters = [
                "brightness(30)", "brightness(-45)", "contrast(40)", "contrast(-50)", "rgb(20,-10,5)", "saturation(1.8)", "saturation(0.3)",
                "fill(white)", "fill(ff0000)", "fill(auto)", "fill(white,true)", "background_color(00f)",
            ]
            for image in ["elephants-1920x1080-progressive.jpg", "flower.webp", "Spring.png"] {
                let plain = try await both("/unsafe/fit-in/200x200/filters:format(png)/\(image)")
                let baseline = try #require(try Self.meanDifference(plain.ours, plain.theirs))
                for filter in filters {
                    let filtered = try await both("/unsafe/fit-in/200x200/filters:\(filter):format(png)/\(image)")
                    #expect(Self.summary(200, filtered.ours) == Self.summary(200, filtered.theirs), "\(image) \(filter)")
                    guard let difference = try Self.meanDifference(filtered.ours, filtered.theirs) else { continue }
                    #expect(difference <= baseline + 1, "\(image) \(filter): \(difference) against \(baseline) without it")
                    // The effect is checked on the photos; Spring.png (soft greys, mostly transparent)
                    // is there for the transparency of fill and background_color, which change
                    // nothing of an opaque image.
                    if image.hasSuffix(".png") || filter.hasPrefix("background_color") { continue }
                    let changed = try Self.meanDifference(filtered.ours, plain.ours) ?? .infinity
                    #expect(changed > 3, "\(image) \(filter) changed nothing")
                }
            }
        }
    }
}
