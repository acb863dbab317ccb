// cairo.h is in both CRsvg's and CPoppler's headers; Clang gives its declarations to one of the
// two modules, which one depending on the build, so a file that calls cairo imports both.
import CPoppler
import CRsvg
import Foundation
import WebImageCore

/// Rasterizes SVG with librsvg (drawn by cairo) at the size asked for.
///
/// - **Size**: the document's intrinsic size in CSS pixels (96 per inch): its `width` and
///   `height`, else its `viewBox`, else 300 × 150, a browser's size for an image that states
///   none. That size is checked against ``ImageDecodingOptions/maximumPixelCount`` before
///   anything is drawn, and with a ``ImageDecodingOptions/thumbnail`` the drawing is made at
///   the thumbnail's size directly (a 256 px thumbnail is drawn at 256 px, never drawn large
///   and shrunk). Unlike a raster format's, an SVG thumbnail may be larger than the document's
///   intrinsic size: a vector drawing is drawn sharp at any size (a 24 px icon asked for at
///   96 px is drawn at 96 px), within the same pixel limit.
/// - **Nothing outside the file is read**: the document has no base URL, and librsvg resolves
///   no reference without one, so `<image href="file:///…">`, `xi:include`, external
///   stylesheets and remote URLs load nothing (`data:` URLs inside the file still work).
///   libxml2 parses without network access and with its entity-expansion limits on, so an
///   entity bomb fails with ``ImageError/corruptData(_:)``.
/// - **Embedded images** (`data:` URLs) are checked against the pixel limit from their headers
///   before anything is drawn. **Time**: a render in this process cannot be stopped; documents
///   from anyone are drawn in a child process that can (``DocumentRenderer/childProcess(_:)``, as
///   `webimage serve --allow-svg` does).
/// - The pixels are sRGB, straight alpha, as SVG's colours are.
///
/// ```swift
/// var options = ImageDecodingOptions()
/// options.thumbnail = .maxPixelSize(256)   // drawn at 256 px
/// let icon = try SVGDecoder().decode(bytes, options: options)
/// ```
public struct SVGDecoder: ImageDecoder {
    /// The size of a document that states none, as browsers draw one: 300 × 150.
    package static let defaultSize = (width: 300, height: 150)

    /// Where documents are drawn.
    public typealias Renderer = DocumentRenderer

    /// Where documents are drawn. Default: ``DocumentRenderer/inProcess``, bounded by the pixel
    /// limit and the embedded images' check but not in time (librsvg 2.54 cannot be
    /// interrupted): for documents you trust.
    public var renderer: Renderer

    /// A decoder that draws in this process.
    public init() {
        renderer = .inProcess
    }

    /// A decoder that draws with `renderer`.
    public init(renderer: Renderer) {
        self.renderer = renderer
    }

    public var formats: Set<ImageFormat> { [.svg] }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws -> ImageContainer {
        let handle = try Self.parse(data)
        defer { g_object_unref(UnsafeMutableRawPointer(handle)) }

        let size = try Self.intrinsicSize(of: handle)
        let (pixels, overflow) = size.width.multipliedReportingOverflow(by: size.height)
        guard !overflow, pixels <= options.maximumPixelCount else {
            throw ImageError.tooLarge("SVG canvas \(size.width)×\(size.height) exceeds the limit of \(options.maximumPixelCount) pixels")
        }
        let output = options.thumbnail.map { Self.drawingSize(of: size, for: $0) } ?? size
        guard output.width.multipliedReportingOverflow(by: output.height).partialValue <= options.maximumPixelCount else {
            throw ImageError.tooLarge("SVG drawing \(output.width)×\(output.height) exceeds the limit of \(options.maximumPixelCount) pixels")
        }
        try SVGEmbeddedImages.check(data, maximumPixelCount: options.maximumPixelCount)
        let image: Bitmap
        switch renderer {
        case .inProcess:
            image = try Self.render(handle, width: output.width, height: output.height)
        case .childProcess(let process):
            guard output.width <= 32767, output.height <= 32767 else {
                throw ImageError.tooLarge("SVG: a \(output.width)×\(output.height) canvas is larger than cairo draws")
            }
            image = try process.render(data, format: .svg, width: output.width, height: output.height)
        }
        return ImageContainer(image: image, format: .svg)
    }

    /// The document parsed by librsvg (nothing drawn yet), at 96 dots per inch.
    static func parse(_ data: Data) throws -> OpaquePointer {
        let handle = try data.withUnsafeBytes { bytes -> OpaquePointer in
            var error: UnsafeMutablePointer<GError>?
            let handle = rsvg_handle_new_from_data(bytes.baseAddress?.assumingMemoryBound(to: guint8.self), gsize(bytes.count), &error)
            guard let handle else { throw Self.error(error, doing: "parsing the document") }
            return OpaquePointer(handle)
        }
        rsvg_handle_set_dpi(Self.rsvg(handle), 96)
        return handle
    }

