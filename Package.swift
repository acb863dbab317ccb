// swift-tools-version:6.1
import PackageDescription

/// Puts a C target in `Sources/C/<name>`: the system libraries' module maps and the package's own
/// C sit in one folder, apart from the Swift modules (SwiftPM would look in `Sources/<name>`).
func inSourcesC(_ target: Target) -> Target {
    target.path = "Sources/C/\(target.name)"
    return target
}

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
    // AVIF through libavif (AV1 decoded by dav1d or libaom, whichever Debian's build links),
    // opened when first used, not linked (CLazyLibraries). No pkgConfig: libavif.pc adds
    // -DAVIF_DLL (a Windows export macro), a flag SwiftPM refuses with a warning; the header is
    // in the default paths.
    .systemLibrary(name: "CAvif", providers: [.apt(["libavif-dev"])]),
    // RGB to YUV for the AVIF encoder: libavif 0.11 converts RGB with its portable per-pixel
    // code (a fifth of a 512 px encode), libyuv with SIMD. No pkg-config file in Debian's package.
    .systemLibrary(name: "CYUV", providers: [.apt(["libyuv-dev"])]),
    // HEIC/HEIF through libheif (HEVC decoded by libde265). No pkgConfig: its flags are the
    // multiarch include folder, a default path, and -lheif, and the library is not linked but
    // opened when the first HEIF is (CLazyLibraries).
    .systemLibrary(name: "CHeif", providers: [.apt(["libheif-dev"])]),
    // JPEG XL through libjxl (the reference implementation; Debian 12 ships 0.7). No pkgConfig,
    // as for CAvif: libjxl.pc brings libhwy's -DHWY_SHARED_DEFINE, a flag SwiftPM refuses with a
    // warning (and jxl/decode.h does not need); the header and library are in the default paths.
    // Opened when first used, not linked (CLazyLibraries).
    .systemLibrary(name: "CJxl", providers: [.apt(["libjxl-dev"])]),
    // SVG through librsvg (rendered with cairo).
    .systemLibrary(name: "CRsvg", pkgConfig: "librsvg-2.0", providers: [.apt(["librsvg2-dev"])]),
    // PDF pages through poppler-glib (rendered with cairo, as pdftocairo does). Its headers
    // only: the library is not linked but opened when the first PDF is (CLazyLibraries, which says
    // why). No pkgConfig: the shim includes <poppler/glib/poppler.h> by its full path, and the
    // GLib and cairo include paths its headers need come from CRsvg's pkg-config flags.
    .systemLibrary(name: "CPoppler", providers: [.apt(["libpoppler-glib-dev"])]),
    // Video posters through FFmpeg (Debian 12: 5.1): libavformat's demuxers over bytes in memory,
    // libavcodec's decoders, libswscale. Its headers only: the four libraries are not linked but
    // opened when the first video is (CLazyLibraries). No pkgConfig: the headers are in the default
    // include path (/usr/include/x86_64-linux-gnu).
    .systemLibrary(
        name: "CFFmpeg",
        providers: [.apt(["libavformat-dev", "libavcodec-dev", "libswscale-dev", "libavutil-dev"])]
    ),
    // The GTK 4 view layer (WebImageGTK), its own product so that servers never link GTK.
    .systemLibrary(name: "CGTK", pkgConfig: "gtk4", providers: [.apt(["libgtk-4-dev"])]),
].map(inSourcesC)

