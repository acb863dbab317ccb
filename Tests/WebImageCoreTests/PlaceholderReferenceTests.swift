import Foundation
import Testing
import WebImageCodecs
import WebImageTestSupport
@testable import WebImageCore

/// ThumbHash and BlurHash against their reference implementations from PyPI (`thumbhash-python`,
/// a port of Evan Wallace's code; `blurhash`, a port of Wolt's), through
/// `Tests/Fixtures/placeholder-reference.py`. Both encoders get the identical pixels: our
/// decoder's image, reduced by `placeholderReduction` to at most 100 px.
///
/// Two checks per image and hash:
///
/// - (a) the reference decoder's pixels of our hash against its pixels of its own hash: mean
///   absolute difference per channel sample at most 1/255. The hashes are expected to be
///   byte-identical, and were for all 30 corpus photos and these synthetic images with a Python
///   model of this code: ThumbHash sums its terms in the reference's order and with the same
///   libm cosines, so bit for bit (its terms that are zero in exact arithmetic sit on a rounding
///   boundary, where only the same order gives the same nibble); BlurHash sums separably, about
///   1e-15 away, and has no term on a boundary (a zero component is level 9 whatever its sign).
///   The bound is a margin, not the expectation: one quantisation step of one term moves the
///   decoded picture by 0.1–3.7/255 (ThumbHash) and 0.03–4.2/255 (BlurHash) on these photos, so
///   1/255 lets one low-impact term land on the other side of a rounding boundary and fails any
///   systematic difference (a cosine phase, a rounding rule, the colour transfer).
/// - (b) our decoder on the reference's hash against the reference decoder's pixels of it: mean
///   at most 0.05/255 and no sample more than 1 apart (measured: 0). The formulas are the same;
///   ours sums separably and rounds halves up where the Python ports round them to even, so only
///   a value within rounding error of a half can come out one level apart.
///
/// The Python ThumbHash port rounds half to even where Evan Wallace's JavaScript, which this code
/// follows, rounds half up: the two pick different luminance counts for aspect ratios on a half
/// (2:1 with alpha: 5 · ½ = 2.5). The images here avoid those.
@Suite(.enabled(if: Requirement.met(PlaceholderReference.isAvailable), PlaceholderReference.missingReason))
struct PlaceholderReferenceTests {
    /// Photos of every kind the corpus has: baseline, progressive and grey JPEG, PNG with alpha
    /// and grey-alpha, lossy WebP, a small JPEG and an edge case with transparency.
    static let corpusFiles = [
        "photos/Aqua.jpg", "photos/Dune.jpg", "photos/Storm.jpg", "photos/Wood.jpg", "photos/autumn-2560x1600-progressive.jpg",
        "photos/grey-2560x1600-gray.jpg", "photos/Silk.png", "photos/Spring.png", "photos/stripes-graya.png",
        "photos/adwaita-4096.webp", "photos/o2.jpg", "edge/transparent.png",
    ]

    /// Published hashes: ThumbHash's demo page (field.jpg, given there as hex), and Wolt's README,
    /// Algorithm.md and website examples.
    static let publishedThumbHashes = ["3OcRJYB4d3h/iIeHeEh3eIhw+j3A"]
    static let publishedBlurHashes = [
        "LEHV6nWB2yk8pyo0adR*.7kCMdnj", "LlMF%n00%#MwS|WCWEM{R*bbWBbH", "LEHV6njZ2ykUpyoKadR*.8kCMdnj",
        "LHF5]+c[^6#M@-5b,1J5@[or[kA{", "L6Pj0^xZ.A.S_Nt7t7R+*0o}DgQ-", "LKO2?U%2Tw=_]~VeVZRi};RPxuwH",
        "LPPGdFog?wt7?HofM|R+OGRjr;xu",
    ]

    @Test(.enabled(if: TestFiles.corpusIsPresent, "../shared/corpus is absent (a clone without the shared test images)"))
    func corpusPhotosEncodeLikeTheReferences() throws {
        let registry = CoderRegistry.system()
        var options = ImageDecodingOptions()
        // The pipeline's thumbnail path: the reduction then starts from 256 px.
        options.thumbnail = .maxPixelSize(256)
        let images = try Self.corpusFiles.map { file -> (String, Bitmap) in
            let data = try Data(contentsOf: TestFiles.corpus.appendingPathComponent(file))
            let image = try registry.decode(data, options: options).image
            return (file, image)
        }
        try Self.compare(images)
    }

