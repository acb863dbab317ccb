import Foundation
import Testing
import WebImageTestSupport
@testable import WebImageCodecs

/// Every C library the codecs link reports a version, and where the library installs a
/// pkg-config file, the version it runs with is the one pkg-config names (the -dev package's).
@Test func everyCodecLibraryIsLinkedAndReportsAVersion() throws {
    let versions = Dictionary(CodecLibraries.versions.map { ($0.library, $0.version) }, uniquingKeysWith: { first, _ in first })
    #expect(versions.count == 14, "\(versions.keys.sorted())")
    let pkgConfig = [
        "libpng": "libpng16", "libwebp": "libwebp", "libwebpdemux": "libwebpdemux", "lcms2": "lcms2",
        "libavif": "libavif", "libheif": "libheif", "libjxl": "libjxl", "librsvg": "librsvg-2.0", "poppler-glib": "poppler-glib", "libdeflate": "libdeflate",
    ]
    for (library, package) in pkgConfig {
        let reported = try #require(versions[library], "\(library) is not reported")
        let run = try CommandRun(URL(fileURLWithPath: "/usr/bin/env"), ["pkg-config", "--modversion", package])
        let expected = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(run.status == 0 && !expected.isEmpty, "pkg-config \(package): \(run.stderr)")
        // lcms2 reports major.minor; the others the whole version.
        #expect(reported.hasPrefix(expected) || expected.hasPrefix(reported + "."), "\(library): \(reported), pkg-config says \(expected)")
    }
    for library in ["libjpeg-turbo (libjpeg API)", "giflib", "libyuv"] {
        #expect(versions[library]?.first?.isNumber == true, "\(library): \(versions[library] ?? "missing")")
    }
    #expect(versions["TurboJPEG"] == "2.x API")
}
