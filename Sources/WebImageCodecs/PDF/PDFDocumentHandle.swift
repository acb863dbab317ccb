import CPoppler
import Foundation
import WebImageCore

/// A PDF document opened by poppler-glib from bytes, and released with it: the document and
/// its pages are GObjects, unreferenced on every path by `deinit`.
///
/// The document is opened from a copy of the bytes (`poppler_document_new_from_bytes`): it has
/// no file name, so no relative reference resolves against a folder, and Poppler fetches and
/// launches nothing while it parses or draws (links, `/Launch`, `/GoToR` and `/URI` actions are
/// a viewer's to follow on a click; external streams are not read). Fonts a document does not
/// embed are found among the system's fonts by fontconfig, as for any Poppler program.
final class PDFDocumentHandle {
    private let document: OpaquePointer

    /// Opens `data` with no password.
    ///
    /// - Throws: ``ImageError/unsupportedFormat(_:)`` for a document that needs a password, or
    ///   when poppler-glib is not installed, ``ImageError/corruptData(_:)`` for one Poppler
    ///   cannot read.
    init(_ data: Data) throws {
        try LazyLibrary.poppler.load()
        let bytes = data.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(bytes) }
        var error: UnsafeMutablePointer<GError>?
        guard let document = poppler_document_new_from_bytes(bytes, nil, &error) else {
            throw Self.error(error, doing: "opening the document")
        }
        self.document = document
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(document))
    }

    /// The number of pages.
    var pageCount: Int {
        Int(poppler_document_get_n_pages(document))
    }

    /// Page `number` (counting from 1) of a document of at most `maximumPageCount` pages.
    ///
    /// - Throws: ``ImageError/tooLarge(_:)`` past the page limit, ``ImageError/corruptData(_:)``
    ///   for a page the document does not have.
    func page(_ number: Int, maximumPageCount: Int) throws -> PDFPageHandle {
        let count = pageCount
        guard count <= maximumPageCount else {
            throw ImageError.tooLarge("PDF: \(count) pages exceed the limit of \(maximumPageCount)")
        }
        guard count > 0 else { throw ImageError.corruptData("PDF: the document has no page") }
        guard number >= 1, number <= count else {
            throw ImageError.corruptData("PDF: no page \(number) (the document has \(count) page\(count == 1 ? "" : "s"))")
        }
        guard let page = poppler_document_get_page(document, Int32(number - 1)) else {
            throw ImageError.corruptData("PDF: page \(number) cannot be read")
        }
        return PDFPageHandle(page)
    }

    /// A Poppler error as an ``ImageError``: a document that needs a password is
    /// ``ImageError/unsupportedFormat(_:)`` (no password is ever tried), anything else
    /// ``ImageError/corruptData(_:)``. Frees `error`.
    static func error(_ error: UnsafeMutablePointer<GError>?, doing: String) -> ImageError {
        defer { if let error { g_error_free(error) } }
        let reason = error.flatMap { $0.pointee.message.map { LibraryMessage.oneLine(String(cString: $0)) } } ?? "unknown error"
        if let error, error.pointee.domain == poppler_error_quark(), error.pointee.code == Int32(POPPLER_ERROR_ENCRYPTED.rawValue) {
            return .unsupportedFormat("PDF: encrypted, and a password is needed to open it (\(reason))")
        }
        return .corruptData("PDF: \(reason) (\(doing))")
    }
}

/// One page of a ``PDFDocumentHandle``, unreferenced by `deinit`. It keeps its document alive
/// (Poppler's page holds a reference).
final class PDFPageHandle {
    let page: OpaquePointer

    init(_ page: OpaquePointer) {
        self.page = page
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(page))
    }

    /// The page's size in points as it is shown: its crop box (its media box when it has none),
    /// width and height swapped when its `/Rotate` is 90 or 270.
    var size: (width: Double, height: Double) {
        var width = 0.0, height = 0.0
        poppler_page_get_size(page, &width, &height)
        return (width, height)
    }
}