    /// Images the corpus has no example of: alpha gradients, half transparency, extreme aspect
    /// ratios, grey and premultiplied pixels. Most vary along one axis only, so many of their
    /// ThumbHash terms are zero and sit on a rounding boundary (see the suite's comment).
    @Test func syntheticImagesEncodeLikeTheReferences() throws {
        let images: [(String, Bitmap)] = [
            ("alpha gradient 90×70", Bitmap.make(width: 90, height: 70) { x, y in [200, UInt8(80 + y), 40, UInt8(x * 255 / 89)] }),
            ("half transparent 60×40", Bitmap.make(width: 60, height: 40) { x, _ in x < 30 ? [0, 0, 0, 0] : [30, 160, 90, 255] }),
            ("1×1000", Bitmap.make(width: 1, height: 1000) { _, y in [UInt8(y / 4), 80, 200, 255] }),
            ("1000×1", Bitmap.make(width: 1000, height: 1) { x, _ in [UInt8(x / 4), 80, 200, 255] }),
            ("grey 64×48", Bitmap.make(width: 64, height: 48, format: .gray8) { x, y in [UInt8(x * 3 + y)] }),
            ("premultiplied 120×80", Bitmap.make(width: 120, height: 80, format: .rgba8Premultiplied) { x, y in
                let alpha = UInt8(55 + x + y)
                return [UInt8(Int(alpha) * x / 119), UInt8(Int(alpha) * y / 79), alpha / 2, alpha]
            }),
            ("one pixel", Bitmap.make(width: 1, height: 1) { _, _ in [12, 200, 99, 255] }),
        ]
        try Self.compare(images)
    }

    /// The published hashes decode like the references decode them, and parse here.
    @Test func publishedHashesDecodeLikeTheReferences() throws {
        let sizes = [(32, 32, 1.0), (20, 12, 1.0), (32, 20, 1.5)]
        typealias Item = PlaceholderReference.Item
        var items = Self.publishedThumbHashes.map { Item.thumbHashDecode(base64: $0) }
        for hash in Self.publishedBlurHashes {
            items += sizes.map { Item.blurHashDecode(hash, width: $0.0, height: $0.1, punch: $0.2) }
        }
        let answers = try PlaceholderReference.ask(items)
        var next = 0
        func take() -> PlaceholderReference.Pixels? {
            defer { next += 1 }
            return answers[next].pixels
        }
        for base64 in Self.publishedThumbHashes {
            let theirs = try #require(take())
            let ours = try ThumbHash(base64).bitmap(width: theirs.width, height: theirs.height)
            Self.expectSameDecode(ours, theirs, "ThumbHash \(base64)")
        }
        for hash in Self.publishedBlurHashes {
            for (width, height, punch) in sizes {
                let theirs = try #require(take())
                let ours = try BlurHash(hash).bitmap(width: width, height: height, punch: punch)
                Self.expectSameDecode(ours, theirs, "BlurHash \(hash) at \(width)×\(height), punch \(punch)")
            }
        }
    }

    // MARK: The checks

    /// (b): our decode of a hash against the reference's decode of it.
    static func expectSameDecode(_ ours: Bitmap, _ theirs: PlaceholderReference.Pixels, _ what: String) {
        let difference = PlaceholderReference.Pixels(ours).difference(from: theirs)
        #expect(difference.mean <= 0.05 && difference.maximum <= 1, "\(what): mean \(difference.mean), largest \(difference.maximum)")
    }

    /// What both sides made of one image.
    struct Encoded {
        var name: String
        var ours: (thumb: ThumbHash, blur: BlurHash)
        var theirs: (thumb: String, blur: String)
        var blurSize: (width: Int, height: Int)
    }

