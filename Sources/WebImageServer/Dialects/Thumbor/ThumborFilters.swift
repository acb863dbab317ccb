import Foundation
import WebImage

/// thumbor's `filters:name(args):name(args)…` segment, applied to a ``RenderRecipe``.
///
/// Each filter is one the library's processors do as thumbor does, or a `400` that names it:
/// a filter is never ignored, so that an image never silently differs from the one thumbor
/// would have served.
enum ThumborFilters {
    /// The filters this slice implements, by thumbor's names.
    static let supported: Set<String> = [
        "quality", "format", "blur", "grayscale", "rotate", "upscale", "no_upscale", "stretch",
        "strip_exif", "strip_icc", "proportion", "max_age", "max_bytes",
        "brightness", "contrast", "rgb", "saturation", "fill", "background_color",
        "watermark", "focal",
        "sharpen", "equalize", "noise", "round_corner",
        "colorize", "convolution", "curve", "frame", "extract_focal",
    ]

    /// One parsed filter: its name and its raw arguments.
    struct Call: Sendable, Hashable {
        var name: String
        var arguments: [Substring]
    }

    /// The calls of `text` (what follows `filters:`), in order.
    ///
    /// - Throws: ``ProxyError`` 400 naming an unsupported filter, or a malformed list.
    static func calls(_ text: Substring) throws(ProxyError) -> [Call] {
        var calls: [Call] = []
        var rest = text
        while !rest.isEmpty {
            guard let open = rest.firstIndex(of: "(") else { throw .badRequest("filters must be name(arguments) separated by :") }
            let name = String(rest[..<open])
            guard !name.isEmpty, name.utf8.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || $0 == UInt8(ascii: "_") }) else {
                throw .badRequest("filters must be name(arguments) separated by :")
            }
            // Named before its arguments are read: an unsupported filter's arguments (a
            // watermark's URL) need not parse.
            guard supported.contains(name) else { throw .badRequest("filter \(name) is not supported") }
            guard let close = closingParenthesis(rest[rest.index(after: open)...]) else { throw .badRequest("filter \(name) is missing its )") }
            let inside = rest[rest.index(after: open)..<close]
            calls.append(Call(name: name, arguments: inside.isEmpty ? [] : arguments(inside)))
            rest = rest[rest.index(after: close)...]
            if rest.first == ":" {
                rest = rest.dropFirst()
                guard !rest.isEmpty else { throw .badRequest("filters must not end with :") }
            } else if !rest.isEmpty {
                throw .badRequest("filters must be name(arguments) separated by :")
            }
        }
        return calls
    }

    /// The first `)` of `text` outside square brackets: `curve()`'s lists of points hold
    /// parentheses and commas of their own.
    private static func closingParenthesis(_ text: Substring) -> Substring.Index? {
        var depth = 0
        for index in text.indices {
            switch text[index] {
            case "[": depth += 1
            case "]": depth = max(0, depth - 1)
            case ")" where depth == 0: return index
            default: break
            }
        }
        return nil
    }

    /// A call's arguments: `text` split at the commas outside square brackets.
    private static func arguments(_ text: Substring) -> [Substring] {
        var arguments: [Substring] = [], start = text.startIndex, depth = 0
        for index in text.indices {
            switch text[index] {
            case "[": depth += 1
            case "]": depth = max(0, depth - 1)
            case "," where depth == 0:
                arguments.append(text[start..<index])
                start = text.index(after: index)
            default: break
            }
        }
        return arguments + [text[start...]]
    }

    /// Applies `call` to `recipe` (and `maxAge`), checking its arguments against `limits`; a
    /// watermark's URL may name a file in the origin folder when `allowsLocal`.
    static func apply(
        _ call: Call, to recipe: inout RenderRecipe, maxAge: inout Int?, limits: ImageProxy.Limits, allowsLocal: Bool
    ) throws(ProxyError) {
        let name = call.name, arguments = call.arguments
        switch name {
        case "quality":
            recipe.quality = try integer(arguments, name, in: 1...100)
        case "format":
            guard arguments.count == 1, let format = Self.formats[arguments[0].lowercased()] else {
                throw .badRequest("format() must be jpeg, png, webp, gif or avif")
            }
            recipe.format = format
        case "blur":
            try blur(arguments, into: &recipe, limits: limits)
        case "rotate":
            let angle = try integer(arguments, name, in: -3600...3600)
            guard angle % 90 == 0 else { throw .badRequest("rotate() takes a multiple of 90") }
            // thumbor turns counter-clockwise (PIL's direction); the recipe counts clockwise.
            recipe.quarterTurns = ((-angle / 90) % 4 + 4) % 4
        case "proportion":
            let value = try number(arguments, name, in: 0.01...1)
            recipe.proportion = value
        case "max_age":
            maxAge = try integer(arguments, name, in: 0...31_536_000)
        case "max_bytes":
            recipe.maxBytes = try integer(arguments, name, in: 1...100_000_000)
        case "brightness":
            recipe.colorFilters.append(.brightness(try integer(arguments, name, in: -100...100)))
        case "contrast":
            recipe.colorFilters.append(.contrast(try integer(arguments, name, in: -100...100)))
        case "rgb":
            guard arguments.count == 3 else { throw .badRequest("rgb() takes three percentages") }
            let values = try arguments.map { (argument: Substring) throws(ProxyError) -> Int in try integer([argument], name, in: -100...100) }
            recipe.colorFilters.append(.rgb(values[0], values[1], values[2]))
        case "saturation":
            recipe.colorFilters.append(.saturation(try number(arguments, name, in: -10...10)))
        case "fill":
            try fill(arguments, into: &recipe)
        case "watermark":
            recipe.watermark = try watermark(arguments, allowsLocal: allowsLocal)
        case "focal":
            try focal(arguments, into: &recipe)
        case "round_corner":
            try roundCorner(arguments, into: &recipe, limits: limits)
        case "sharpen", "noise", "colorize", "convolution", "curve", "frame":
            try applyEffect(call, to: &recipe, allowsLocal: allowsLocal)
        case "background_color":
            guard arguments.count == 1 else { throw .badRequest("background_color() takes a colour") }
            // Transparency painted over the colour, the size unchanged.
            recipe.canvas = RenderRecipe.Canvas(background: try ThumborColor.parse(arguments[0], filter: name))
        default:
            try flag(call, into: &recipe)
        }
    }

    /// `fill(colour[,fill_transparent])`: the image centred on a canvas of the requested size
    /// (a side of 0 is the image's own), the rest painted; `auto` is the image's mean colour.
    /// Its own transparency stays unless `fill_transparent` is true.
    private static func fill(_ arguments: [Substring], into recipe: inout RenderRecipe) throws(ProxyError) {
        guard (1...2).contains(arguments.count) else { throw .badRequest("fill() takes a colour and an optional true or false") }
        var canvas = RenderRecipe.Canvas(width: recipe.width ?? 0, height: recipe.height ?? 0)
        if arguments[0].lowercased() == "auto" {
            canvas.meanBackground = true
        } else if arguments[0].lowercased() == "blur" {
            canvas.blurredBackground = true
        } else {
            canvas.background = try ThumborColor.parse(arguments[0], filter: "fill")
        }
        let fillsTransparency = arguments.count == 2 ? ["true", "1"].contains(arguments[1].lowercased()) : false
        guard arguments.count < 2 || fillsTransparency || ["false", "0"].contains(arguments[1].lowercased()) else {
            throw .badRequest("fill()'s second argument is true or false")
        }
        canvas.keepsTransparency = !fillsTransparency
        recipe.canvas = canvas
    }

    /// `watermark(url,x,y,alpha[,w_ratio,h_ratio])`: x and y are pixels from the left (top), or
    /// from the right (bottom) when negative (`-0` flush with it), `Np` for N % of the side,
    /// `center`, or `repeat`; alpha is the percentage of transparency added (0 to 100); the
    /// ratios are the largest percentage of the image's width and height it may take (`none`
    /// for either).
    private static func watermark(_ arguments: [Substring], allowsLocal: Bool) throws(ProxyError) -> RenderRecipe.Watermark {
        guard (4...6).contains(arguments.count), !arguments[0].isEmpty else {
            throw .badRequest("watermark() takes a URL, x, y, alpha and optional width and height ratios")
        }
        let source = try ThumborURL.source(arguments[0], allowsLocal: allowsLocal)
        let alpha = try integer([arguments[3]], "watermark", in: 0...100)
        func ratio(_ index: Int) throws(ProxyError) -> Double? {
            guard arguments.count > index, arguments[index] != "none" else { return nil }
            return Double(try integer([arguments[index]], "watermark", in: 1...100)) / 100
        }
        return RenderRecipe.Watermark(
            origin: .source(source),
            horizontal: try watermarkPosition(arguments[1]), vertical: try watermarkPosition(arguments[2]),
            opacity: .lessTransparency(percent: alpha), widthShare: try ratio(4), heightShare: try ratio(5))
    }

    /// One of `watermark()`'s positions.
    private static func watermarkPosition(_ text: Substring) throws(ProxyError) -> RenderRecipe.Watermark.Placement {
        switch text {
        case "center": return .center(.pixels(0))
        case "repeat": return .spread
        default: break
        }
        let fromEnd = text.first == "-"
        let magnitude = fromEnd ? text.dropFirst() : text
        let length: RenderRecipe.Watermark.Length
        if magnitude.last == "p" {
            length = .fraction(Double(try integer([magnitude.dropLast()], "watermark", in: 0...100)) / 100)
        } else {
            length = .pixels(try integer([magnitude], "watermark", in: 0...100_000))
        }
        return fromEnd ? .end(length) : .start(length)
    }

    /// `focal(LxT:RxB)`: a region of the source (in its pixels) that a fill's window centres
    /// on instead of the alignment or `smart`; several are weighted by their areas. An empty
    /// region is ignored, as thumbor ignores it.
    private static func focal(_ arguments: [Substring], into recipe: inout RenderRecipe) throws(ProxyError) {
        guard arguments.count == 1, let edges = ThumborURL.numbers(arguments[0], "x:x") else {
            throw .badRequest("focal() takes a region LEFTxTOP:RIGHTxBOTTOM")
        }
        let (left, top, right, bottom) = (edges[0], edges[1], edges[2], edges[3])
        guard right > left, bottom > top else { return }
        guard recipe.focalRegions.count < 16 else { throw .badRequest("at most 16 focal() regions") }
        recipe.focalRegions.append(.init(x: left, y: top, width: right - left, height: bottom - top))
    }

    /// `round_corner(a|b,r,g,b[,transparent])`: the radii across and down (`a` alone for both;
    /// the `|` may come percent-encoded), the corners' colour, and whether they are transparent instead.
    private static func roundCorner(_ arguments: [Substring], into recipe: inout RenderRecipe, limits: ImageProxy.Limits) throws(ProxyError) {
        let name = "round_corner"
        guard (4...5).contains(arguments.count) else { throw .badRequest("round_corner() takes a|b, r, g, b and an optional true or false") }
        let text = String(arguments[0]).replacingOccurrences(of: "%7C", with: "|").replacingOccurrences(of: "%7c", with: "|")
        let radii = text.split(separator: "|", omittingEmptySubsequences: false)
        guard (1...2).contains(radii.count) else { throw .badRequest("round_corner()'s radius is a or a|b") }
        let a = try integer([radii[0]], name, in: 0...limits.maximumDimension)
        let b = radii.count == 2 ? try integer([radii[1]], name, in: 0...limits.maximumDimension) : a
        let colour = try arguments[1...3].map { (argument: Substring) throws(ProxyError) -> UInt8 in UInt8(try integer([argument], name, in: 0...255)) }
        let transparent = arguments.count == 5 ? try boolean(arguments[4], name) : false
        recipe.roundCorner = ThumborRoundCorner(horizontalRadius: a, verticalRadius: b, colour: colour, transparent: transparent)
    }

    /// thumbor's booleans: `true`, `True` or `1`, `false`, `False` or `0`.
    static func boolean(_ text: Substring, _ name: String) throws(ProxyError) -> Bool {
        switch text {
        case "true", "True", "1": return true
        case "false", "False", "0": return false
        default: throw .badRequest("\(name)() takes true or false")
        }
    }

    /// The filters that take no argument.
    private static func flag(_ call: Call, into recipe: inout RenderRecipe) throws(ProxyError) {
        guard call.arguments.isEmpty else { throw .badRequest("\(call.name)() takes no argument") }
        switch call.name {
        case "grayscale": recipe.grayscale = true
        case "upscale": recipe.upscale = true
        case "no_upscale": recipe.upscale = false
        case "stretch": recipe.box = .stretch
        // The proxy's encoders never write EXIF: stripped already.
        case "strip_exif": break
        case "strip_icc": recipe.stripsICC = true
        case "equalize": recipe.equalizes = true
        default: throw .badRequest("filter \(call.name) is not supported")
        }
    }

    /// `blur(radius[,sigma])`: thumbor's radius is at most 150, its sigma defaults to the radius;
    /// the proxy blurs with the sigma.
    private static func blur(_ arguments: [Substring], into recipe: inout RenderRecipe, limits: ImageProxy.Limits) throws(ProxyError) {
        guard (1...2).contains(arguments.count) else { throw .badRequest("blur() takes a radius and an optional sigma") }
        let radius = try integer([arguments[0]], "blur", in: 0...150)
        let sigma = arguments.count == 2 ? try number([arguments[1]], "blur", in: 0...limits.maximumBlur) : Double(radius)
        guard sigma <= limits.maximumBlur else { throw .badRequest("blur() must be at most \(ProxyRequest.text(limits.maximumBlur))") }
        recipe.blur = radius == 0 ? 0 : sigma
    }

    static let formats: [String: ImageFormat] = ["jpeg": .jpeg, "jpg": .jpeg, "png": .png, "webp": .webp, "gif": .gif, "avif": .avif]

    static func integer(_ arguments: [Substring], _ name: String, in range: ClosedRange<Int>) throws(ProxyError) -> Int {
        let text = arguments.count == 1 ? arguments[0] : ""
        let digits = text.first == "-" ? text.dropFirst() : text
        guard !digits.isEmpty, digits.count <= 9, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let value = Int(text), range.contains(value) else {
            throw .badRequest("\(name)() takes an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    static func number(_ arguments: [Substring], _ name: String, in range: ClosedRange<Double>) throws(ProxyError) -> Double {
        let text = arguments.count == 1 ? arguments[0] : ""
        guard !text.isEmpty, text.count <= 12,
              text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: ".") }),
              let value = Double(text), value.isFinite, range.contains(value) else {
            throw .badRequest("\(name)() takes a number from \(ProxyRequest.text(range.lowerBound)) to \(ProxyRequest.text(range.upperBound))")
        }
        return value
    }
}
