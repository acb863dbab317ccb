import Foundation
import FuzzSupport
import WebImageCodecs
import WebImageCore

/// The HEIF and AVIF grid path (hostile-input finding 1): the tile census read from the item
/// boxes, then a decode by `AVIFDecoder` and `HEIFDecoder` whatever the brands say, under the
/// fuzzing limits and a tile limit of 64. A decode either throws an ``ImageError`` or returns a
/// container that keeps ``ContainerSanity``'s promises, and never decodes a file whose census is
/// over the limits (the census must refuse first).
func fuzzGrid(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = FuzzInput.data(bytes, count)
    var options = FuzzInput.decodingOptions
    options.maximumTileCount = 64
    let census = data.withUnsafeBytes { ISOBMFFItems.tileCensus($0) }
    for decoder in [AVIFDecoder() as any ImageDecoder, HEIFDecoder()] {
        let container: ImageContainer
        do {
            container = try decoder.decode(data, options: options)
        } catch is ImageError {
            continue
        } catch {
            FuzzInput.finding("a grid decode threw \(type(of: error)), not an ImageError: \(error)")
        }
        if let census, census.largestTileCount > options.maximumTileCount || census.declaredItems > 4096 {
            FuzzInput.finding("a file of \(census.largestTileCount) tiles and \(census.declaredItems) items was decoded past the limits")
        }
        ContainerSanity.check(container, options: options)
    }
    return 0
}
