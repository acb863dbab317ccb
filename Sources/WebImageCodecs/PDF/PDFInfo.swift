import Foundation
import WebImageCore

/// What `webimage info` says of a PDF: its page count and the size of the page asked for.
package struct PDFInfo: Sendable, Hashable {
    /// The document's number of pages.
    package var pageCount: Int
    /// The page described, counting from 1.
    package var page: Int
    /// The page's width and height in points as it is shown (its crop box, turned by its
    /// `/Rotate`): its natural size in pixels, rounded up.
    package var width: Double
    package var height: Double
}

extension PDFDecoder {
    /// The page count of `data` and the size of its page ``ImageDecodingOptions/page``, read
    /// without drawing anything.
    ///
    /// - Throws: what ``decode(_:options:)`` throws for the document and the page (a page the
    ///   document does not have, a page count over ``ImageDecodingOptions/maximumPageCount``,
    ///   an encrypted document); the page's size is not checked against the pixel limit.
    package static func probe(_ data: Data, options: ImageDecodingOptions) throws -> PDFInfo {
        let document = try PDFDocumentHandle(data)
        let page = try document.page(options.page, maximumPageCount: options.maximumPageCount)
        let size = page.size
        return PDFInfo(pageCount: document.pageCount, page: options.page, width: size.width, height: size.height)
    }
}
