import Foundation
import Testing
import WebImageCodecs
import WebImageCore
import WebImageTestSupport

/// Clips made by the `ffmpeg` command line for the video tests, and ffmpeg's own decode of a
/// frame as the reference.
enum VideoTestFiles {
    static var ffmpegInstalled: Bool { VideoClips.ffmpeg != nil }
    static let pattern = VideoClips.pattern

    /// Runs `ffmpeg` with `arguments`.
    static func run(_ arguments: [String]) throws {
        try VideoClips.run(arguments)
    }

    /// A clip of ``pattern`` (or `source`) encoded with `encoding`, written as `name` in `folder`.
    static func make(_ name: String, in folder: TemporaryDirectory, _ encoding: [String], source: String = pattern) throws -> URL {
        let url = folder.url.appendingPathComponent(name)
        try VideoClips.make(url, encoding, source: source)
        return url
    }

    /// ffmpeg's own decode of the frame at `time` (`-ss` before `-i`: the accurate seek, the frame
    /// shown at that time), through `filter` when given, as RGBA bytes.
    static func reference(_ file: URL, at time: Double, filter: String? = nil, in folder: TemporaryDirectory) throws -> [UInt8] {
        let output = folder.url.appendingPathComponent("reference-\(UUID().uuidString.prefix(8)).rgba")
        try run(["-ss", String(time), "-i", file.path, "-frames:v", "1"] + (filter.map { ["-vf", $0] } ?? [])
            + ["-f", "rawvideo", "-pix_fmt", "rgba", output.path])
        return [UInt8](try Data(contentsOf: output))
    }

    /// Our poster of `file` at `time`, finished as the registry finishes a decode (orientation,
    /// thumbnail size).
    static func poster(_ file: URL, at time: Double = 0, options: ImageDecodingOptions = .init()) throws -> Bitmap {
        var options = options
        options.videoTime = time
        let container = try VideoDecoder().decode(try Data(contentsOf: file), options: options)
        return try CoderRegistry.finish(container, options: options).image
    }

    /// The mean and largest absolute difference of the colour channels (alpha ignored) between
    /// `bitmap` and RGBA `reference` bytes of the same size; `nil` when the sizes differ.
    static func difference(_ bitmap: Bitmap, _ reference: [UInt8]) -> (mean: Double, max: Int)? {
        guard reference.count == bitmap.width * bitmap.height * 4 else { return nil }
        var total = 0, largest = 0
        for y in 0..<bitmap.height {
            for x in 0..<bitmap.width {
                let ours = y * bitmap.bytesPerRow + x * 4, theirs = (y * bitmap.width + x) * 4
                for channel in 0..<3 {
                    let delta = abs(Int(bitmap.pixels[ours + channel]) - Int(reference[theirs + channel]))
                    total += delta
                    largest = max(largest, delta)
                }
            }
        }
        return (Double(total) / Double(bitmap.width * bitmap.height * 3), largest)
    }

    /// `data` with the ISO BMFF box at `path` (`["moov", "trak", …]`, the first of each name)
    /// replaced by `box` (a whole box, header included), every enclosing box's 32-bit size
    /// adjusted. Sample offsets are untouched: the clips put `mdat` before `moov`.
    static func replacingBox(_ path: [String], in data: Data, with box: Data) throws -> Data {
        var bytes = [UInt8](data)
        var start = 0, end = bytes.count
        var ancestors: [Int] = []
        for (depth, name) in path.enumerated() {
            var offset = start
            var found: Int?
            while offset + 8 <= end {
                let size = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
                guard size >= 8, offset + size <= end else { break }
                if String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self) == name { found = offset; break }
                offset += size
            }
            let box = try #require(found, "no \(name) box")
            let size = Int(bytes[box]) << 24 | Int(bytes[box + 1]) << 16 | Int(bytes[box + 2]) << 8 | Int(bytes[box + 3])
            if depth < path.count - 1 {
                ancestors.append(box)
                // Containers' children follow their 8-byte header; `stsd`/`dref` are not descended through.
                (start, end) = (box + 8, box + size)
            } else {
                (start, end) = (box, box + size)
            }
        }
        let delta = box.count - (end - start)
        bytes.replaceSubrange(start..<end, with: box)
        for ancestor in ancestors {
            let size = (Int(bytes[ancestor]) << 24 | Int(bytes[ancestor + 1]) << 16 | Int(bytes[ancestor + 2]) << 8 | Int(bytes[ancestor + 3])) + delta
            bytes.replaceSubrange(ancestor..<ancestor + 4, with: [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)])
        }
        return Data(bytes)
    }

    /// A box: 32-bit size, type, payload.
    static func box(_ type: String, _ payload: [UInt8]) -> Data {
        let size = payload.count + 8
        return Data([UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + Array(type.utf8) + payload)
    }

    /// `data` with the first Matroska `Video` element's PixelWidth and PixelHeight set to
    /// `width` and `height` (4-byte values), the element kept at its size by shrinking the
    /// elements after them into an EBML Void. The clip must have display sizes (a non-square
    /// sample aspect ratio) for the room.
    static func claimingMatroskaSize(_ data: Data, width: UInt32, height: UInt32) throws -> Data {
        var bytes = [UInt8](data)
        // `E0` (Video), a one-byte size, then `B0` (PixelWidth) first, as ffmpeg writes it.
        let video = try #require((0..<bytes.count - 3).first { bytes[$0] == 0xE0 && bytes[$0 + 1] & 0x80 != 0 && bytes[$0 + 2] == 0xB0 }, "no Video element")
        let length = Int(bytes[video + 1] & 0x7F)
        func uint(_ id: UInt8, _ value: UInt32) -> [UInt8] {
            [id, 0x84, UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
        var content = uint(0xB0, width) + uint(0xBA, height)
        let padding = length - content.count
        try #require(padding >= 2, "the Video element has no room (\(length) bytes)")
        content += [0xEC, UInt8(0x80 | (padding - 2))] + [UInt8](repeating: 0, count: padding - 2)
        bytes.replaceSubrange(video + 2..<video + 2 + length, with: content)
        return Data(bytes)
    }
}
