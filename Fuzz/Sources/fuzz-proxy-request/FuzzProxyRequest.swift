import Foundation
import FuzzSupport
import WebImageServer

/// The proxy's `/image` query parsing (percent-decoding included) and signature checking. The
/// input is the raw query. Invariants: parsing throws only a ``ProxyError`` and yields sizes
/// within the limits; a random `sig` never validates; and any query the signer signs validates.
/// The same input is also read as a thumbor path (``fuzzThumborPath(_:)``).
private let signer = URLSigner(key: "fuzzing key")
private let thumborSigner = ThumborSigner(key: "fuzzing key")
private let limits = ProxyRequest.Limits()

func fuzzProxyRequest(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let query = String(decoding: FuzzInput.data(bytes, count), as: UTF8.self)
    for allowsLocal in [false, true] {
        do {
            let request = try ProxyRequest(query: query, limits: limits, allowsLocal: allowsLocal)
            if let width = request.pixelWidth, !(1...limits.maximumDimension).contains(width) {
                FuzzInput.finding("a pixel width of \(width)")
            }
            if let height = request.pixelHeight, !(1...limits.maximumDimension).contains(height) {
                FuzzInput.finding("a pixel height of \(height)")
            }
            if !(0...limits.maximumBlur * limits.maximumDPR).contains(request.pixelBlur) {
                FuzzInput.finding("a blur of \(request.pixelBlur)")
            }
        } catch {
            // Typed throws: a ProxyError, whose status must be a client error.
            if error.status != 400 { FuzzInput.finding("status \(error.status) for a malformed query") }
        }
    }
    if signer.isValid(path: "/image", query: query) {
        FuzzInput.finding("a query the fuzzer made up carries a valid signature")
    }
    // Signing the query (without a `sig` of its own) and checking it again must succeed.
    let items = query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false)
    if !query.isEmpty, !items.contains(where: { $0.starts(with: (URLSigner.parameter + "=").utf8) }) {
        let signed = signer.sign("/image?" + query)
        // Dropped as bytes: "?" and a combining mark after it are one Character.
        let signedQuery = String(decoding: signed.utf8.dropFirst("/image?".utf8.count), as: UTF8.self)
        if !signer.isValid(path: "/image", query: signedQuery) {
            FuzzInput.finding("a signed query does not validate")
        }
    }
    fuzzThumborPath(query)
    return 0
}

/// thumbor's URL grammar: parsing throws only a 400 and yields a box within the limits; the
/// fuzzer's own first segment never validates as a signature; a path the signer signs validates.
private func fuzzThumborPath(_ path: String) {
    for allowsLocal in [false, true] {
        do {
            let url = try ThumborURL(path: path[...], limits: limits, allowsLocal: allowsLocal)
            let (width, height) = url.boxSize
            if let width, !(1...limits.maximumDimension).contains(width) { FuzzInput.finding("a thumbor width of \(width)") }
            if let height, !(1...limits.maximumDimension).contains(height) { FuzzInput.finding("a thumbor height of \(height)") }
        } catch {
            if error.status != 400 { FuzzInput.finding("status \(error.status) for a malformed thumbor path") }
        }
    }
    let parts = path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
    if parts.count == 2, thumborSigner.isValid(signature: String(parts[0]), signed: String(parts[1])) {
        FuzzInput.finding("a thumbor path the fuzzer made up carries a valid signature")
    }
    let signed = thumborSigner.sign(path)
    // "/" + 28 characters + "/" come before the signed part.
    let signature = String(decoding: signed.utf8.dropFirst().prefix(28), as: UTF8.self)
    if !thumborSigner.isValid(signature: signature, signed: path) {
        FuzzInput.finding("a signed thumbor path does not validate")
    }
}
