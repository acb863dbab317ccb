import WebImageCore

/// How a page is drawn: the canvas, and the scale of each axis from points to pixels.
///
/// A page's natural size is its size in points, one pixel a point, each side rounded up as
/// `pdftocairo -r 72` rounds it (a 595.28 × 841.89 pt A4 page is 596 × 842 pixels, drawn at
/// exactly one pixel a point: the last column and row are partly covered). A thumbnail is drawn
/// at its own size the same way: one scale for both axes (`pdftocairo -scale-to`'s), each side
/// rounded up; only `.stretch` scales the axes apart. Like an SVG's, a PDF thumbnail may be
/// larger than the page's natural size: a vector page is drawn sharp at any size, within the
/// pixel limit.
struct PDFDrawing: Equatable {
    var width: Int
    var height: Int
    var scaleX: Double
    var scaleY: Double

    /// The longest side of a page, in points, that is drawn: 14,400, the largest page PDF
    /// allows (ISO 32000-1, annex C: 200 inches). Poppler ignores `/UserUnit`, the only way a
    /// valid document states a larger one, so a larger box is a hostile one.
    static let maximumPageSide = 14_400.0

    /// The drawing of a `page`-sized page (points) for `thumbnail` (`nil`: its natural size).
    init(page: (width: Double, height: Double), thumbnail: ImageDecodingOptions.Thumbnail?) {
        let scale: Double
        switch thumbnail {
        case nil:
            scale = 1
        case .maxPixelSize(let side):
            scale = Double(max(side, 1)) / max(page.width, page.height)
        case .size(let boxWidth, let boxHeight, .stretch):
            let width = max(boxWidth, 1), height = max(boxHeight, 1)
            self.init(width: width, height: height, scaleX: Double(width) / page.width, scaleY: Double(height) / page.height)
            return
        case .size(let boxWidth, let boxHeight, let mode):
            let sx = Double(max(boxWidth, 1)) / page.width, sy = Double(max(boxHeight, 1)) / page.height
            scale = mode == .fill ? max(sx, sy) : min(sx, sy)
        }
        self.init(width: Self.pixels(page.width * scale), height: Self.pixels(page.height * scale), scaleX: scale, scaleY: scale)
    }

    init(width: Int, height: Int, scaleX: Double, scaleY: Double) {
        (self.width, self.height, self.scaleX, self.scaleY) = (width, height, scaleX, scaleY)
    }

    /// `length` pixels rounded up, as pdftocairo rounds a side, at least 1. A millionth is
    /// forgiven first, so that a side scaled to exactly 300 in floating point (300.00000000000006)
    /// is not 301. Capped so that a huge box times a tiny page cannot overflow: the limit refuses it.
    static func pixels(_ length: Double) -> Int {
        max(1, Int(min(length - 1e-6, 1e9).rounded(.up)))
    }

    /// Whether the canvas is within `maximumPixelCount` and cairo's 32,767 a side.
    func check(maximumPixelCount: Int) throws {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= maximumPixelCount else {
            throw ImageError.tooLarge("PDF drawing \(width)×\(height) exceeds the limit of \(maximumPixelCount) pixels")
        }
        guard width <= 32767, height <= 32767 else {
            throw ImageError.tooLarge("PDF: a \(width)×\(height) canvas is larger than cairo draws")
        }
    }

    /// Checks a page of `page` points: a positive, finite size (else ``ImageError/corruptData(_:)``),
    /// no side over ``maximumPageSide`` and a natural size within `maximumPixelCount`
    /// (else ``ImageError/tooLarge(_:)``).
    static func checkPage(_ page: (width: Double, height: Double), maximumPixelCount: Int) throws {
        guard page.width.isFinite, page.height.isFinite, page.width > 0, page.height > 0 else {
            throw ImageError.corruptData("PDF: the page's size is \(page.width)×\(page.height) points")
        }
        guard max(page.width, page.height) <= maximumPageSide else {
            throw ImageError.tooLarge("PDF: a \(page.width)×\(page.height) pt page is larger than PDF allows (14,400 pt a side)")
        }
        let natural = PDFDrawing(page: page, thumbnail: nil)
        guard natural.width * natural.height <= maximumPixelCount else {
            throw ImageError.tooLarge("PDF page \(natural.width)×\(natural.height) exceeds the limit of \(maximumPixelCount) pixels")
        }
    }
}
