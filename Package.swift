// swift-tools-version:6.0
import PackageDescription

/// System C libraries, each a `systemLibrary` target over a Debian `-dev` package
/// (installed by `make deps`).
let cLibraries: [Target] = [
    .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
    .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
    .systemLibrary(name: "CPNG", pkgConfig: "libpng16", providers: [.apt(["libpng-dev"])]),
    .systemLibrary(name: "CWebP", pkgConfig: "libwebpdemux", providers: [.apt(["libwebp-dev"])]),
    .systemLibrary(name: "CGIF", providers: [.apt(["libgif-dev"])]),
    // Whole-buffer inflate, about three times zlib's speed: the PNG thumbnail path.
    .systemLibrary(name: "CDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
    .systemLibrary(name: "CLCMS2", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
]

let package = Package(
    name: "swift-web-image",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "WebImage", targets: ["WebImage"]),
        .library(name: "WebImageCore", targets: ["WebImageCore"]),
        .executable(name: "webimage", targets: ["webimage"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: cLibraries + [
        .target(
            name: "WebImageCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .target(
            name: "CCodecShims",
            dependencies: ["CJPEG", "CPNG", "CGIF", "CWebP", "CDeflate"]
        ),
        .target(
            name: "WebImageCodecs",
            dependencies: ["WebImageCore", "CTurboJPEG", "CJPEG", "CPNG", "CWebP", "CGIF", "CLCMS2", "CCodecShims"]
        ),
        .target(name: "WebImageHTTP", dependencies: ["WebImageCore"]),
        .target(name: "WebImage", dependencies: ["WebImageCore", "WebImageCodecs", "WebImageHTTP"]),
        .target(name: "WebImageServer", dependencies: ["WebImage"]),
        .executableTarget(
            name: "webimage",
            dependencies: [
                "WebImage", "WebImageServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Spawned by the tests as a second, killable process sharing a disk cache.
        .executableTarget(
            name: "webimage-test-probe",
            dependencies: ["WebImageCore", "WebImageCodecs", "WebImageTestSupport"],
            path: "Tests/Probe"
        ),
        .target(name: "WebImageTestSupport", dependencies: ["WebImageCore"], path: "Tests/Support"),
        .testTarget(name: "WebImageCoreTests", dependencies: ["WebImageCore", "WebImageTestSupport"]),
        .testTarget(name: "WebImageCodecsTests", dependencies: ["WebImageCodecs", "WebImageTestSupport"]),
        .executableTarget(
            name: "WebImageBenchmarks",
            dependencies: ["WebImageCore", "WebImageCodecs", "CTurboJPEG", "CPNG", "CWebP", "CCodecShims"],
            path: "Benchmarks/WebImageBenchmarks"
        ),
    ],
    swiftLanguageModes: [.v6]
)
