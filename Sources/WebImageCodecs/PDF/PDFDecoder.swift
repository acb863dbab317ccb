import Foundation
import WebImageCore

/// Rasterizes a page of a PDF document with Poppler (poppler-glib, drawn by cairo) at the size
/// asked for.
///
/// - **Page**: ``ImageDecodingOptions/page``, counting from 1 (the first by default); a page
///   the document does not have is ``ImageError/corruptData(_:)``.
/// - **Size**: a page's natural size is its size in points, one pixel a point, as
///   `pdftocairo -r 72` draws it: its crop box (what a viewer shows; its media box when it has
///   none), turned by its `/Rotate`, each side rounded up. With a
///   ``ImageDecodingOptions/thumbnail`` the page is drawn at the thumbnail's size directly (a
///   256 px thumbnail of a poster is drawn at 256 px, never drawn large and shrunk), one scale
///   for both axes as `pdftocairo -scale-to` draws it. Like an SVG's, a PDF thumbnail may be
///   larger than the page's natural size: a vector page is drawn sharp at any size, within
///   the pixel limit.
/// - **Background**: white, as a PDF page is printed and as pdftocairo draws it, unless
///   ``ImageDecodingOptions/drawsPageBackground`` is off: then what the page does not paint is
///   transparent.
/// - **Limits**, checked before anything is drawn: the page count
///   (``ImageDecodingOptions/maximumPageCount``), a page side of at most 14,400 points (the
///   largest page PDF allows), and the page's natural size and the drawing's size within
///   ``ImageDecodingOptions/maximumPixelCount`` (all ``ImageError/tooLarge(_:)``). **Time and
///   embedded images**: a render in this process cannot be stopped (Poppler's GLib interface
///   has no way to interrupt one), and Poppler decodes each image a page draws at the image's
///   own size, which it shows no one beforehand (an 800-byte document can ask for a
///   30,000 × 30,000 image: 3.6 GB). Documents from anyone are drawn in a child process
///   (``DocumentRenderer/childProcess(_:)``, as `webimage serve --allow-pdf` and every `webimage`
///   command do), which is killed past its time limit and whose address-space limit leaves
///   such an image out.
/// - **Encrypted documents** that need a password are ``ImageError/unsupportedFormat(_:)``: no
///   password is ever tried. (A document encrypted with an empty user password, which any
///   viewer opens, is drawn.)
/// - **Nothing outside the bytes is read**: the document is opened from memory, with no file
///   name or base URL; Poppler follows no link and no action (`/URI`, `/Launch`, `/GoToR` are a
///   viewer's to follow on a click), launches nothing and fetches nothing, and reads no
///   external stream. Fonts the document does not embed are taken from the system's fonts
///   through fontconfig, as by every Poppler program.
/// - The pixels are sRGB (Poppler's display colour space), straight alpha, as pdftocairo's PNG
///   output is.
///
/// ```swift
/// var options = ImageDecodingOptions()
/// options.page = 2
/// options.thumbnail = .maxPixelSize(256)   // drawn at 256 px
/// let preview = try PDFDecoder().decode(bytes, options: options)
/// ```
public struct PDFDecoder: ImageDecoder {
    /// Where pages are drawn.
    public typealias Renderer = DocumentRenderer

    /// Where pages are drawn. Default: ``DocumentRenderer/inProcess``, which bounds a render by
    /// the page and pixel limits but neither in time (Poppler's GLib interface cannot interrupt
    /// a render) nor in the memory of the images a page embeds: for documents you trust.
    /// ``DocumentRenderer/childProcess(_:)``, with `webimage render-pdf` as the child, for
    /// documents from anyone.
    public var renderer: Renderer

    /// A decoder that draws in this process.
    public init() {
        renderer = .inProcess
    }

    /// A decoder that draws with `renderer`.
    public init(renderer: Renderer) {
        self.renderer = renderer
    }

    public var formats: Set<ImageFormat> { [.pdf] }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        let page = try PDFDocumentHandle(data).page(options.page, maximumPageCount: options.maximumPageCount)
        let size = page.size
        try PDFDrawing.checkPage(size, maximumPixelCount: options.maximumPixelCount)
        let drawing = PDFDrawing(page: size, thumbnail: options.thumbnail)
        try drawing.check(maximumPixelCount: options.maximumPixelCount)
        let image: Bitmap
        switch renderer {
        case .inProcess:
            image = try PDFPageRenderer.render(page, drawing: drawing, drawsPageBackground: options.drawsPageBackground)
        case .childProcess(let process):
            // The child opens the document again and draws what this process worked out.
            let arguments = [String(options.page), options.drawsPageBackground ? "1" : "0", "\(drawing.scaleX)", "\(drawing.scaleY)"]
            image = try process.render(data, format: .pdf, width: drawing.width, height: drawing.height, extraArguments: arguments)
        }
        return ImageContainer(image: image, format: .pdf)
    }

    /// Page `page` of `data` drawn in this process as `drawing` says: the renderer child's work
    /// (its parent checked the limits; the canvas is checked against cairo's again).
    static func drawInProcess(_ data: Data, page number: Int, drawing: PDFDrawing, drawsPageBackground: Bool) throws -> Bitmap {
        let document = try PDFDocumentHandle(data)
        let page = try document.page(number, maximumPageCount: .max)
        return try PDFPageRenderer.render(page, drawing: drawing, drawsPageBackground: drawsPageBackground)
    }
}
