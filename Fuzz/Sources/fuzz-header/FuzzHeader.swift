import Foundation
import FuzzSupport
import WebImageCore

/// Header sniffing (every format the sniffer knows, not only the decodable ones), the decode
/// memory estimate made from a header, and EXIF orientation reading.
func fuzzHeader(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = FuzzInput.data(bytes, count)
    let format = ImageFormat(sniffing: data)
    if let header = ImageHeader(sniffing: data) {
        if format == nil { FuzzInput.finding("a header of \(header.format.rawValue) for bytes whose format does not sniff") }
        if let width = header.pixelWidth, width < 0 { FuzzInput.finding("a negative width \(width)") }
        if let height = header.pixelHeight, height < 0 { FuzzInput.finding("a negative height \(height)") }
        var options = FuzzInput.decodingOptions
        _ = header.estimatedDecodeMemory(options: options)
        options.thumbnail = FuzzInput.thumbnail(for: data)
        _ = header.estimatedDecodeMemory(options: options)
    }
    // Sniffing an array must agree with sniffing `Data`.
    if ImageHeader(sniffing: Array(data)) != ImageHeader(sniffing: data) {
        FuzzInput.finding("sniffing [UInt8] and Data disagree")
    }
    _ = Exif.orientation(inTIFF: data)
    return 0
}
