import Foundation
import FuzzSupport
import WebImageServer

/// The proxy's `/image` query parsing (percent-decoding included) and signature checking. The
/// input is the raw query. Invariants: parsing throws only a ``ProxyError`` and yields sizes
/// within the limits; a random `sig` never validates; and any query the signer signs validates.
/// The same input is also read as a thumbor path (``fuzzThumborPath(_:)``) and as an imgproxy
/// path (``fuzzImgproxyPath(_:)``).
private let signer = URLSigner(key: "fuzzing key")
private let thumborSigner = ThumborSigner(key: "fuzzing key")
private let imgproxySigner = ImgproxySigner(key: "6675a7a96e67206b6579", salt: "73616c74")!
private let shortImgproxySigner = ImgproxySigner(key: "6675a7a96e67206b6579", salt: "73616c74", signatureSize: 4)!
private let imgproxyPresets = ["default": "q:70", "thumb": "rs:fill:100:100/g:no", "loop": "pr:loop"]
private let limits = ImageProxy.Limits()

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
    fuzzImgproxyPath(query)
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

/// imgproxy's URL grammar: parsing throws only a 400 (or imgproxy's 404 for an expired URL) and
/// yields a box and a canvas within the limits; the fuzzer's own first segment never validates
/// as a signature (whole or truncated to 4 bytes); a path the signers sign validates.
private func fuzzImgproxyPath(_ path: String) {
    // A fixed clock, so that an input's outcome does not depend on when it runs.
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    // Local sources allowed or not; a watermark configured when they are, so that `wm` is read
    // through (without one it is refused at once).
    for allowsLocal in [false, true] {
        do {
            let url = try ImgproxyURL(
                path: path[...], presets: imgproxyPresets, limits: limits, allowsLocal: allowsLocal,
                watermark: allowsLocal ? ("fuzz", 0.5) : nil, now: now)
            let (width, height) = url.boxSize
            if let width, !(1...limits.maximumDimension).contains(width) { FuzzInput.finding("an imgproxy width of \(width)") }
            if let height, !(1...limits.maximumDimension).contains(height) { FuzzInput.finding("an imgproxy height of \(height)") }
            if let padding = url.padding, padding.contains(where: { !(0...limits.maximumDimension).contains($0) }) {
                FuzzInput.finding("an imgproxy padding of \(padding)")
            }
        } catch {
            if error.status != 400, !(error.status == 404 && error.message == "the URL has expired") {
                FuzzInput.finding("status \(error.status) for a malformed imgproxy path")
            }
        }
    }
    let parts = path.drop { $0 == "/" }.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
    if parts.count == 2 {
        let rest = "/" + parts[1]
        if imgproxySigner.isValid(signature: String(parts[0]), path: rest) || shortImgproxySigner.isValid(signature: String(parts[0]), path: rest) {
            FuzzInput.finding("an imgproxy path the fuzzer made up carries a valid signature")
        }
    }
    let signedPath = "/" + path
    for signer in [imgproxySigner, shortImgproxySigner] {
        let signed = signer.sign(signedPath)
        // "/" + the signature come before the signed path.
        let signature = String(decoding: signed.utf8.dropFirst().prefix(signed.utf8.count - 1 - signedPath.utf8.count), as: UTF8.self)
        if !signer.isValid(signature: signature, path: signedPath) {
            FuzzInput.finding("a signed imgproxy path does not validate")
        }
    }
}
