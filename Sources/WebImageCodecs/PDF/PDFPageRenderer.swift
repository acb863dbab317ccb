// cairo.h is in both CRsvg's and CPoppler's headers; Clang gives its declarations to one of the
// two modules, which one depending on the build, so a file that calls cairo imports both.
import CPoppler
import CRsvg
import WebImageCore

/// Draws one page with poppler-glib into a cairo image surface, the way `pdftocairo -png`
/// draws it: `poppler_page_render` (a display render: Poppler's cairo output device with
/// printing off, annotations drawn as a viewer shows them, pdftocairo's own mode for PNG
/// output; `poppler_page_render_for_printing` would draw only the annotations flagged for
/// print and pick images' filters for a printer), the page's `/Rotate` applied by Poppler
/// itself, under a scale from points to pixels, then, for an opaque page, white painted
/// *under* the drawing (cairo's DEST_OVER), as pdftocairo paints its page background.
enum PDFPageRenderer {
    /// `page` drawn as `drawing` says, on white when `drawsPageBackground`, else on
    /// transparency; straight-alpha RGBA.
    static func render(_ page: PDFPageHandle, drawing: PDFDrawing, drawsPageBackground: Bool) throws -> Bitmap {
        // cairo's image surfaces stop at 32,767 a side.
        guard drawing.width <= 32767, drawing.height <= 32767 else {
            throw ImageError.tooLarge("PDF: a \(drawing.width)×\(drawing.height) canvas is larger than cairo draws")
        }
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(drawing.width), Int32(drawing.height)),
              cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
            throw ImageError.tooLarge("PDF: cairo could not allocate a \(drawing.width)×\(drawing.height) canvas")
        }
        defer { cairo_surface_destroy(surface) }
        guard let context = cairo_create(surface) else { throw ImageError.tooLarge("PDF: cairo could not allocate a context") }
        defer { cairo_destroy(context) }
        cairo_save(context)
        cairo_scale(context, drawing.scaleX, drawing.scaleY)
        poppler_page_render(page.page, context)
        cairo_restore(context)
        if drawsPageBackground {
            cairo_set_operator(context, CAIRO_OPERATOR_DEST_OVER)
            cairo_set_source_rgb(context, 1, 1, 1)
            cairo_paint(context)
        }
        let status = cairo_status(context)
        guard status == CAIRO_STATUS_SUCCESS else {
            let reason = cairo_status_to_string(status).map { String(cString: $0) } ?? "status \(status.rawValue)"
            throw ImageError.corruptData("PDF: cairo stopped drawing the page (\(reason))")
        }
        cairo_surface_flush(surface)
        guard let data = cairo_image_surface_get_data(surface) else { throw ImageError.corruptData("PDF: cairo drew nothing") }
        return try CairoPixels.straightRGBA(from: data, width: drawing.width, height: drawing.height, stride: Int(cairo_image_surface_get_stride(surface)))
    }
}
