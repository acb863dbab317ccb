import Foundation
import Logging
import WebImage
import WebImageServer
import WebImageTestSupport

/// Issue 11's figure for colour management: a 64 px thumbnail of a photo carrying a 400 KB ICC
/// profile is under 5 KB, because the proxy converts to sRGB and writes no profile. A demo photo
/// is tagged with colord-data's AdobeRGB profile padded to 400 KB (as a print workflow's profile
/// is large), and `ImageProxy` (in process, caches off) makes the thumbnail in each format it
/// encodes. A size, not a time: the reference is the bound.
func runProfileBytesBenchmarks(_ report: Report) {
    guard let adobe = ICCProfiles.named("AdobeRGB1998.icc"),
          let photo = try? Data(contentsOf: URL(fileURLWithPath: "Demo/images/thumb-PastelHills.jpg")) else {
        FileHandle.standardError.write(Data("  profile-bytes: colord-data or Demo/images is absent; skipped\n".utf8))
        return
    }
    let profile = ICCProfiles.padded(adobe, toAtLeast: 400_000)
    let folder = TemporaryDirectory("profile-bytes")
    defer { folder.remove() }
    try! JPEGMarkers.insertingICCProfile(profile, into: photo).write(to: folder.url.appendingPathComponent("photo.jpg"))

    var configuration = ImageProxy.Configuration(cacheDirectory: nil)
    configuration.originDirectory = folder.url
    configuration.cachesDisabled = true
    configuration.logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
    configuration.accessLogger = configuration.logger
    let proxy = try! ImageProxy(configuration: configuration)
    defer { waitFor { await proxy.shutdown() } }
    for format in ["jpeg", "webp", "png", "avif"] {
        let request = try! ProxyRequest(query: "url=local%3A%2F%2F%2Fphoto.jpg&w=64&format=\(format)", allowsLocal: true)
        let output = waitFor { try await proxy.image(for: request, accept: ["image/webp"]) }
        report.add(.init(
            group: "profile-bytes", name: "64 px \(format) thumbnail of a photo with a \(profile.count / 1000) KB profile",
            ours: Double(output.image.data.count), reference: 5000, referenceName: "the issue's 5 KB", unit: "B",
            goal: .valueAtMost(5000)))
    }
}