let package = Package(
    name: "swift-web-image",
    // Linux (glibc) is the only platform this package is built and tested on. The macOS line
    // states no support: it is the minimum that the Synchronization module (Mutex, Atomic)
    // needs, so that SwiftPM does not assume an older deployment target. Everything that
    // differs between C libraries is in Sources/WebImageCore/Support/Platform.swift.
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "WebImage", targets: ["WebImage"]),
        .library(name: "WebImageCore", targets: ["WebImageCore"]),
        // The image proxy, to run inside an application's own Hummingbird server.
        .library(name: "WebImageServer", targets: ["WebImageServer"]),
        // S3 (SigV4 signing, the object calls) and the s3:// loader.
        .library(name: "WebImageS3", targets: ["WebImageS3"]),
        .executable(name: "webimage", targets: ["webimage"]),
        // GTK 4 views over the binder: WebImageView and the main-actor integration.
        .library(name: "WebImageGTK", targets: ["WebImageGTK"]),
        // The desktop gallery over WebImageGTK: its own executable, so `webimage` never links GTK.
        .executable(name: "webimage-gtk", targets: ["webimage-gtk"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // AsyncHTTPClient's TLS, named directly for the loader's additional trust roots (and
        // the TLS origin of the tests).
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.30.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // Spans through the tracing API (free when no tracer is bootstrapped), in every module.
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // The OTLP exporter `webimage serve` bootstraps when the OTEL_* environment asks for it,
        // over HTTP/protobuf and gRPC (docs/benchmarks.md, "What tracing costs", has the time
        // each adds to a build).
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP", "OTLPGRPC"]),
    ],
    targets: cLibraries + [
        .target(
            name: "WebImageCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // The C that Swift cannot express, over the libraries it includes: libjpeg, libpng (and
        // zlib, its inflate), libwebp, libdeflate, lcms2 (the JPEG previews' colour), and dav1d
        // (wi_dav1d.c: its default settings, without the logger). libdav1d is linked although
        // only libavif and libheif call it, and they are opened when first used: a library in
        // the link that references dav1d_default_settings is what makes the linker export this
        // program's definition, which the two then bind to instead of libdav1d's.
        inSourcesC(.target(
            name: "CCodecShims",
            dependencies: ["CJPEG", "CPNG", "CWebP", "CDeflate", "CLCMS2"],
            linkerSettings: [.linkedLibrary("z"), .linkedLibrary("dav1d")]
        )),
        // The codec libraries few runs need (FFmpeg, poppler-glib, libjxl, libheif, libavif)
        // opened when first used (dlopen), not linked: loaded with their dependencies at every
        // start, they cost each `webimage` process and renderer child about 70 ms in the dynamic
        // loader, and libjxl's and libheif's load-time work 4 ms more
        // (include/wi_lazy_libraries.h). It defines, hidden, every function of theirs
        // WebImageCodecs calls. CRsvg for its pkg-config flags alone (the GLib and cairo headers
        // that poppler's include).
        inSourcesC(.target(
            name: "CLazyLibraries",
            dependencies: ["CFFmpeg", "CPoppler", "CJxl", "CHeif", "CAvif", "CRsvg"],
            linkerSettings: [.linkedLibrary("dl")]
        )),
        .target(
            name: "WebImageCodecs",
            dependencies: ["WebImageCore", "CTurboJPEG", "CJPEG", "CPNG", "CWebP", "CGIF", "CLCMS2", "CAvif", "CYUV", "CHeif", "CJxl", "CRsvg", "CPoppler", "CDeflate", "CFFmpeg", "CLazyLibraries", "CCodecShims"]
        ),
        .target(
            name: "WebImageHTTP",
            dependencies: [
                "WebImageCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(name: "WebImage", dependencies: ["WebImageCore", "WebImageCodecs", "WebImageHTTP"]),
        .target(
            name: "WebImageS3",
            dependencies: [
                "WebImageCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .target(
            name: "WebImageServer",
            dependencies: [
                "WebImage", "WebImageCore", "WebImageS3",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOSOCKS", package: "swift-nio-extras"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        inSourcesC(.target(name: "CWebImageGTK", dependencies: ["CGTK"])),
        .target(name: "WebImageGTK", dependencies: ["WebImage", "CGTK", "CWebImageGTK"]),
        // A GTK program the GTK tests run under Xvfb: a real window, GLib's main loop driving
        // Swift's main actor, as in an application.
        .executableTarget(
            name: "webimage-gtk-probe",
            dependencies: ["WebImageGTK", "CGTK", "CWebImageGTK"],
            path: "Tests/GTKProbe"
        ),
        // The desktop gallery: a folder, a list of URLs or a running `webimage serve`, in a
        // GtkGridView of WebImageViews (docs in the WebImage catalog's GTKViews article).
        .executableTarget(
            name: "webimage-gtk",
            dependencies: ["WebImage", "WebImageGTK", "CGTK", "CWebImageGTK"]
        ),
        .executableTarget(
            name: "webimage",
            dependencies: [
                "WebImage", "WebImageCodecs", "WebImageServer", "WebImageS3",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OTel", package: "swift-otel"),
            ]
        ),
        // Spawned by the tests as a second, killable process sharing a disk cache.
        .executableTarget(
            name: "webimage-test-probe",
            dependencies: ["WebImageCore", "WebImageCodecs", "WebImageTestSupport"],
            path: "Tests/Probe"
        ),
        // libjpeg-turbo alone, fed through a suspending source: the reference for the pixels our JPEG
        // decoders give a damaged file in pieces (finding #7, docs/reliability.md).
        .target(name: "CJPEGReference", dependencies: ["CJPEG"], path: "Tests/CJPEGReference"),
        // posix_spawn for the tests' child processes, instead of Foundation's Process (see its source).
        .target(name: "CTestSpawn", dependencies: ["CCodecShims"], path: "Tests/CTestSpawn"),
        // What more than one test target uses: the loopback origin, child processes (the probe,
        // `webimage serve`), the corpus's reference, the hostile-input harness, byte-level GIF and
        // WebP builders, and the proxy tests' pictures (PNGs, hence the codecs) and HTTP client.
        .target(
            name: "WebImageTestSupport",
            dependencies: [
                "WebImageCore",
                "WebImageCodecs",
                "CTestSpawn",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/Support"
        ),
        .testTarget(name: "WebImageGTKTests", dependencies: ["WebImage", "WebImageTestSupport"]),
        // The codecs too: AnimatedImagePlayer is played on real animations, against their full decode.
        .testTarget(name: "WebImageCoreTests", dependencies: ["WebImageCore", "WebImageCodecs", "WebImageTestSupport"]),
        .testTarget(name: "WebImageCodecsTests", dependencies: ["WebImageCodecs", "WebImageTestSupport", "CJPEGReference"]),
        .testTarget(name: "WebImageHTTPTests", dependencies: ["WebImage", "WebImageTestSupport"]),
        .testTarget(
            name: "WebImageServerTests",
            dependencies: [
                "WebImageServer", "WebImageCore", "WebImageS3", "WebImageTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The `webimage` command, run as the built executable beside the tests (a test target
        // cannot link an executable module): every subcommand's arguments, output and exit status.
        .testTarget(
            name: "WebImageCommandTests",
            dependencies: [
                "WebImage", "WebImageCore", "WebImageCodecs", "WebImageServer", "WebImageTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // Uses WebImageServer as an application would, with a plain import: every other server
        // test file may use @testable, which would hide a symbol left out of the public surface.
        .testTarget(
            name: "WebImageServerEmbeddingTests",
            dependencies: [
                "WebImage", "WebImageServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "WebImageS3Tests",
            dependencies: ["WebImageS3", "WebImage", "WebImageTestSupport", .product(name: "AsyncHTTPClient", package: "async-http-client")]
        ),
        .testTarget(
            name: "WebImageTests",
            dependencies: ["WebImage", "WebImageTestSupport", "CJPEGReference", .product(name: "MetricsTestKit", package: "swift-metrics")]
        ),
        // Every ```swift example of the documentation (README.md, the DocC catalog, the `///`
        // comments of public declarations), generated by scripts/extract-snippets.py: building
        // this target, as `make test` does, compiles them against the public API (no @testable).
        // It is never run.
        .executableTarget(
            name: "WebImageSnippets",
            dependencies: [
                "WebImage", "WebImageServer", "WebImageS3", "WebImageGTK", "CGTK", .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"), .product(name: "OTel", package: "swift-otel"),
            ],
            path: "Tests/Snippets",
            // Outside the package boundary: the examples compile against the public API alone,
            // as a user's code does, not against the `package` declarations the modules share.
            packageAccess: false
        ),
        // The README's first example, a complete program (```swift program), as it is: it
        // compiles only if it compiles pasted into an empty package's main.swift, with nothing
        // but the WebImage product. It is never run (it loads from the network).
        .executableTarget(name: "WebImageSnippetProgram", dependencies: ["WebImage"], path: "Tests/SnippetProgram"),
        .executableTarget(
            name: "WebImageBenchmarks",
            dependencies: [
                "WebImage", "WebImageS3", "WebImageServer", "CTurboJPEG", "CPNG", "CWebP", "CCodecShims",
                // The loopback origin that paces its bodies, for the simulated scroll.
                "WebImageTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/WebImageBenchmarks"
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The libFuzzer targets (Fuzz/, docs/reliability.md), only when WEBIMAGE_FUZZER_RUNTIME names the
// toolchain's libclang_rt.fuzzer_no_main archive, as scripts/fuzz.sh and scripts/sanitize.sh
// set it: a normal build never sees them. They are ordinary executables (their `main` calls
// libFuzzer's driver), so one sanitized build with coverage instrumentation serves both the
// test suite under ASan and the fuzz targets.
if let fuzzerRuntime = Context.environment["WEBIMAGE_FUZZER_RUNTIME"], !fuzzerRuntime.isEmpty {
    let fuzzTargets: [(name: String, dependencies: [Target.Dependency])] = [
        ("fuzz-decode", ["WebImageCodecs"]),
        // libwebp's own incremental decoder and libjpeg's own suspending decode, to tell the
        // pixels that depend on where a damaged file was split in those libraries (findings #6, #7).
        ("fuzz-incremental", ["WebImageCodecs", "CWebP", "CJPEGReference"]),
        ("fuzz-header", []),
        ("fuzz-metadata", []),
        ("fuzz-proxy-request", ["WebImageServer"]),
        ("fuzz-disk-cache", []),
        ("fuzz-data-url", []),
        ("fuzz-cache-control", []),
        // The HEIF/AVIF grid path and SVG documents (hostile-input findings 1, 3 and 4).
        ("fuzz-grid", ["WebImageCodecs"]),
        ("fuzz-svg", ["WebImageCodecs"]),
        // PDF pages through poppler-glib, drawn in this process.
        ("fuzz-pdf", ["WebImageCodecs"]),
        // Video containers and their codecs through FFmpeg (VideoDecoder): posters and probes.
        ("fuzz-video", ["WebImageCodecs"]),
        // The placeholder hashes' parsers and decoders: a ThumbHash or BlurHash string is a client's input.
        ("fuzz-placeholder", []),
        // Request heads read ahead of NIO's HTTP/1 decoder (RequestHeadScan), against that decoder.
        ("fuzz-request-head", ["WebImageServer", .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio")]),
    ]
    package.targets += [
        .target(name: "CFuzzerDriver", path: "Fuzz/Sources/CFuzzerDriver"),
        .target(name: "FuzzSupport", dependencies: ["WebImageCore", "CFuzzerDriver"], path: "Fuzz/Sources/FuzzSupport"),
    ]
    package.targets += fuzzTargets.map { target in
        .executableTarget(
            name: target.name,
            dependencies: ["FuzzSupport", "WebImageCore"] + target.dependencies,
            path: "Fuzz/Sources/\(target.name)",
            // libFuzzer is C++.
            linkerSettings: [.unsafeFlags([fuzzerRuntime, "-lstdc++"])]
        )
    }
}
