import Foundation
import WebImage
import WebImageCore

/// One imgproxy URL (the open-source edition's processing URL), parsed into the shared
/// ``RenderRecipe``.
///
/// `/SIGNATURE/OPTIONS/plain/SOURCE[@EXT]` or `/SIGNATURE/OPTIONS/BASE64SOURCE[.EXT]`, where
/// OPTIONS are `name:arg1:arg2` separated by `/` (``ImgproxyOptions``), SOURCE is percent-encoded
/// (or not) and BASE64SOURCE is the source in URL-safe Base64 without padding, possibly split
/// by `/`. SIGNATURE is checked by ``ImgproxyRoute`` before this parses anything. The options
/// are imgproxy's: the box, the gravity and the crop are of the image as it is shown, after
/// `rotate` and `flip`, which the recipe (which turns last) gets by swapping and mapping them.
package struct ImgproxyURL: Sendable {
    var recipe: RenderRecipe
    /// `expires`, in seconds since 1970, when the URL has one (it is in the future).
    var expires: Int?
    /// `Content-Disposition`'s file name without its extension, when the URL gives one (else the source's).
    var filename: String?
    var returnsAttachment = false

    /// What the URL adds to its image's headers: `expires`, `Content-Disposition`.
    var headers: DialectHeaders { DialectHeaders(expires: expires, disposition: ImgproxyDisposition(self)) }

    /// The box's width and height in output pixels (`nil` for a free side): for the fuzz
    /// target, which checks them against the limits.
    package var boxSize: (width: Int?, height: Int?) { (recipe.width, recipe.height) }
    /// The canvas's padding in output pixels (top, right, bottom, left), if any: for the fuzz target.
    package var padding: [Int]? { recipe.canvas?.padding }

    /// Parses `path`, the request's path under the imgproxy prefix (`/insecure/rs:fit:300:200/…`),
    /// still percent-encoded; the `default` preset of `presets` applies first.
    ///
    /// - Throws: ``ProxyError`` 400 naming what is wrong (an unsupported option among them),
    ///   404 when the URL has expired.
    /// `watermark` is the configured watermark's digest and base opacity (see
    /// ``ImgproxyConfiguration/watermarkData``), `nil` when there is none.
    package init(
        path: Substring, presets: [String: String] = [:], limits: ImageProxy.Limits, allowsLocal: Bool,
        watermark: (digest: String, opacity: Double)? = nil, now: Date = Date()
    ) throws(ProxyError) {
        let parts = path.drop { $0 == "/" }.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw .badRequest("an imgproxy URL is /SIGNATURE/OPTIONS/SOURCE")
        }
        var options = ImgproxyOptions()
        if let preset = presets["default"] { try options.apply(Substring(preset), presets: presets, limits: limits, depth: 1) }
        // The options are the segments with a colon; base64 has none, and `plain` ends them.
        var rest = parts[1]
        while let slash = rest.firstIndex(of: "/"), rest[..<slash].contains(":") {
            if slash != rest.startIndex { try options.apply(option: rest[..<slash], presets: presets, limits: limits, depth: 0) }
            rest = rest[rest.index(after: slash)...]
        }
        let (source, ext) = try Self.source(rest)
        if let ext { options.format = try ImgproxyOptions.format(ext) }
        if let expires = options.expires {
            self.expires = expires
            // imgproxy's own answer to an expired URL.
            guard !DialectHeaders(expires: expires).hasExpired(at: now) else { throw ProxyError(status: 404, message: "the URL has expired") }
        }
        filename = options.filename
        returnsAttachment = options.returnsAttachment
        recipe = try Self.recipe(options, source: ProxyRequest.source(source, allowsLocal: allowsLocal), limits: limits)
        if let mark = options.watermark {
            guard let watermark else { throw .badRequest("watermark: no watermark image is configured (IMGPROXY_WATERMARK_DATA, _PATH or _URL)") }
            recipe.watermark = Self.watermark(mark, configured: watermark, dpr: options.dpr)
        }
    }

    /// The recipe's watermark for the `watermark` option `mark`: compass positions with their
    /// offsets (from the edge the gravity names, from the centre for `ce`; 1 and over are
    /// pixels times `dpr`, under 1 a fraction of the side), `re` as tiles the offsets apart,
    /// `scale` as a share of both sides.
    static func watermark(_ mark: ImgproxyOptions.Watermark, configured: (digest: String, opacity: Double), dpr: Double) -> RenderRecipe.Watermark {
        func length(_ value: Double) -> RenderRecipe.Watermark.Length {
            abs(value) >= 1 || value == 0 ? .pixels(Int((value * dpr).rounded())) : .fraction(value)
        }
        func placement(_ half: Int, _ offset: Double) -> RenderRecipe.Watermark.Placement {
            switch half {
            case 0: .start(length(offset))
            case 2: .end(length(offset))
            default: .center(length(offset))
            }
        }
        let horizontal: RenderRecipe.Watermark.Placement, vertical: RenderRecipe.Watermark.Placement
        if let alignment = mark.alignment {
            (horizontal, vertical) = (placement(alignment.horizontal, mark.x), placement(alignment.vertical, mark.y))
        } else {
            (horizontal, vertical) = (.tiled(spacing: Int((max(mark.x, 0) * dpr).rounded())), .tiled(spacing: Int((max(mark.y, 0) * dpr).rounded())))
        }
        let share = mark.scale > 0 ? mark.scale : nil
        return RenderRecipe.Watermark(
            origin: .configured(digest: configured.digest), horizontal: horizontal, vertical: vertical,
            opacity: .scaled(min(1, mark.opacity * configured.opacity)), widthShare: share, heightShare: share)
    }

    /// The source's text and the extension after it, from what follows the options.
    static func source(_ rest: Substring) throws(ProxyError) -> (String, Substring?) {
        if rest.hasPrefix("plain/") {
            var plain = rest.dropFirst(6), ext: Substring?
            if let at = plain.lastIndex(of: "@"), !plain[at...].contains("/") {
                ext = plain[plain.index(after: at)...]
                plain = plain[..<at]
            }
            guard !plain.isEmpty, let text = PercentDecoding.string(plain) else {
                throw .badRequest("the plain source is missing or not valid percent-encoding")
            }
            return (text, ext?.isEmpty == true ? nil : ext)
        }
        if rest.hasPrefix("enc/") { throw .badRequest("encrypted source URLs are not supported") }
        var encoded = Substring(rest.filter { $0 != "/" }), ext: Substring?
        if let dot = encoded.lastIndex(of: ".") {
            ext = encoded[encoded.index(after: dot)...]
            encoded = encoded[..<dot]
        }
        guard !encoded.isEmpty, let bytes = ImgproxySigner.data(base64URL: encoded), let text = String(validating: bytes, as: UTF8.self),
              !text.isEmpty else {
            throw .badRequest("the source is not valid URL-safe Base64")
        }
        return (text, ext?.isEmpty == true ? nil : ext)
    }

    /// The recipe of `options`: sizes times `dpr` (and `zoom`), imgproxy's order of rotation and
    /// flips turned into the recipe's, the canvas last.
    static func recipe(_ options: ImgproxyOptions, source: ProxyRequest.Source, limits: ImageProxy.Limits) throws(ProxyError) -> RenderRecipe {
        var recipe = RenderRecipe(source: source)
        recipe.dialect = "imgproxy"
        let maximum = limits.maximumDimension
        let hasSize = options.width > 0 || options.height > 0
        // zoom multiplies the size the resize makes: the box's sides, or the image's own.
        let factor = options.dpr * (hasSize ? options.zoom : 1)
        func scaled(_ side: Int, _ name: String) throws(ProxyError) -> Int? {
            guard side > 0 else { return nil }
            let pixels = Int((Double(side) * factor).rounded())
            guard pixels <= maximum else { throw .badRequest("\(name) × dpr × zoom must be at most \(maximum)") }
            return max(pixels, 1)
        }
        let width = try scaled(options.width, "width"), height = try scaled(options.height, "height")
        func scaledMinimum(_ side: Int, _ name: String) throws(ProxyError) -> Int {
            let pixels = Int((Double(side) * options.dpr).rounded())
            guard pixels <= maximum else { throw .badRequest("\(name) × dpr must be at most \(maximum)") }
            return pixels
        }
        if !hasSize, options.zoom != 1 { recipe.proportion = options.enlarge ? options.zoom : min(options.zoom, 1) }
        recipe.box = switch options.resizingType {
        case .fit: .fit
        case .fill: .fill
        case .fillDown: .fillDown
        case .force: .stretch
        case .auto: .auto
        }
        recipe.upscale = options.enlarge
        // Minimum sizes follow dpr, not zoom (imgproxy raises the scale after zooming).
        recipe.minimumWidth = try scaledMinimum(options.minimumWidth, "min-width")
        recipe.minimumHeight = try scaledMinimum(options.minimumHeight, "min-height")
        recipe.isSmart = options.smart
        recipe.maxBytes = options.maxBytes
        recipe.trim = options.trim
        orient(&recipe, options, width: width, height: height)
        recipe.blur = options.blur
        recipe.sharpenSigma = options.sharpen
        recipe.pixelate = options.pixelate > 1 ? options.pixelate : 0
        recipe.format = options.format
        if options.quality > 0 { recipe.quality = options.quality }
        recipe.formatQuality = options.formatQuality
        recipe.stripsICC = options.stripsColorProfile
        recipe.page = options.page.map { $0 + 1 }
        recipe.videoTime = options.videoThumbnailSecond
        if let canvas = try Self.canvas(options, width: width, height: height, maximum: maximum) { recipe.canvas = canvas }
        return recipe
    }

    /// The recipe's sizes, flips, quarter turns, gravity, focus and crop for `options.rotate`:
    /// imgproxy turns and then flips, the recipe flips and then turns, so a quarter turn swaps
    /// the sides and the flips' axes, and every gravity is taken back onto the source. `width`
    /// and `height` are the box's (times `dpr` and `zoom`), before the turn.
    private static func orient(_ recipe: inout RenderRecipe, _ options: ImgproxyOptions, width: Int?, height: Int?) {
        let turns = options.rotate / 90 % 4
        let sideways = turns % 2 == 1
        (recipe.width, recipe.height) = sideways ? (height, width) : (width, height)
        if sideways { swap(&recipe.minimumWidth, &recipe.minimumHeight) }
        // imgproxy flips after it turns; the recipe flips before: a turn of 90° swaps the axes.
        (recipe.flipHorizontal, recipe.flipVertical) = sideways
            ? (options.flipVertical, options.flipHorizontal) : (options.flipHorizontal, options.flipVertical)
        recipe.quarterTurns = turns
        let flips = (options.flipHorizontal, options.flipVertical)
        recipe.alignment = unturned(options.gravity, turns: turns, flips: flips)
        recipe.focus = options.focus.map { unturned($0, turns: turns, flips: flips) }
        if var crop = options.crop {
            if !options.cropHasGravity { (crop.alignment, crop.focus) = (options.gravity, options.focus) }
            if sideways { (crop.width, crop.height) = (crop.height, crop.width) }
            crop.alignment = unturned(crop.alignment, turns: turns, flips: flips)
            crop.focus = crop.focus.map { unturned($0, turns: turns, flips: flips) }
            recipe.sizedCrop = crop
        }
    }

    /// The canvas the image is drawn on, when `extend`, padding or a background asks for one
    /// (`nil` otherwise): the padding times `dpr`, at most `maximum` a side; an extended
    /// canvas is the box's size (`width` × `height`, not turned).
    private static func canvas(_ options: ImgproxyOptions, width: Int?, height: Int?, maximum: Int) throws(ProxyError) -> RenderRecipe.Canvas? {
        let padding = try options.padding.map { (side: Int) throws(ProxyError) -> Int in
            let pixels = Int((Double(side) * options.dpr).rounded())
            guard pixels <= maximum else { throw .badRequest("padding × dpr must be at most \(maximum)") }
            return pixels
        }
        guard options.extend || padding.contains(where: { $0 > 0 }) || options.background != nil else { return nil }
        var canvas = RenderRecipe.Canvas(padding: padding, background: options.background)
        if options.extend { (canvas.width, canvas.height, canvas.alignment) = (width ?? 0, height ?? 0, options.extendGravity) }
        return canvas
    }

    /// A gravity of the shown image (turned `turns` quarters clockwise, then flipped) as a
    /// gravity of the source, in halves.
    static func unturned(_ alignment: RenderRecipe.Alignment, turns: Int, flips: (Bool, Bool)) -> RenderRecipe.Alignment {
        let point = unturned((Double(alignment.horizontal) / 2, Double(alignment.vertical) / 2), turns: turns, flips: flips)
        return .init(horizontal: Int(point.x * 2), vertical: Int(point.y * 2))
    }

    static func unturned(_ focus: RenderRecipe.Focus, turns: Int, flips: (Bool, Bool)) -> RenderRecipe.Focus {
        let point = unturned((focus.x, focus.y), turns: turns, flips: flips)
        return .init(x: point.x, y: point.y)
    }

    /// A point of the shown image, as fractions, in the source.
    static func unturned(_ point: (x: Double, y: Double), turns: Int, flips: (Bool, Bool)) -> (x: Double, y: Double) {
        let x = flips.0 ? 1 - point.x : point.x, y = flips.1 ? 1 - point.y : point.y
        return switch turns {
        case 1: (y, 1 - x)
        case 2: (1 - x, 1 - y)
        case 3: (1 - y, x)
        default: (x, y)
        }
    }
}