    /// `data` drawn in this process into a `width` × `height` canvas: the renderer child's work.
    static func drawInProcess(_ data: Data, width: Int, height: Int) throws -> Bitmap {
        let handle = try parse(data)
        defer { g_object_unref(UnsafeMutableRawPointer(handle)) }
        return try render(handle, width: width, height: height)
    }

    /// The size a thumbnail is drawn at: `thumbnail`'s box applied to `size`, larger or smaller
    /// (a `.fill` covers the box; the registry then crops it to the box).
    static func drawingSize(of size: (width: Int, height: Int), for thumbnail: ImageDecodingOptions.Thumbnail) -> (width: Int, height: Int) {
        let width = Double(size.width), height = Double(size.height)
        let scale: Double
        switch thumbnail {
        case .maxPixelSize(let side):
            scale = Double(max(side, 1)) / max(width, height)
        case .size(let boxWidth, let boxHeight, .stretch):
            return (max(boxWidth, 1), max(boxHeight, 1))
        case .size(let boxWidth, let boxHeight, let mode):
            let sx = Double(max(boxWidth, 1)) / width, sy = Double(max(boxHeight, 1)) / height
            scale = mode == .fill ? max(sx, sy) : min(sx, sy)
        }
        // Capped so that a huge box times a tiny document cannot overflow: the limit refuses it.
        return (max(1, Int(min(width * scale, 1e9).rounded())), max(1, Int(min(height * scale, 1e9).rounded())))
    }

    private static func rsvg(_ handle: OpaquePointer) -> UnsafeMutablePointer<RsvgHandle> {
        UnsafeMutablePointer(handle)
    }

    /// The document's size in whole CSS pixels (see the type's documentation).
    static func intrinsicSize(of handle: OpaquePointer) throws -> (width: Int, height: Int) {
        var width = 0.0, height = 0.0
        if rsvg_handle_get_intrinsic_size_in_pixels(rsvg(handle), &width, &height) == 0 {
            var hasWidth: gboolean = 0, hasHeight: gboolean = 0, hasViewBox: gboolean = 0
            var lengthWidth = RsvgLength(), lengthHeight = RsvgLength(), viewBox = RsvgRectangle()
            rsvg_handle_get_intrinsic_dimensions(rsvg(handle), &hasWidth, &lengthWidth, &hasHeight, &lengthHeight, &hasViewBox, &viewBox)
            if hasViewBox != 0 {
                (width, height) = (viewBox.width, viewBox.height)
            } else {
                (width, height) = (Double(defaultSize.width), Double(defaultSize.height))
            }
        }
        // Sizes past a billion pixels a side only ever mean "too large": refused by the limit.
        guard width.isFinite, height.isFinite, width > 0, height > 0 else {
            throw ImageError.corruptData("SVG: the document's size is \(width)×\(height)")
        }
        return (Int(min(width, 1e9).rounded(.up)), Int(min(height, 1e9).rounded(.up)))
    }

    /// Draws the document into a `width` × `height` canvas (its `preserveAspectRatio` decides
    /// the placement) and returns straight-alpha RGBA.
    static func render(_ handle: OpaquePointer, width: Int, height: Int) throws -> Bitmap {
        // cairo's image surfaces stop at 32,767 a side.
        guard width <= 32767, height <= 32767 else {
            throw ImageError.tooLarge("SVG: a \(width)×\(height) canvas is larger than cairo draws")
        }
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height)),
              cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
            throw ImageError.tooLarge("SVG: cairo could not allocate a \(width)×\(height) canvas")
        }
        defer { cairo_surface_destroy(surface) }
        guard let context = cairo_create(surface) else { throw ImageError.tooLarge("SVG: cairo could not allocate a context") }
        defer { cairo_destroy(context) }
        var viewport = RsvgRectangle(x: 0, y: 0, width: Double(width), height: Double(height))
        var error: UnsafeMutablePointer<GError>?
        guard rsvg_handle_render_document(rsvg(handle), context, &viewport, &error) != 0 else {
            throw Self.error(error, doing: "drawing the document")
        }
        cairo_surface_flush(surface)
        guard let data = cairo_image_surface_get_data(surface) else { throw ImageError.corruptData("SVG: cairo drew nothing") }
        return try CairoPixels.straightRGBA(from: data, width: width, height: height, stride: Int(cairo_image_surface_get_stride(surface)))
    }

    /// A librsvg failure as ``ImageError/corruptData(_:)`` (its messages name the XML error,
    /// the entity limit, or the reference limit that stopped it).
    static func error(_ error: UnsafeMutablePointer<GError>?, doing: String) -> ImageError {
        defer { if let error { g_error_free(error) } }
        let reason = error.flatMap { $0.pointee.message.map { LibraryMessage.oneLine(String(cString: $0)) } } ?? "unknown error"
        return .corruptData("SVG: \(reason) (\(doing))")
    }
}
