import Foundation

/// Small PDF documents written byte by byte for the tests: numbered objects, a page tree, and a
/// cross-reference table with each object's true offset (so Poppler reads the file as written,
/// without reconstructing it). Pages are drawn with content-stream operators; the helpers write
/// the common ones.
///
/// ```swift
/// var pdf = PDFBuilder()
/// pdf.addPage(width: 200, height: 100, content: PDFBuilder.rectangle(0, 0, 100, 100, red: 1, green: 0, blue: 0))
/// let bytes = pdf.data()
/// ```
public struct PDFBuilder {
    /// Object bodies, object `n` at index `n - 1`. 1 is the catalog, 2 the page tree.
    private var objects: [Data] = [Data(), Data()]
    private var pages: [Int] = []
    /// More entries of the catalog (`/OpenAction …`).
    public var catalogEntries = ""

    /// Helvetica as `/F1`, the default resources of a page: one of PDF's standard fonts, which
    /// fontconfig finds a metric-compatible system font for.
    public static let helvetica = "/Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >>"

    public init() {}

    /// Adds an object; its number.
    @discardableResult
    public mutating func add(_ body: String) -> Int {
        add(Data(body.utf8))
    }

    /// Adds an object of raw bytes; its number.
    @discardableResult
    public mutating func add(_ body: Data) -> Int {
        objects.append(body)
        return objects.count
    }

    /// Adds a stream object: `dictionary`'s entries, its `/Length`, then `data`; its number.
    @discardableResult
    public mutating func addStream(_ dictionary: String = "", _ data: Data) -> Int {
        add(Data("<< \(dictionary) /Length \(data.count) >>\nstream\n".utf8) + data + Data("\nendstream".utf8))
    }

    /// Adds a page of `width` × `height` points drawn by `content`, with `resources` and more
    /// entries (`/Rotate 90`, `/CropBox […]`, `/Annots […]`); its object number.
    @discardableResult
    public mutating func addPage(width: Double, height: Double, content: String, resources: String = helvetica, entries: String = "") -> Int {
        let contents = addStream("", Data(content.utf8))
        let page = add("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(Self.number(width)) \(Self.number(height))] /Contents \(contents) 0 R /Resources << \(resources) >> \(entries) >>")
        pages.append(page)
        return page
    }

    /// The number of objects so far (the next one added is this plus one).
    public var objectCount: Int { objects.count }

    /// The document: header, objects, cross-reference table, and a trailer with `trailerEntries`
    /// (`/Encrypt …`, `/ID […]`).
    public func data(trailerEntries: String = "") -> Data {
        var objects = objects
        objects[0] = Data("<< /Type /Catalog /Pages 2 0 R \(catalogEntries) >>".utf8)
        objects[1] = Data("<< /Type /Pages /Kids [\(pages.map { "\($0) 0 R" }.joined(separator: " "))] /Count \(pages.count) >>".utf8)
        // A binary comment on the second line, as the specification recommends.
        var output = Data("%PDF-1.7\n%".utf8) + Data([0xE2, 0xE3, 0xCF, 0xD3, 0x0A])
        var offsets: [Int] = []
        for (index, body) in objects.enumerated() {
            offsets.append(output.count)
            output += Data("\(index + 1) 0 obj\n".utf8) + body + Data("\nendobj\n".utf8)
        }
        let crossReference = output.count
        var table = "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets {
            let digits = String(offset)
            table += String(repeating: "0", count: 10 - digits.count) + digits + " 00000 n \n"
        }
        table += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R \(trailerEntries) >>\nstartxref\n\(crossReference)\n%%EOF\n"
        return output + Data(table.utf8)
    }

    /// A filled rectangle in RGB (0…1), in points from the page's bottom-left corner.
    public static func rectangle(_ x: Double, _ y: Double, _ width: Double, _ height: Double, red: Double, green: Double, blue: Double) -> String {
        "\(number(red)) \(number(green)) \(number(blue)) rg \(number(x)) \(number(y)) \(number(width)) \(number(height)) re f\n"
    }

    /// `text` in Helvetica (`/F1`) of `size` points, its baseline starting at (`x`, `y`), in black.
    public static func text(_ text: String, x: Double, y: Double, size: Double) -> String {
        let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "(", with: "\\(").replacingOccurrences(of: ")", with: "\\)")
        return "0 0 0 rg BT /F1 \(number(size)) Tf 1 0 0 1 \(number(x)) \(number(y)) Tm (\(escaped)) Tj ET\n"
    }

    /// `value` as PDF writes a number: no exponent (PDF has none), at most six decimals.
    public static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        var text = String(format: "%.6f", value)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }

    /// A document of one page per size, each filled with one colour of a fixed sequence (red,
    /// green, blue, then greys) and showing its page number.
    public static func pages(_ sizes: [(width: Double, height: Double)]) -> Data {
        var builder = PDFBuilder()
        let colours: [(Double, Double, Double)] = [(1, 0, 0), (0, 1, 0), (0, 0, 1)]
        for (index, size) in sizes.enumerated() {
            let colour = index < colours.count ? colours[index] : (Double(index % 10) / 10, Double(index % 10) / 10, Double(index % 10) / 10)
            builder.addPage(
                width: size.width, height: size.height,
                content: rectangle(0, 0, size.width, size.height, red: colour.0, green: colour.1, blue: colour.2)
                    + text("\(index + 1)", x: 4, y: 4, size: 12))
        }
        return builder.data()
    }
}
