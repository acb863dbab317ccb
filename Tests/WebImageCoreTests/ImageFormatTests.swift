import Foundation
import Testing
@testable import WebImageCore

@Suite struct ImageFormatTests {
    @Test func mimeTypesAndFileExtensions() {
        let expected: [ImageFormat: (String, String)] = [
            .jpeg: ("image/jpeg", "jpg"), .png: ("image/png", "png"), .apng: ("image/apng", "png"),
            .gif: ("image/gif", "gif"), .webp: ("image/webp", "webp"), .tiff: ("image/tiff", "tif"),
            .bmp: ("image/bmp", "bmp"), .ico: ("image/x-icon", "ico"), .heic: ("image/heic", "heic"),
            .heif: ("image/heif", "heif"), .avif: ("image/avif", "avif"), .jxl: ("image/jxl", "jxl"),
            .svg: ("image/svg+xml", "svg"), .mp4: ("video/mp4", "mp4"), .mov: ("video/quicktime", "mov"),
            .webm: ("video/webm", "webm"), .mkv: ("video/x-matroska", "mkv"), .pdf: ("application/pdf", "pdf"),
        ]
        #expect(Set(expected.keys) == Set(ImageFormat.allCases))
        for format in ImageFormat.allCases {
            #expect(format.mimeType == expected[format]?.0)
            #expect(format.fileExtension == expected[format]?.1)
        }
    }

