import Foundation
import Synchronization
import Testing
@testable import WebImageCore
import WebImage
import WebImageTestSupport
import CJPEGReference
import WebImageCodecs

/// Placeholders in the pipeline and the binder: the ThumbHash the manager remembers for each
/// source it decoded, a request's own placeholder, and progressive blur.
@Suite("Placeholders", .timeLimit(.minutes(2 * Deadlines.stretch)))
struct PlaceholderTests {
    typealias Setup = ManagerHTTPTests.Setup

    /// The mean of each channel over the opaque pixels of an rgba8 bitmap, 0–255.
    static func averageColour(_ bitmap: Bitmap) -> [Double] {
        var sums = [0.0, 0.0, 0.0]
        for y in 0..<bitmap.height {
            for x in 0..<bitmap.width {
                let offset = y * bitmap.bytesPerRow + x * 4
                for channel in 0..<3 { sums[channel] += Double(bitmap.pixels[offset + channel]) }
            }
        }
        return sums.map { $0 / Double(bitmap.width * bitmap.height) }
    }

    /// The offset just past the header of a JPEG's second scan (its second SOS segment): the
    /// first scan is complete there, and nothing of the second has come.
    static func endOfSecondScanHeader(_ jpeg: Data) throws -> Int {
        let bytes = [UInt8](jpeg)
        var offset = 2, scans = 0
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            let end = offset + 2 + (Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]))
            guard marker == 0xDA else { offset = end; continue }
            scans += 1
            if scans == 2 { return end }
            // Entropy-coded data runs to the next marker that is not a stuffed zero or a restart.
            offset = end
            while offset + 1 < bytes.count, bytes[offset] != 0xFF || bytes[offset + 1] == 0 || (0xD0...0xD7).contains(bytes[offset + 1]) {
                offset += 1
            }
        }
        throw ImageError.corruptData("not a JPEG of two scans or more")
    }

    /// The mean absolute Laplacian of the green channel: what a blur takes away.
    static func sharpness(_ bitmap: Bitmap) -> Double {
        let step = bitmap.pixelFormat.bytesPerPixel
        func green(_ x: Int, _ y: Int) -> Double { Double(bitmap.pixels[y * bitmap.bytesPerRow + x * step + 1]) }
        var total = 0.0
        for y in 1..<(bitmap.height - 1) {
            for x in 1..<(bitmap.width - 1) {
                total += abs(4 * green(x, y) - green(x - 1, y) - green(x + 1, y) - green(x, y - 1) - green(x, y + 1))
            }
        }
        return total / Double((bitmap.width - 2) * (bitmap.height - 2))
    }

    /// `jpeg` encoded again by libjpeg-turbo as three sequential scans, the luma's first (see
    /// `wi_reference_jpeg_encode_luma_first`).
    static func lumaFirstJPEG(_ jpeg: Data) throws -> Data {
        let image = try JPEGDecoder().decode(jpeg, options: .init()).image
        var rgb = [UInt8]()
        rgb.reserveCapacity(image.width * image.height * 3)
        for y in 0..<image.height {
            for x in 0..<image.width {
                let offset = y * image.bytesPerRow + x * 4
                rgb.append(contentsOf: image.pixels[offset..<(offset + 3)])
            }
        }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        guard wi_reference_jpeg_encode_luma_first(rgb, Int32(image.width), Int32(image.height), 90, &output, &size) == 0,
              let output else { throw ImageError.corruptData("libjpeg could not encode the test image") }
        defer { free(output) }
        return Data(bytes: output, count: Int(size))
    }

    @Test("the first decode of a source remembers its ThumbHash, for every variant, past a restart and the bytes' eviction")
    func rememberedAcrossVariantsRestartsAndEviction() async throws {
        let setup = try await Setup()
        let url = setup.origin.url("/hopper.jpg")
        #expect(setup.manager.placeholder(for: url) == nil)

        let variant = ImageRequest(url: url, processors: [.gaussianBlur(radius: 2)], thumbnail: .maxPixelSize(64))
        _ = try await setup.manager.image(for: variant)
        let placeholder = try #require(setup.manager.placeholder(for: url))
        #expect(setup.manager.placeholder(for: variant) == placeholder)
        guard case .thumbHash(let base64) = placeholder else {
            Issue.record("the manager remembers ThumbHashes, got \(placeholder)")
            return
        }
        #expect(try ThumbHash(base64).aspectRatio == 1, "hopper is square")

        // It looks like the image: its picture's average colour is the image's.
        let full = try await setup.manager.image(for: url).image
        #expect(setup.manager.placeholder(for: url) == placeholder, "a second variant's decode keeps the first hash")
        let picture = try placeholder.bitmap(maxSide: 32)
        #expect(max(picture.width, picture.height) == 32)
        for (ours, image) in zip(Self.averageColour(picture), Self.averageColour(full)) {
            #expect(abs(ours - image) <= 10, "the picture's average \(ours) against the image's \(image)")
        }

        // Evicted, then read by the next run of the program: still known, with no download.
        await setup.manager.waitUntilIdle()
        await setup.fixture.cache.disk?.trim(toSize: 0)
        #expect(setup.fixture.cache.diskCount == 0)
        let relaunched = try setup.fixture.relaunched(loaders: [setup.loader])
        #expect(relaunched.placeholder(for: url) == placeholder)
        #expect(setup.origin.requestCount(path: "/hopper.jpg") == 1)
        try await setup.tearDown()
    }

    @Test("a memory-only manager remembers placeholders, and one configured not to computes none")
    func memoryOnlyAndSwitchedOff() async throws {
        let url = Fixture.url("hopper.png")
        let memoryOnly = try PipelineFixture(diskCache: false)
        _ = try await memoryOnly.manager.image(for: url)
        #expect(memoryOnly.manager.placeholder(for: url) != nil)

        let off = try PipelineFixture { $0.remembersPlaceholders = false }
        _ = try await off.manager.image(for: url)
        #expect(off.manager.placeholder(for: url) == nil)
        off.directory.remove()
        memoryOnly.directory.remove()
    }

    @Test("a binding shows the remembered placeholder with .rememberedPlaceholder, and only then")
    func bindingShowsTheRememberedPlaceholder() async throws {
        let setup = try await Setup()
        let url = setup.origin.url("/hopper.jpg")
        _ = try await setup.manager.image(for: url)
        await setup.manager.waitUntilIdle()
        let placeholder = try #require(setup.manager.placeholder(for: url))
        let binder = ImageBinder(manager: setup.manager)

        // A memory hit shows the image alone.
        let hit = RecordingTarget()
        hit.setImage(with: url, using: binder, options: .rememberedPlaceholder)
        #expect(hit.summary == ["image /hopper.jpg memory"])

        setup.fixture.cache.clearMemory()
        let remembered = RecordingTarget()
        let probe = CompletionProbe()
        remembered.setImage(with: url, using: binder, options: .rememberedPlaceholder, completion: probe.callback)
        _ = try await probe.result.get()
        #expect(remembered.summary == ["placeholder", "image /hopper.jpg disk"])
        #expect(remembered.shown.first?.image == (try placeholder.bitmap(maxSide: 32)))

        setup.fixture.cache.clearMemory()
        let plain = RecordingTarget()
        let plainProbe = CompletionProbe()
        plain.setImage(with: url, using: binder, completion: plainProbe.callback)
        _ = try await plainProbe.result.get()
        #expect(plain.summary == ["placeholder(none)", "image /hopper.jpg disk"])
        try await setup.tearDown()
    }

    @Test("a request's own placeholder is shown unless the caller gives one")
    func requestPlaceholder() async throws {
        let setup = try await Setup()
        let red = try Bitmap(width: 8, height: 4, pixelFormat: .rgba8, pixels: [UInt8](repeating: 0, count: 128).enumerated().map { $0.offset % 4 == 0 || $0.offset % 4 == 3 ? 255 : 0 })
        let hash = ThumbHash(encoding: red).base64
        let request = ImageRequest(url: setup.origin.url("/hopper.png"), placeholder: .thumbHash(hash))
        let binder = ImageBinder(manager: setup.manager)

        let target = RecordingTarget()
        let probe = CompletionProbe()
        target.setImage(with: request, using: binder, completion: probe.callback)
        _ = try await probe.result.get()
        let shown = try #require(target.shown.first?.image)
        // ThumbHash keeps the aspect ratio to a few per cent.
        #expect(shown.width == 32 && abs(Double(shown.width) / Double(shown.height) - 2) < 0.25, "\(shown.width)×\(shown.height)")
        let colour = Self.averageColour(shown)
        #expect(colour[0] > 200 && colour[1] < 50 && colour[2] < 50, "red, got \(colour)")

        setup.fixture.cache.clearMemory()
        let own = RecordingTarget()
        let ownProbe = CompletionProbe()
        own.setImage(with: request, using: binder, placeholder: .placeholder, completion: ownProbe.callback)
        _ = try await ownProbe.result.get()
        #expect(own.shown.first?.image == ImageContainer.placeholder.image)
        try await setup.tearDown()
    }

    @Test("progressive blur: a preview arrives blurred, the final image sharp")
    func progressiveBlurInTheBinder() async throws {
        let setup = try await Setup()
        let jpeg = try Self.lumaFirstJPEG(Data(contentsOf: Fixture.directory.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Demo/images/thumb-summer_1am.jpg")))
        setup.origin.register("/summer.jpg", data: jpeg)
        // The origin sends the first scan, the luma's, and the second scan's header, and holds:
        // a third of the file missing. Not a byte of the second scan's data, so that there is one
        // preview whatever the chunks the bytes come in (a preview is an output pass over every
        // coefficient read so far), and it has the luma's detail for a blur to take away (the
        // first scan of a progressive file, 8 × 8 blocks' averages smoothed, has next to none).
        let gate = setup.origin.gate("/summer.jpg", mode: .sendHeadersThenHold(bytes: try Self.endOfSecondScanHeader(jpeg)))
        let request = ImageRequest(url: setup.origin.url("/summer.jpg"), options: .progressiveLoad)
        let binder = ImageBinder(manager: setup.manager)
        let target = PreviewTarget()
        let task = try #require(target.setImage(with: request, using: binder, options: .progressiveBlur))
        // A second request joins the download and is handed the same preview, unblurred.
        let witness = setup.manager.loadImage(with: request)
        var original: Bitmap?
        for await event in witness.events {
            if case .preview(let response) = event {
                original = response.image
                break
            }
        }
        let unblurred = try #require(original)
        let shown = await target.firstPreview
        #expect((shown.width, shown.height) == (unblurred.width, unblurred.height))
        #expect(Self.sharpness(shown) < 0.5 * Self.sharpness(unblurred), "blurred by 2 % of 400 px × the missing third: about 3 px")

        gate.open()
        let final = try await task.response
        await setup.manager.waitUntilIdle()
        #expect(target.lastImage == final.image, "the final image is never blurred")
        #expect(try await witness.response.image == final.image)
        try await setup.tearDown()
    }

    @Test("progressive blur shrinks as the bytes arrive")
    func progressiveBlurShrinks() throws {
        let image = try Bitmap(width: 200, height: 100, pixelFormat: .rgba8, pixels: (0..<80_000).map { index in
            let x = (index / 4) % 200, y = (index / 4) / 200
            return index % 4 == 3 ? 255 : ((x / 4 + y / 4) % 2 == 0 ? 255 : 0)
        })
        let response = ImageResponse(container: ImageContainer(image: image, isPreview: true), url: URL(string: "https://example.com/a.jpg")!, cacheType: .none)
        func preview(after received: Int) -> Bitmap? {
            let blur = ProgressiveBlur()
            _ = blur.apply(to: .progress(received: received, expected: 1000))
            guard case .preview(let shown) = blur.apply(to: .preview(response)) else { return nil }
            return shown.image
        }
        let early = try #require(preview(after: 100))
        let late = try #require(preview(after: 700))
        let done = try #require(preview(after: 1000))
        #expect(Self.sharpness(early) < Self.sharpness(late))
        #expect(Self.sharpness(late) < Self.sharpness(image))
        #expect(done == image, "nothing missing, nothing blurred")
    }
}

/// A target that hands its first preview to whoever waits for it, and keeps the last image.
private final class PreviewTarget: ImageTarget {
    private struct State {
        var preview: Bitmap?
        var waiters: [CheckedContinuation<Bitmap, Never>] = []
        var image: Bitmap?
    }

    private let state = Mutex(State())

    func display(_ display: ImageDisplay) {
        let (waiters, preview) = state.withLock { state -> ([CheckedContinuation<Bitmap, Never>], Bitmap?) in
            switch display.content {
            case .preview(let response) where state.preview == nil:
                state.preview = response.image
                defer { state.waiters = [] }
                return (state.waiters, response.image)
            case .image(let response):
                state.image = response.image
            default:
                break
            }
            return ([], nil)
        }
        if let preview { waiters.forEach { $0.resume(returning: preview) } }
    }

    /// The first preview shown, once it has been.
    var firstPreview: Bitmap {
        get async {
            await withCheckedContinuation { continuation in
                let shown = state.withLock { state in
                    if state.preview == nil { state.waiters.append(continuation) }
                    return state.preview
                }
                if let shown { continuation.resume(returning: shown) }
            }
        }
    }

    /// The last image (not preview) shown.
    var lastImage: Bitmap? { state.withLock { $0.image } }
}
