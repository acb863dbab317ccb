import Foundation
import Testing
@_spi(Testing) import WebImageServer
import WebImage
import WebImageTestSupport

/// The proxy converts sources to sRGB and writes no profile, unless `keepsColorProfile`
/// (`--keep-color-profile`): a thumbnail of a photo with a print profile is then a thumbnail,
/// not the profile.
@Suite(.enabled(if: Requirement.met(ICCProfiles.named("AdobeRGB1998.icc") != nil), "colord-data is not installed (make deps)"))
struct ProxyColorTests {
    /// `Demo/images/thumb-PastelHills.jpg` (400 × 250, untagged) tagged with Adobe RGB grown to 400 KB, in a
    /// folder the proxy serves.
    static func originFolder() throws -> (folder: TemporaryDirectory, profile: Data) {
        let folder = TemporaryDirectory("color-origin")
        let profile = ICCProfiles.padded(try #require(ICCProfiles.named("AdobeRGB1998.icc")), toAtLeast: 400_000)
        let photo = try Data(contentsOf: Fixture.demoImages.appendingPathComponent("thumb-PastelHills.jpg"))
        let tagged = JPEGMarkers.insertingICCProfile(profile, into: photo)
        #expect(try CoderRegistry.system().decode(tagged, options: .preservingColor).iccProfile == profile)
        try tagged.write(to: folder.url.appendingPathComponent("photo.jpg"))
        return (folder, profile)
    }

    /// The figure: a 64 px thumbnail of a photo with a 400 KB profile is under 5 KB, in
    /// every output format, and carries no profile.
    @Test(arguments: ["jpeg", "webp", "png", "avif"])
    func thumbnailsCarryNoProfile(format: String) async throws {
        let (folder, profile) = try Self.originFolder()
        defer { folder.remove() }
        #expect(profile.count >= 400_000)
        let harness = try await ProxyHarness.start { $0.originDirectory = folder.url }
        defer { Task { await harness.stop() } }
        let reply = try await harness.request("/image?url=local%3A%2F%2F%2Fphoto.jpg&w=64&format=\(format)")
        #expect(reply.status == 200)
        #expect(reply.body.count < 5_000, "\(format): \(reply.body.count) bytes")
        let decoded = try CoderRegistry.system().decode(reply.body, options: .preservingColor)
        #expect(decoded.iccProfile == nil && decoded.image.width == 64)
    }

    /// Kept: the stored values resized, and the profile embedded again, byte for byte; such
    /// variants are cached apart from the sRGB ones.
    @Test func keepsTheProfileWhenAsked() async throws {
        let (folder, profile) = try Self.originFolder()
        defer { folder.remove() }
        let harness = try await ProxyHarness.start {
            $0.originDirectory = folder.url
            $0.keepsColorProfile = true
        }
        defer { Task { await harness.stop() } }
        let reply = try await harness.request("/image?url=local%3A%2F%2F%2Fphoto.jpg&w=64&format=jpeg")
        #expect(reply.status == 200)
        #expect(reply.body.count > profile.count)
        let decoded = try CoderRegistry.system().decode(reply.body, options: .preservingColor)
        #expect(decoded.iccProfile == profile)
        // The same pixels converted by the library itself: what a viewer that honours the
        // profile shows is what the default proxy serves, within JPEG's re-encoding.
        let converted = try CoderRegistry.system().decode(reply.body)
        #expect(converted.iccProfile == nil && converted.image != decoded.image)
    }
}
