// swift-tools-version:6.0
// A package of its own that depends on swift-web-image as an application would, and uses only
// its public API, the way the README shows. `make test` builds it (warnings are errors) and
// runs it against the demo images; it exits non-zero when anything it checks does not hold.
import PackageDescription

let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "swift-web-image", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "Consumer",
            dependencies: [.product(name: "WebImage", package: "swift-web-image")],
            swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]
        ),
    ],
    swiftLanguageModes: [.v6]
)
