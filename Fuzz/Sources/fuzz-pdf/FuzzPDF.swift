import Foundation
import FuzzSupport
import WebImageCodecs
import WebImageCore

/// PDF documents through `PDFDecoder`, a page drawn in this process at a thumbnail size under the
/// fuzzing limits (one megapixel): either an ``ImageError`` or a container that keeps
/// ``ContainerSanity``'s promises. The page and the background follow the input's length (page 2
/// for a third of the lengths, so that the page tree's other pages are reached too; a document's
/// first bytes are always `%PDF-`). The time a render takes is libFuzzer's to judge
/// (`-timeout`): a document that draws for longer (forms that each draw the next twice) is a
/// finding of Poppler's cost, which the proxy bounds by drawing in a child process. So are the
/// images a page embeds, which Poppler decodes at their own size: scripts/fuzz.sh runs this
/// target with ASan's allocations over 256 MB returning NULL, as the child's address-space limit
/// makes them.
func fuzzPDF(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = FuzzInput.data(bytes, count)
    var options = FuzzInput.decodingOptions
    options.thumbnail = .maxPixelSize(64)
    options.page = data.count % 3 == 2 ? 2 : 1
    options.drawsPageBackground = data.count % 2 == 0
    let container: ImageContainer
    do {
        container = try PDFDecoder().decode(data, options: options)
    } catch is ImageError {
        return 0
    } catch {
        FuzzInput.finding("a PDF decode threw \(type(of: error)), not an ImageError: \(error)")
    }
    ContainerSanity.check(container, options: options)
    return 0
}
