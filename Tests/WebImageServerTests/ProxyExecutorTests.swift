import Foundation
import Synchronization
import Testing
import WebImage
@_spi(Testing) @testable import WebImageServer
import WebImageTestSupport

/// Wraps a coder to note the name of every thread that runs it; the coding itself is the
/// system coder's.
private final class ThreadRecorder: ImageDecoder, ImageEncoder {
    let decoder: any ImageDecoder
    let encoder: any ImageEncoder
    private let names = Mutex<[String]>([])

    init(decoder: any ImageDecoder, encoder: any ImageEncoder) {
        self.decoder = decoder
        self.encoder = encoder
    }

    var threads: [String] { names.withLock { $0 } }
    var formats: Set<ImageFormat> { decoder.formats }
    var format: ImageFormat { encoder.format }

    func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        names.withLock { $0.append(currentThreadName()) }
        return try decoder.decode(data, options: options)
    }

    func encode(_ image: ImageContainer, options: ImageEncodingOptions) throws -> Data {
        names.withLock { $0.append(currentThreadName()) }
        return try encoder.encode(image, options: options)
    }
}

/// `ImageProxy.Configuration.executor`: the proxy's decodes and encodes run on the threads it
/// is given, not on the process-wide `BlockingExecutor.decoding`.
@Suite struct ProxyExecutorTests {
    @Test func decodesAndEncodesRunOnTheConfiguredThreads() async throws {
        let system = CoderRegistry.system()
        let jpeg = try #require(system.decoder(for: .jpeg)), jpegEncoder = try #require(system.encoder(for: .jpeg))
        let recorder = ThreadRecorder(decoder: jpeg, encoder: jpegEncoder)
        let executor = BlockingExecutor(name: "proxy-own", width: 1)
        defer { executor.shutdown() }
        let harness = try await ProxyHarness.start { configuration in
            configuration.registry.register(recorder as any ImageDecoder)
            configuration.registry.register(recorder as any ImageEncoder)
            configuration.executor = executor
        }
        defer { Task { await harness.stop() } }
        harness.origin.register("/e.jpg", data: try Fixture.elephants)

        let reply = try await harness.get("/e.jpg", "w=100&format=jpeg")
        #expect(reply.status == 200 && reply.format == .jpeg)
        // One decode of the source and one encode of the variant, both on the proxy's own thread.
        #expect(recorder.threads == ["proxy-own.0", "proxy-own.0"])
    }
}
