import Foundation
import WebImage
import WebImageCore

/// One thumbor URL (thumbor 7's grammar), parsed into the shared ``RenderRecipe``.
///
/// `/SIGNATURE/[meta/][AxB:CxD/][fit-in/|adaptive-fit-in/|full-fit-in/|adaptive-full-fit-in/][-][W]x[-][H]/][left|center|right/][top|middle|bottom/][smart/][filters:name(args):…/]IMAGE`,
/// where SIGNATURE is `unsafe` or thumbor's HMAC (``ThumborSigner``) of everything after it.
/// The options must come in this order, as in thumbor: an option out of place is taken as the
/// start of the image. IMAGE is an `http`/`https` URL (percent-encoded or not), a URL without
/// its scheme (`http://` is assumed, as thumbor's HTTP loader does), or, when the proxy serves
/// an origin folder, a path inside it (thumbor's file loader).
package struct ThumborURL: Sendable {
    enum Signature: Sendable, Hashable {
        case unsafe
        case hash(String)
    }

    var signature: Signature
    /// What the signature covers: the path after `/SIGNATURE/`, as sent.
    var signed: String
    /// `meta/`: thumbor's JSON description instead of the image.
    var isMeta = false
    var isSmart = false
    var recipe: RenderRecipe
    /// `max_age(seconds)`: the response's own `Cache-Control` lifetime.
    var maxAge: Int?
    /// IMAGE as the URL gives it (what `meta/` reports as the source's `url`).
    var image = ""

    /// The box's width and height in output pixels (`nil` for a free or `orig` side): for the
    /// fuzz target, which checks them against the limits.
    package var boxSize: (width: Int?, height: Int?) { (recipe.width, recipe.height) }

    /// Parses `path`, the request's path under the thumbor prefix (`/unsafe/300x200/…`), still
    /// percent-encoded.
    ///
    /// - Throws: ``ProxyError`` 400 naming what is wrong (an unsupported option or filter among them).
    package init(path: Substring, limits: ImageProxy.Limits, allowsLocal: Bool) throws(ProxyError) {
        let parts = path.drop { $0 == "/" }.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw .badRequest("a thumbor URL is /unsafe/… or /SIGNATURE/…")
        }
        signature = parts[0] == "unsafe" ? .unsafe : .hash(PercentDecoding.string(parts[0]) ?? String(parts[0]))
        signed = String(parts[1])
        var cursor = Cursor(rest: parts[1])
        recipe = RenderRecipe(source: .local(""))
        recipe.dialect = "thumbor"
        // thumbor's default: fill the box (cropping the overflow), enlarging if need be.
        recipe.box = .fill
        recipe.upscale = true
        try parseOptions(&cursor, limits: limits, allowsLocal: allowsLocal)
        guard !cursor.rest.isEmpty else { throw .badRequest("the image is missing") }
        var image = cursor.rest
        for _ in 0..<focalExtractions {
            guard let (inner, edges) = ThumborFocalExtraction.extract(image) else { break }
            image = inner
            // A region that is empty (or inside out) is ignored, as focal() ignores it.
            guard edges[2] > edges[0], edges[3] > edges[1] else { continue }
            guard recipe.focalRegions.count < 16 else { throw .badRequest("at most 16 focal() regions") }
            recipe.focalRegions.append(.init(x: edges[0], y: edges[1], width: edges[2] - edges[0], height: edges[3] - edges[1]))
        }
        self.image = String(image)
        recipe.source = try Self.source(image, allowsLocal: allowsLocal)
    }

    /// How many `extract_focal()` the filters hold: each reads the image as an inner thumbor URL
    /// (``ThumborFocalExtraction``) once the image is known.
    private var focalExtractions = 0

    /// The options before the filters and the image, in thumbor's order.
    private mutating func parseOptions(_ cursor: inout Cursor, limits: ImageProxy.Limits, allowsLocal: Bool) throws(ProxyError) {
        if cursor.take({ $0 == "meta" }) != nil { isMeta = true }
        if let trim = cursor.take({ $0 == "trim" || $0.hasPrefix("trim:") }) {
            recipe.trim = try Self.trim(trim)
        }
        if let segment = cursor.take({ Self.numbers($0, "x:x") != nil }) {
            try crop(Self.numbers(segment, "x:x")!)
        }
        if let mode = cursor.take({ Self.fitModes[String($0)] != nil }) {
            let (box, adaptive) = Self.fitModes[String(mode)]!
            recipe.box = box
            recipe.adaptive = adaptive
            // thumbor enlarges to fill a box, and for full-fit-in, but not to fit inside one.
            recipe.upscale = box == .cover
        }
        if let size = cursor.take({ Self.isSize($0) }) {
            try self.size(size, maximum: limits.maximumDimension)
        }
        if let h = cursor.take({ Self.horizontal[String($0)] != nil }) { recipe.alignment.horizontal = Self.horizontal[String(h)]! }
        if let v = cursor.take({ Self.vertical[String($0)] != nil }) { recipe.alignment.vertical = Self.vertical[String(v)]! }
        if cursor.take({ $0 == "smart" }) != nil {
            isSmart = true
            recipe.isSmart = true
        }
        if cursor.rest.hasPrefix("filters:") {
            // As thumbor reads it: up to the first ")/", so that arguments may hold "/".
            guard let end = cursor.rest.firstRange(of: ")/") else { throw .badRequest("filters must be followed by the image") }
            let raw = cursor.rest[cursor.rest.index(cursor.rest.startIndex, offsetBy: 8)..<cursor.rest.index(after: end.lowerBound)]
            // Decoded once, as thumbor's router decodes the path before its filters read it
            // (clients send curve()'s brackets as %5B and %5D); a malformed escape stays as sent.
            let list = PercentDecoding.string(raw).map { Substring($0) } ?? raw
            for call in try ThumborFilters.calls(list) {
                if call.name == "extract_focal" {
                    guard call.arguments.isEmpty else { throw .badRequest("extract_focal() takes no argument") }
                    focalExtractions += 1
                    continue
                }
                try ThumborFilters.apply(call, to: &recipe, maxAge: &maxAge, limits: limits, allowsLocal: allowsLocal)
            }
            cursor.rest = cursor.rest[end.upperBound...]
        }
    }

    /// `AxB:CxD`: the left, top, right and bottom edges in source pixels; all zero is no crop.
    private mutating func crop(_ edges: [Int]) throws(ProxyError) {
        let (left, top, right, bottom) = (edges[0], edges[1], edges[2], edges[3])
        guard edges.contains(where: { $0 != 0 }) else { return }
        guard right > left, bottom > top else { throw .badRequest("the crop's right and bottom must be past its left and top") }
        recipe.crop = .init(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// `[-][W]x[-][H]`: `-` flips, `0` or nothing follows the other side, `orig` is the source's own.
    private mutating func size(_ segment: Substring, maximum: Int) throws(ProxyError) {
        let sides = segment.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        func side(_ text: Substring, _ name: String) throws(ProxyError) -> (flip: Bool, value: Int?, original: Bool) {
            let flip = text.first == "-"
            let body = flip ? text.dropFirst() : text
            if body == "orig" { return (flip, nil, true) }
            guard let value = body.isEmpty ? 0 : Int(body), value <= maximum else {
                throw .badRequest("the \(name) must be an integer from 0 to \(maximum) or orig")
            }
            return (flip, value == 0 ? nil : value, false)
        }
        let width = try side(sides[0], "width"), height = try side(sides[1], "height")
        recipe.flipHorizontal = width.flip
        recipe.flipVertical = height.flip
        recipe.width = width.value
        recipe.height = height.value
        recipe.widthIsOriginal = width.original
        recipe.heightIsOriginal = height.original
    }

    static let fitModes: [String: (RenderRecipe.Box, Bool)] = [
        "fit-in": (.fit, false), "adaptive-fit-in": (.fit, true),
        "full-fit-in": (.cover, false), "adaptive-full-fit-in": (.cover, true),
    ]
    static let horizontal = ["left": 0, "center": 1, "right": 2]
    static let vertical = ["top": 0, "middle": 1, "bottom": 2]

    /// Whether `segment` is `[-](digits|orig)?x[-](digits|orig)?`.
    static func isSize(_ segment: Substring) -> Bool {
        let sides = segment.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        guard sides.count == 2 else { return false }
        return sides.allSatisfy { side in
            let body = side.first == "-" ? side.dropFirst() : side
            return body == "orig" || (body.count <= 9 && body.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        }
    }

    /// The numbers of `segment` when it is digits separated exactly by `separators` in order
    /// (`"x:x"` reads `10x20:30x40`), else `nil`.
    /// `trim[:top-left|:bottom-right][:tolerance]`: the tolerance a Euclidean RGB distance, 0 to 442.
    static func trim(_ segment: Substring) throws(ProxyError) -> RenderRecipe.Trim {
        var trim = RenderRecipe.Trim()
        var parts = segment.split(separator: ":", omittingEmptySubsequences: false).dropFirst()
        if let corner = parts.first, corner == "top-left" || corner == "bottom-right" {
            trim.reference = corner == "top-left" ? .topLeft : .bottomRight
            parts = parts.dropFirst()
        }
        if let tolerance = parts.first {
            guard parts.count == 1, tolerance.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  tolerance.count <= 3, let value = Int(tolerance), value <= 442 else {
                throw .badRequest("trim is trim[:top-left|:bottom-right][:tolerance], the tolerance from 0 to 442")
            }
            trim.tolerance = Double(value)
        }
        return trim
    }

    static func numbers(_ segment: Substring, _ separators: String) -> [Int]? {
        var numbers: [Int] = [], current = "", expected = Array(separators)[...]
        for character in segment {
            if character.isASCII, character.isNumber, current.count < 9 {
                current.append(character)
            } else if character == expected.first, !current.isEmpty {
                numbers.append(Int(current)!)
                current = ""
                expected = expected.dropFirst()
            } else {
                return nil
            }
        }
        guard expected.isEmpty, !current.isEmpty else { return nil }
        return numbers + [Int(current)!]
    }

    /// The source IMAGE names.
    static func source(_ image: Substring, allowsLocal: Bool) throws(ProxyError) -> ProxyRequest.Source {
        var text = String(image)
        let lowered = text.prefix(10).lowercased()
        // An encoded URL ("http%3A%2F%2F…") is decoded once, as thumbor does.
        if lowered.hasPrefix("http%3a") || lowered.hasPrefix("https%3a") {
            guard let decoded = PercentDecoding.string(image) else { throw .badRequest("the image is not valid percent-encoding") }
            text = decoded
        }
        if text.contains("://") {
            return try ProxyRequest.source(text, allowsLocal: false)
        }
        if allowsLocal {
            guard let path = PercentDecoding.string(Substring(text)) else { throw .badRequest("the image is not valid percent-encoding") }
            return try ProxyRequest.source("local:///" + path, allowsLocal: true)
        }
        return try ProxyRequest.source("http://" + text, allowsLocal: false)
    }

    /// The unread rest of the path, taken one `/`-ended segment at a time.
    struct Cursor {
        var rest: Substring

        /// The next segment if it is followed by `/` (the image has no `/` after it) and passes `test`.
        mutating func take(_ test: (Substring) -> Bool) -> Substring? {
            guard let slash = rest.firstIndex(of: "/") else { return nil }
            let segment = rest[..<slash]
            guard test(segment) else { return nil }
            rest = rest[rest.index(after: slash)...]
            return segment
        }
    }
}
