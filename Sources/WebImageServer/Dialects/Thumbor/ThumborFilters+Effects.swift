extension ThumborFilters {
    /// `sharpen()`, `noise()`, `colorize()`, `convolution()`, `curve()` and `frame()`, applied to `recipe`.
    static func applyEffect(_ call: Call, to recipe: inout RenderRecipe, allowsLocal: Bool) throws(ProxyError) {
        let name = call.name, arguments = call.arguments
        switch name {
        case "sharpen":
            guard arguments.count == 3 else { throw .badRequest("sharpen() takes an amount, a radius and true or false") }
            let amount = try number([arguments[0]], name, in: 0...100), radius = try number([arguments[1]], name, in: 0...100)
            recipe.sharpen = ThumborSharpen(amount: amount, radius: radius, luminanceOnly: try boolean(arguments[2], name))
        case "noise":
            guard (1...2).contains(arguments.count) else { throw .badRequest("noise() takes an amount and an optional seed") }
            let amount = try integer([arguments[0]], name, in: 0...100)
            let seed = arguments.count == 2 ? try integer([arguments[1]], name, in: 0...2_147_483_647) : 0
            recipe.noise = amount > 1 ? RenderRecipe.Noise(amount: amount, seed: seed) : nil
        case "colorize":
            recipe.colorFilters.append(try colorize(arguments))
        case "convolution":
            guard recipe.convolutions.count < 4 else { throw .badRequest("at most 4 convolution() filters") }
            recipe.convolutions.append(try convolution(arguments))
        case "curve":
            guard arguments.count == 4 else { throw .badRequest("curve() takes four lists of points [(x,y),…]") }
            let curves = try arguments.map { (text: Substring) throws(ProxyError) -> [ThumborCurve.Point] in try curvePoints(text) }
            recipe.colorFilters.append(.curve(ThumborCurve(points: curves)))
        default:
            guard arguments.count == 1, !unquoted(arguments[0]).isEmpty else { throw .badRequest("frame() takes the URL of a nine-patch image") }
            guard recipe.frame == nil else { throw .badRequest("at most one frame()") }
            recipe.frame = try ThumborURL.source(unquoted(arguments[0]), allowsLocal: allowsLocal)
        }
    }

    /// A string argument without the single quotes thumbor allows around it.
    static func unquoted(_ text: Substring) -> Substring {
        text.count >= 2 && text.first == "'" && text.last == "'" ? text.dropFirst().dropLast() : text
    }

    /// `colorize(red_pct,green_pct,blue_pct,fill)`: percentages from 0 (thumbor takes any
    /// whole number; above 100 the channel moves past the fill colour), the fill as six hex digits.
    private static func colorize(_ arguments: [Substring]) throws(ProxyError) -> ThumborColorFilter.Operation {
        guard arguments.count == 4 else { throw .badRequest("colorize() takes red, green and blue percentages and a hex colour") }
        let percents = try arguments[0..<3].map { (text: Substring) throws(ProxyError) -> Int in
            try integer([text], "colorize", in: 0...999_999_999)
        }
        let hex = unquoted(arguments[3])
        guard hex.count == 6, let value = UInt32(hex, radix: 16) else { throw .badRequest("colorize()'s colour is six hex digits (ff0000)") }
        let fill = [UInt8(value >> 16), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
        return .colorize(percents[0], percents[1], percents[2], fill: fill)
    }

    /// `convolution(items,columns[,normalize])`: items separated by `;` (decimal numbers, signed),
    /// a kernel of odd width and height (thumbor fails on any other), at most
    /// ``ThumborConvolution/maximumSide`` a side; `normalize` is true by default.
    private static func convolution(_ arguments: [Substring]) throws(ProxyError) -> ThumborConvolution {
        let usage = "convolution() takes items separated by ;, a number of columns and an optional true or false"
        guard (2...3).contains(arguments.count) else { throw .badRequest(usage) }
        let texts = arguments[0].split(separator: ";", omittingEmptySubsequences: false)
        let items = try texts.map { (text: Substring) throws(ProxyError) -> Double in
            let digits = text.first == "-" ? text.dropFirst() : text
            guard let first = digits.first, first.isASCII, first.isNumber, digits.count <= 12,
                  digits.allSatisfy({ ($0.isASCII && $0.isNumber) || $0 == "." }), digits.filter({ $0 == "." }).count <= 1,
                  let value = Double(text.last == "." ? text.dropLast() : text), abs(value) <= 10_000 else {
                throw .badRequest("convolution()'s items are numbers from -10000 to 10000")
            }
            return value
        }
        let side = ThumborConvolution.maximumSide
        let columns = try integer([arguments[1]], "convolution", in: 1...side)
        guard items.count % columns == 0, items.count % 2 == 1, (items.count / columns) % 2 == 1, items.count / columns <= side else {
            throw .badRequest("convolution()'s kernel must have an odd number of columns and of rows, at most \(side) each")
        }
        let normalizes = arguments.count == 3 ? try boolean(arguments[2], "convolution") : true
        return ThumborConvolution(items: items, columns: columns, normalizes: normalizes)
    }

    /// One of `curve()`'s lists: `[(x,y),(x,y),…]`, levels 0 to 255, at least one point, `x` rising.
    private static func curvePoints(_ text: Substring) throws(ProxyError) -> [ThumborCurve.Point] {
        let usage = ProxyError.badRequest("curve()'s lists are [(x,y),…]: at least one point, levels 0 to 255, x rising")
        guard text.first == "[", text.last == "]" else { throw usage }
        var points: [ThumborCurve.Point] = [], rest = text.dropFirst().dropLast()
        while !rest.isEmpty {
            guard rest.first == "(", let close = rest.firstIndex(of: ")") else { throw usage }
            let pair = rest[rest.index(after: rest.startIndex)..<close].split(separator: ",", omittingEmptySubsequences: false)
            guard pair.count == 2, pair.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
                  let x = Int(pair[0]), let y = Int(pair[1]), x <= 255, y <= 255, x > (points.last?.x ?? -1) else { throw usage }
            points.append(.init(x: x, y: y))
            rest = rest[rest.index(after: close)...]
            if rest.first == "," { rest = rest.dropFirst() }
        }
        guard !points.isEmpty else { throw usage }
        return points
    }
}