    /// Encodes every image with both implementations, decodes all four hashes with the
    /// reference, and checks (a) and (b) for each.
    static func compare(_ images: [(String, Bitmap)]) throws {
        let encoded = try encodeWithBoth(images)
        let items = encoded.flatMap { image -> [PlaceholderReference.Item] in
            [.thumbHashDecode(base64: image.ours.thumb.base64), .thumbHashDecode(base64: image.theirs.thumb),
             .blurHashDecode(image.ours.blur.string, width: image.blurSize.width, height: image.blurSize.height, punch: 1),
             .blurHashDecode(image.theirs.blur, width: image.blurSize.width, height: image.blurSize.height, punch: 1)]
        }
        let answers = try PlaceholderReference.ask(items)
        var identical = (thumb: 0, blur: 0)
        for (index, image) in encoded.enumerated() {
            let decoded = answers[4 * index..<4 * index + 4].map(\.pixels)
            let thumbOfOurs = try #require(decoded[0]), thumbOfTheirs = try #require(decoded[1])
            let blurOfOurs = try #require(decoded[2]), blurOfTheirs = try #require(decoded[3])
            if image.ours.thumb.base64 == image.theirs.thumb { identical.thumb += 1 }
            if image.ours.blur.string == image.theirs.blur { identical.blur += 1 }
            // (a)
            try #require((thumbOfOurs.width, thumbOfOurs.height) == (thumbOfTheirs.width, thumbOfTheirs.height),
                         "\(image.name): ThumbHash \(image.ours.thumb) against the reference's \(image.theirs.thumb)")
            let thumb = thumbOfOurs.difference(from: thumbOfTheirs), blur = blurOfOurs.difference(from: blurOfTheirs)
            #expect(thumb.mean <= 1, "\(image.name): ThumbHash \(image.ours.thumb) vs \(image.theirs.thumb), mean \(thumb.mean)")
            #expect(blur.mean <= 1, "\(image.name): BlurHash \(image.ours.blur) vs \(image.theirs.blur), mean \(blur.mean)")
            // (b)
            expectSameDecode(try ThumbHash(image.theirs.thumb).bitmap(width: thumbOfTheirs.width, height: thumbOfTheirs.height),
                             thumbOfTheirs, "\(image.name): ThumbHash \(image.theirs.thumb)")
            expectSameDecode(try BlurHash(image.theirs.blur).bitmap(width: image.blurSize.width, height: image.blurSize.height),
                             blurOfTheirs, "\(image.name): BlurHash \(image.theirs.blur)")
            print("placeholder reference: \(image.name): ThumbHash \(image.ours.thumb) (reference \(image.theirs.thumb)), (a) \(thumb.mean); BlurHash \(image.ours.blur) (reference \(image.theirs.blur)), (a) \(blur.mean)")
        }
        print("placeholder reference: byte-identical hashes for \(identical.thumb) of \(encoded.count) images (ThumbHash), \(identical.blur) (BlurHash)")
    }

    /// Our hashes of each image's reduction, and the reference's of the same pixels.
    static func encodeWithBoth(_ images: [(String, Bitmap)]) throws -> [Encoded] {
        let reduced = images.map { ($0.0, $0.1.placeholderReduction()) }
        let items = reduced.flatMap { _, image -> [PlaceholderReference.Item] in
            let pixels = PlaceholderReference.Pixels(image)
            return [.thumbHashEncode(pixels), .blurHashEncode(pixels, components: .init(x: 4, y: 3))]
        }
        let answers = try PlaceholderReference.ask(items)
        return try reduced.enumerated().map { index, element -> Encoded in
            let (name, image) = element
            let thumb = try #require(answers[2 * index].hash), blur = try #require(answers[2 * index + 1].hash)
            // BlurHash has no aspect ratio: decoded at the image's own, 32 px on the longer side.
            func side(_ a: Int, _ b: Int) -> Int { max(1, Int((32 * Double(a) / Double(b)).rounded())) }
            let blurSize = image.width >= image.height ? (32, side(image.height, image.width)) : (side(image.width, image.height), 32)
            let ourBlur = try BlurHash(encoding: image)
            return Encoded(name: name, ours: (ThumbHash(encoding: image), ourBlur), theirs: (thumb, blur), blurSize: blurSize)
        }
    }
}
