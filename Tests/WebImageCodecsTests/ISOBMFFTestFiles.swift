import Foundation
import Testing
import WebImageCore
import WebImageTestSupport

/// The AVIF and HEIC fixtures (Tests/Fixtures, made by make-avif-heif-fixtures.py with avifenc,
/// heif-enc and libheif's encoder) and their reference decodes by the formats' own tools,
/// avifdec (libavif-bin) and heif-convert (libheif-examples), run at test time.
enum ISOBMFFTestFiles {
    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    static let avifFixtures = [
        "avif-gradient.avif", "avif-alpha.avif", "avif-10bit.avif", "avif-12bit-420.avif", "avif-animated.avif",
        "avif-irot1.avif", "avif-irot2.avif", "avif-irot3.avif", "avif-imir0.avif", "avif-imir1.avif", "avif-irot1-imir0.avif",
        "avif-irot1-imir1.avif", "avif-clap.avif",
        "avif-grid.avif", "avif-loop-3.avif",
    ]
    static let heicFixtures = [
        "heic-gradient.heic", "heic-alpha.heic", "heic-10bit.heic", "heic-thumbnail.heic", "heic-exif6.heic", "heic-grid.heic",
        "heic-orientation2.heic", "heic-orientation3.heic", "heic-orientation4.heic", "heic-orientation5.heic", "heic-orientation6.heic",
        "heic-orientation7.heic", "heic-orientation8.heic", "heic-orientation6-exif8.heic", "heic-thumbnail-inverse.heic",
    ]

    /// A reference decoder's output: its PNG's samples, read by Tests/Fixtures/png-samples.py.
    struct Samples {
        var width: Int, height: Int, channels: Int, depth: Int
        var values: [Int]
    }

    /// Runs `tool arguments… fixture output.png`, then reads the PNG's samples.
    static func referenceDecode(_ tool: String, _ arguments: [String], fixture name: String) throws -> Samples {
        try referenceDecode(tool, arguments, path: fixtures.appendingPathComponent(name).path)
    }

    /// Runs `tool arguments… path output.png`, then reads the PNG's samples.
    static func referenceDecode(_ tool: String, _ arguments: [String], path: String) throws -> Samples {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("ref-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: output) }
        _ = try run([tool] + arguments + [path, output.path])
        return try pngSamples(path: output.path)
    }

    /// The samples of an 8- or 16-bit RGB(A) PNG, read by Tests/Fixtures/png-samples.py (not
    /// by this library's PNG decoder).
    static func pngSamples(path: String) throws -> Samples {
        let text = try run(["python3", fixtures.appendingPathComponent("png-samples.py").path, path])
        let lines = text.split(separator: "\n")
        let header = lines[0].split(separator: " ").compactMap { Int($0) }
        let values = lines.count > 1 ? lines[1].split(separator: " ").compactMap { Int($0) } : []
        return Samples(width: header[0], height: header[1], channels: header[2], depth: header[3], values: values)
    }

    /// Runs a command found on the PATH and returns its standard output; fails on a non-zero exit.
    static func run(_ command: [String]) throws -> String {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ReferenceToolFailure(command: command.joined(separator: " "), status: process.terminationStatus)
        }
        return String(decoding: data, as: UTF8.self)
    }

    struct ReferenceToolFailure: Error { var command: String; var status: Int32 }

    /// The largest difference between one sample of `bitmap` and the reference's, after the
    /// reference is brought to 8 bits by `to8`. Fails the test if the sizes or layouts differ.
    static func maximumDifference(_ bitmap: Bitmap, _ reference: Samples, to8: (Int) -> Int = { $0 }) -> Int? {
        guard bitmap.width == reference.width, bitmap.height == reference.height,
              bitmap.pixelFormat.bytesPerPixel == reference.channels,
              reference.values.count == reference.width * reference.height * reference.channels
        else {
            Issue.record("\(bitmap.width)×\(bitmap.height)×\(bitmap.pixelFormat.bytesPerPixel) against the reference's \(reference.width)×\(reference.height)×\(reference.channels)")
            return nil
        }
        var worst = 0
        let rowSamples = bitmap.width * reference.channels
        for y in 0..<bitmap.height {
            for i in 0..<rowSamples {
                let ours = Int(bitmap.pixels[y * bitmap.bytesPerRow + i])
                worst = max(worst, abs(ours - to8(reference.values[y * rowSamples + i])))
            }
        }
        return worst
    }

    // The quadrants image the orientation fixtures are made from (48×32): red top left, green
    // top right, blue bottom left, white bottom right.
    static let red: [UInt8] = [255, 0, 0], green: [UInt8] = [0, 255, 0], blue: [UInt8] = [0, 0, 255], white: [UInt8] = [255, 255, 255]

    /// Checks the colour at the centre of each quadrant of `bitmap` (top left, top right, bottom
    /// left, bottom right) within `tolerance` per channel, and its size.
    static func expectQuadrants(
        _ bitmap: Bitmap, width: Int, height: Int, _ expected: [[UInt8]], tolerance: Int, _ label: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(bitmap.width == width && bitmap.height == height, "\(label): \(bitmap.width)×\(bitmap.height)", sourceLocation: sourceLocation)
        guard bitmap.width == width, bitmap.height == height else { return }
        let points = [(width / 4, height / 4), (3 * width / 4, height / 4), (width / 4, 3 * height / 4), (3 * width / 4, 3 * height / 4)]
        for (index, (x, y)) in points.enumerated() {
            let offset = y * bitmap.bytesPerRow + x * bitmap.pixelFormat.bytesPerPixel
            let pixel = Array(bitmap.pixels[offset..<offset + 3])
            let close = zip(pixel, expected[index]).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
            #expect(close, "\(label): quadrant \(index) is \(pixel), expected \(expected[index])", sourceLocation: sourceLocation)
        }
    }

    /// The fixture with every `ispe` box (image spatial extents: the primary item's, and a
    /// HEIC's coded item's) announcing `width` × `height`.
    static func withAnnouncedSize(_ name: String, width: UInt32, height: UInt32) throws -> Data {
        var bytes = [UInt8](try fixture(name))
        let ispe = Array("ispe".utf8)
        let offsets = (0..<(bytes.count - 16)).filter { Array(bytes[$0..<$0 + 4]) == ispe }
        guard !offsets.isEmpty else { throw ReferenceToolFailure(command: "no ispe in \(name)", status: 0) }
        for at in offsets {
            // Type, version and flags (4 bytes), then the width and height, big-endian.
            withUnsafeBytes(of: width.bigEndian) { bytes.replaceSubrange(at + 8..<at + 12, with: $0) }
            withUnsafeBytes(of: height.bigEndian) { bytes.replaceSubrange(at + 12..<at + 16, with: $0) }
        }
        return Data(bytes)
    }
}
