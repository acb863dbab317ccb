import Foundation
import Testing
import WebImageCore
import WebImageTestSupport
@testable import WebImageCodecs

/// Damaged JPEG XL files end in an ``ImageError`` (or, when the damage leaves a decodable file,
/// an image within the limits), never a crash, a hang or another error type.
@Suite(.timeLimit(.minutes(10 * Sanitizers.slowdown))) struct JXLHostileInputTests {
    typealias Files = ISOBMFFTestFiles

    static let fixtures = [
        "jxl-lossless.jxl", "jxl-container.jxl", "jxl-lossy.jxl", "jxl-alpha.jxl", "jxl-alpha-lossy.jxl",
        "jxl-16bit.jxl", "jxl-animated.jxl", "jxl-loops.jxl", "jxl-grey-alpha.jxl", "jxl-orientation6.jxl",
    ]

    func outcome(_ data: Data, _ label: String) -> HostileInput.Outcome {
        HostileInput.outcome(data, label, decode: { try CoderRegistry.system().decode($0, options: $1) }) { Issue.record("\($0)") }
    }

    /// Cut at every twentieth of its length, each fixture fails with a typed error: all the
    /// input is given to libjxl at once, so a file that ends early never waits for more.
    @Test(arguments: fixtures)
    func truncationsAreTypedErrors(fixture: String) throws {
        let data = try Files.fixture(fixture)
        for twentieth in 0..<20 {
            let length = data.count * twentieth / 20
            #expect(outcome(data.prefix(length), "\(fixture) cut at \(length)") == .error)
        }
        #expect(outcome(data, fixture) == .image)
    }

    /// Random bit flips after the signature, seeded so a failure reproduces, and runs of 0xFF.
    @Test(arguments: fixtures)
    func bitFlipsNeverCrash(fixture: String) throws {
        var generator = SeededGenerator(seed: 0x7A1 &+ UInt64(fixture.utf8.count))
        let original = [UInt8](try Files.fixture(fixture))
        let start = original[0] == 0xFF ? 2 : 12
        for _ in 0..<40 {
            let bytes = HostileInput.flippingBits(of: original, from: start, using: &generator)
            _ = outcome(Data(bytes), "\(fixture) with flipped bits")
        }
        for (at, bytes) in HostileInput.maximumRuns(of: original, from: start) {
            _ = outcome(Data(bytes), "\(fixture) with 0xFFFFFFFF at \(at)")
        }
    }

    /// A header announcing 30000 × 30000 over 32×32 data, decoded by the system registry in a
    /// child process limited to 1 GiB of address space and 20 seconds (the corpus test's
    /// pattern): refused from the header with a typed error, nothing allocated for it.
    @Test(.disabled(if: Sanitizers.reservesShadowMemory, "an ASan or TSan process reserves terabytes of address space for its shadow memory: the child's 1 GiB limit stops it at start"))
    func aHugeAnnouncedSizeStaysWithinBoundedMemory() throws {
        let path = Files.fixtures.appendingPathComponent("jxl-announces-30000.jxl").path
        let output = try runProbeLimited(["decode", path], addressSpaceKiB: 1 << 20, seconds: 20)
        #expect(output.hasPrefix("error "), "\(output)")
        #expect(output.contains("30000×30000"), "\(output)")
    }

    /// Finding #10: a 3 KB file of 9000 × 9000 (81 Mpx, inside the default limit of 100 Mpx) in
    /// a child limited to 1 GiB of address space. libjxl 0.7 needs about four times the image's
    /// RGBA bytes for its own buffers, and when one cannot be allocated it stops the process
    /// (SIGILL, a failed internal check) instead of returning an error. The decoder now bounds
    /// libjxl's working memory (33.5 Mpx): a typed error, the child alive.
    @Test(.disabled(if: Sanitizers.reservesShadowMemory, "an ASan or TSan process reserves terabytes of address space for its shadow memory: the child's 1 GiB limit stops it at start"))
    func anImageInsideThePixelLimitButBeyondLibjxlsMemoryIsRefused() throws {
        let path = Files.fixtures.appendingPathComponent("jxl-bomb-9000.jxl").path
        let output = try runProbeLimited(["decode", path], addressSpaceKiB: 1 << 20, seconds: 30)
        #expect(output.hasPrefix("error ") && output.contains("working-memory"), "\(output)")
    }
}