    @Test func rawValuesAreStable() {
        // Raw values appear in cache metadata and `webimage info --json`; renaming one is a
        // breaking change.
        #expect(ImageFormat.allCases.map(\.rawValue) ==
            ["jpeg", "png", "apng", "gif", "webp", "tiff", "bmp", "ico", "heic", "heif", "avif", "jxl", "svg",
             "mp4", "mov", "webm", "mkv", "pdf"])
    }

    // MARK: ISO-BMFF: HEIC, HEIF, AVIF

    @Test(arguments: [
        // (major brand, compatible brands, format, animated)
        ("heic", ["mif1", "heic"], ImageFormat.heic, Bool?.none),  // an iPhone photo
        ("heix", ["mif1", "heix"], .heic, nil),                     // 10-bit HEVC
        ("heim", ["mif1", "heim"], .heic, nil),
        ("heis", ["mif1", "heis"], .heic, nil),
        ("mif1", ["mif1", "heic"], .heic, nil),                     // generic major brand, HEVC in the list
        ("hevc", ["msf1", "hevc"], .heic, true),                    // an HEVC image sequence
        ("hevx", ["msf1", "hevx"], .heic, true),
        ("mif1", ["mif1", "miaf"], .heif, nil),                     // HEIF with another codec (JPEG, say)
        ("msf1", ["msf1", "iso8"], .heif, true),
        ("avif", ["avif", "mif1", "miaf", "MA1B"], .avif, nil),     // libavif's still image
        ("mif1", ["mif1", "miaf", "avif"], .avif, nil),             // generic major, AVIF further down the list
        ("avis", ["avif", "avis", "msf1", "miaf"], .avif, true),    // animated AVIF
        ("mif1", ["heic", "avif"], .avif, nil),                     // AVIF wins over HEVC, wherever it is listed
    ] as [(String, [String], ImageFormat, Bool?)])
    func isoBMFFBrands(major: String, compatible: [String], format: ImageFormat, animated: Bool?) {
        let bytes = Bytes.ftyp(major, compatible)
        #expect(ImageFormat(sniffing: bytes) == format)
        #expect(ImageHeader(sniffing: bytes) == .init(format: format, isAnimated: animated))
    }

    @Test(arguments: [
        ("isom", ["isom", "iso2", "avc1", "mp41"], ImageFormat.mp4), // ffmpeg's MP4
        ("mp42", ["mp42", "isom"], .mp4),                            // a phone's MP4
        ("iso5", ["iso5", "dash"], .mp4),                            // a DASH segment's movie header
        ("3gp4", ["3gp4", "isom"], .mp4),                            // 3GPP
        ("qt  ", ["qt  "], .mov),                                    // a QuickTime movie (an iPhone's video)
    ] as [(String, [String], ImageFormat)])
    func moviesAreSniffedByTheirMajorBrand(major: String, compatible: [String], format: ImageFormat) {
        #expect(ImageFormat(sniffing: Bytes.ftyp(major, compatible)) == format)
        #expect(ImageHeader(sniffing: Bytes.ftyp(major, compatible)) == .init(format: format))
    }

    @Test(arguments: [
        ("crx ", ["crx ", "isom"]),                 // a Canon CR3 raw file
        ("M4A ", ["M4A ", "mp42", "isom"]),         // AAC audio
    ])
    func otherISOBMFFFilesAreNotImages(major: String, compatible: [String]) {
        #expect(ImageFormat(sniffing: Bytes.ftyp(major, compatible)) == nil)
    }

    // MARK: Matroska, WebM and PDF

    /// An EBML header with these elements (ID bytes, body), as Matroska muxers write it.
    static func ebml(_ elements: [([UInt8], [UInt8])]) -> [UInt8] {
        let body = elements.flatMap { id, value in id + [0x80 | UInt8(value.count)] + value }
        return [0x1A, 0x45, 0xDF, 0xA3, 0x80 | UInt8(body.count)] + body
    }

    @Test func matroskaAndWebMAreToldByTheirDocType() {
        let version: ([UInt8], [UInt8]) = ([0x42, 0x86], [1])   // EBMLVersion, before the DocType
        let webm = Self.ebml([version, ([0x42, 0x82], Array("webm".utf8)), ([0x42, 0x87], [4])])
        let matroska = Self.ebml([version, ([0x42, 0x82], Array("matroska".utf8))])
        #expect(ImageFormat(sniffing: webm) == .webm)
        #expect(ImageFormat(sniffing: matroska) == .mkv)
        // Cut before the DocType: the family, Matroska. Cut inside the magic: nothing.
        #expect(ImageFormat(sniffing: Array(webm.prefix(8))) == .mkv)
        #expect(ImageFormat(sniffing: Array(webm.prefix(3))) == nil)
        // A DocType element whose size runs past the header is not read past it.
        var lying = webm
        lying[4] = 0x84
        #expect(ImageFormat(sniffing: lying) == .mkv)
    }

    @Test func pdfIsItsSignatureAtTheStart() {
        #expect(ImageFormat(sniffing: Array("%PDF-1.7\n".utf8)) == .pdf)
        #expect(ImageFormat(sniffing: Array("%PDF".utf8)) == nil)
        #expect(ImageFormat(sniffing: Array("%!PS-Adobe-3.0".utf8)) == nil)
        #expect(ImageFormat(sniffing: Array(" %PDF-1.7".utf8)) == nil)
    }

    @Test func isoBMFFBoxSizesOfZeroAndOne() {
        // Size 0: the box runs to the end of the data.
        var toEnd = Bytes.ftyp("mif1", ["mif1", "avif"])
        toEnd.replaceSubrange(0..<4, with: Bytes.be32(0))
        #expect(ImageFormat(sniffing: toEnd) == .avif)
        // Size 1: a 64-bit size follows the type, and the brands move down by 8 bytes.
        let large = Bytes.be32(1) + Bytes.ascii("ftyp") + Bytes.be32(0) + Bytes.be32(28)
            + Bytes.ascii("mif1") + Bytes.be32(0) + Bytes.ascii("heic")
        #expect(ImageFormat(sniffing: large) == .heic)
    }

    @Test func truncatedBrandListSniffsAsTheHEIFFamily() {
        // Cut inside the compatible brands of a `mif1` file: it is a HEIF, but whether an
        // AVIF or HEIC one is in the bytes not yet seen.
        let bytes = Bytes.ftyp("mif1", ["miaf", "avif"])
        #expect(ImageFormat(sniffing: bytes.prefix(20)) == .heif)
        #expect(ImageFormat(sniffing: bytes) == .avif)
        // A major brand that decides alone needs no list.
        #expect(ImageFormat(sniffing: Bytes.ftyp("avif", ["avif"]).prefix(12)) == .avif)
        #expect(ImageFormat(sniffing: Bytes.ftyp("isom", ["mif1"]).prefix(16)) == nil)
    }

    // MARK: JPEG XL

    @Test func jpegXLCodestreamAndContainer() {
        // ISO/IEC 18181-1: a bare codestream starts with FF 0A; the size header follows.
        #expect(ImageFormat(sniffing: [0xFF, 0x0A, 0xFA, 0x7F, 0x4A, 0x18]) == .jxl)
        #expect(ImageFormat(sniffing: [0xFF, 0x0A]) == .jxl)
        // ISO/IEC 18181-2: the container opens with a 12-byte `JXL ` signature box, then `ftyp`.
        let container: [UInt8] = [0x00, 0x00, 0x00, 0x0C] + Bytes.ascii("JXL ") + [0x0D, 0x0A, 0x87, 0x0A]
            + Bytes.be32(20) + Bytes.ascii("ftypjxl ") + Bytes.be32(0) + Bytes.ascii("jxl ")
        #expect(ImageHeader(sniffing: container) == .init(format: .jxl))
        // The signature box with a wrong last byte is nothing.
        var damaged = container
        damaged[11] = 0x0B
        #expect(ImageFormat(sniffing: damaged) == nil)
    }

    // MARK: Signatures shared with other data

    @Test func cursorSniffsAsICO() throws {
        // CUR is ICO with type 2; decoders and browsers treat both alike.
        var cursor = try TestFiles.fixture("hopper-32.ico")
        cursor[2] = 2
        #expect(ImageHeader(sniffing: cursor) == .init(format: .ico, isAnimated: false, pixelWidth: 32, pixelHeight: 32))
        cursor[2] = 3
        #expect(ImageFormat(sniffing: cursor) == nil)
    }

    @Test func shortOrWeakSignaturesNeedTheirCheckBytes() {
        #expect(ImageFormat(sniffing: Bytes.ascii("BMW builds cars, not bitmaps")) == nil)
        #expect(ImageFormat(sniffing: Bytes.ascii("BM")) == nil)
        #expect(ImageFormat(sniffing: [0, 0, 1, 0, 0, 0]) == nil, "an icon directory with no icons")
        #expect(ImageFormat(sniffing: [UInt8](repeating: 0, count: 64)) == nil)
        #expect(ImageFormat(sniffing: Bytes.ascii("GIF90a")) == nil)
        #expect(ImageFormat(sniffing: Bytes.ascii("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ")) == nil, "a WAV file")
        #expect(ImageFormat(sniffing: Bytes.ascii("II*\u{0}")) == .tiff)
        #expect(ImageFormat(sniffing: Bytes.ascii("MM\u{0}*")) == .tiff)
        #expect(ImageFormat(sniffing: Bytes.ascii("II+\u{0}") + [8, 0, 0, 0]) == .tiff, "BigTIFF")
        #expect(ImageFormat(sniffing: Bytes.ascii("MM\u{0}+")) == .tiff, "BigTIFF")
        #expect(ImageFormat(sniffing: [0xFF, 0xD8, 0xFF]) == .jpeg)
        #expect(ImageFormat(sniffing: [0xFF, 0xD8]) == nil, "SOI alone could be anything")
    }

    // MARK: SVG

    static let svgDocuments: [(String, String)] = [
        ("bare root", #"<svg xmlns="http://www.w3.org/2000/svg"/>"#),
        ("root with no attributes", "<svg>\n</svg>"),
        ("self-closing", "<svg/>"),
        ("leading white space", "\n\n  \t\r\n<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>"),
        ("byte-order mark", "\u{FEFF}<svg width=\"10\" height=\"10\"/>"),
        ("XML declaration", #"<?xml version="1.0" encoding="UTF-8"?><svg/>"#),
        ("BOM, declaration and white space", "\u{FEFF}<?xml version=\"1.0\"?>\n\n<svg\n  width=\"1\"/>"),
        ("comment", "<!-- <html> in a comment is not the root --><svg/>"),
        ("stylesheet processing instruction", "<?xml version=\"1.0\"?>\n<?xml-stylesheet href=\"a.css\"?>\n<svg/>"),
        ("DOCTYPE", "<?xml version=\"1.0\"?>\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n<svg/>"),
        ("DOCTYPE with an internal subset", "<?xml version=\"1.0\"?>\n<!-- Generator: an editor -->\n<!DOCTYPE svg [\n<!ENTITY ns_svg \"http://www.w3.org/2000/svg\">\n<!ENTITY st0 \"fill:#fff;\">\n]>\n<svg xmlns=\"&ns_svg;\"/>"),
    ]

    @Test(arguments: svgDocuments)
    func svgVariants(name: String, text: String) {
        #expect(ImageFormat(sniffing: Data(text.utf8)) == .svg, "\(name)")
    }

    static let notSVGDocuments: [(String, String)] = [
        ("HTML with inline SVG", "<!DOCTYPE html>\n<html><body><svg/></body></html>"),
        ("HTML fragment", "<div><svg/></div>"),
        ("other XML", #"<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"/>"#),
        ("XML declaration only", #"<?xml version="1.0"?>"#),
        ("a longer element name", "<svgfoo/>"),
        ("SVG is case-sensitive", "<SVG/>"),
        ("root not yet seen", "<svg"),
        ("unterminated comment", "<!-- <svg/>"),
        ("unterminated declaration", "<?xml version=\"1.0\" <svg/>"),
        ("text before the root", "hello <svg/>"),
        ("JSON", #"{"svg": "<svg/>"}"#),
        ("empty", ""),
        ("white space only", "   \n"),
        ("root past the first 4 KB", "<!--" + String(repeating: "x", count: 5000) + "--><svg/>"),
    ]

    @Test(arguments: notSVGDocuments)
    func textThatIsNotSVG(name: String, text: String) {
        #expect(ImageFormat(sniffing: Data(text.utf8)) == nil, "\(name)")
    }

    // MARK: Input types

    @Test func everyInputTypeGivesTheSameAnswer() throws {
        let data = try TestFiles.fixture("hopper.png")
        let expected = ImageHeader(sniffing: data)
        #expect(expected?.format == .png)
        // A slice of a larger Data, whose indices do not start at 0.
        let padded = Data([1, 2, 3]) + data
        #expect(ImageHeader(sniffing: padded[3...]) == expected)
        #expect(ImageHeader(sniffing: [UInt8](data)) == expected)
        #expect(ImageHeader(sniffing: [UInt8](padded)[3...]) == expected)
        #expect(data.withUnsafeBytes { ImageHeader(sniffing: $0) } == expected)
        #expect(data.withUnsafeBytes { ImageFormat(sniffing: $0) } == .png)
        // DispatchData in two regions: copied once into contiguous storage.
        let split = data.withUnsafeBytes { raw in
            var dispatch = DispatchData(bytes: UnsafeRawBufferPointer(rebasing: raw[..<10]))
            dispatch.append(DispatchData(bytes: UnsafeRawBufferPointer(rebasing: raw[10...])))
            return dispatch
        }
        #expect(split.regions.count == 2)
        #expect(ImageHeader(sniffing: split) == expected)
        #expect(ImageFormat(sniffing: Data()) == nil)
        #expect(ImageHeader(sniffing: [UInt8]()) == nil)
    }
}
