import Foundation
import WebImage

/// imgproxy's processing options (`name:arg1:arg2`, long or short names), read one by one into
/// what they ask for, before `ImgproxyURL` turns them into a ``RenderRecipe``.
///
/// An option the proxy cannot do as imgproxy does is a `400` that names it, never ignored:
/// gravity offsets, a `zoom` with two different factors, `strip_metadata:false`, and
/// imgproxy Pro's options. The ones that are off at their zero value (`wm:0`, `mb:0`, `pix:0`,
/// `sh:0`) are accepted at it, so that a
/// preset can be turned off.
struct ImgproxyOptions: Sendable {
    enum ResizingType: String, Sendable {
        case fit, fill, fillDown = "fill-down", force, auto
    }

    var resizingType = ResizingType.fit
    /// In CSS pixels (before ``dpr``); 0 follows the other side.
    var width = 0
    var height = 0
    var zoom = 1.0
    /// `min-width`, `min-height`, in CSS pixels (before ``dpr``); 0 for none.
    var minimumWidth = 0
    var minimumHeight = 0
    var dpr = 1.0
    var enlarge = false
    var extend = false
    var extendGravity = RenderRecipe.Alignment.center
    var gravity = RenderRecipe.Alignment.center
    var focus: RenderRecipe.Focus?
    /// `gravity:sm`: the window goes where the image draws the eye (``ImageProcessors/SmartCrop``).
    var smart = false
    /// `max_bytes`: the most bytes the output may take (see ``RenderRecipe/maxBytes``).
    var maxBytes: Int?
    /// `trim` (see ``RenderRecipe/Trim``); `nil` when off.
    var trim: RenderRecipe.Trim?
    var crop: RenderRecipe.SizedCrop?
    /// Whether the crop named its own gravity (else it follows ``gravity``).
    var cropHasGravity = false
    /// Top, right, bottom, left, in CSS pixels.
    var padding = [0, 0, 0, 0]
    /// Clockwise degrees, a multiple of 90.
    var rotate = 0
    var flipHorizontal = false
    var flipVertical = false
    var background: [UInt8]?
    var blur = 0.0
    /// The sharpening's sigma; 0 is none.
    var sharpen = 0.0
    /// The pixelation's block size in output pixels; 0 (or 1) is none.
    var pixelate = 0
    var stripsColorProfile = false
    /// 0 is the default quality.
    var quality = 0
    var formatQuality: [ImageFormat: Int] = [:]
    var format: ImageFormat?
    /// Unix seconds after which the URL answers 404.
    var expires: Int?
    var filename: String?
    var returnsAttachment = false
    /// `watermark`; `nil` when off (opacity 0).
    var watermark: Watermark?
    /// `page` (imgproxy counts from 0): which page of a PDF source; `nil` for the first.
    var page: Int?
    /// `video_thumbnail_second`: the time of a video source's poster frame; `nil` for the first frame.
    var videoThumbnailSecond: Double?

    /// `watermark:%opacity:%position:%x_offset:%y_offset:%scale`.
    struct Watermark: Sendable, Hashable {
        var opacity: Double
        /// A compass position; `nil` for `re` (replicated over the whole image).
        var alignment: RenderRecipe.Alignment? = .center
        var x = 0.0
        var y = 0.0
        var scale = 0.0
    }

    /// Applies the options of `text` (`name:args/name:args`) in order, presets expanded from
    /// `presets` (at most `depth` levels deep).
    mutating func apply(_ text: Substring, presets: [String: String], limits: ImageProxy.Limits, depth: Int = 0) throws(ProxyError) {
        for option in text.split(separator: "/") {
            try apply(option: option, presets: presets, limits: limits, depth: depth)
        }
    }

    /// Applies one option: each kind of option (the output's size, where the image goes, what is
    /// done to its pixels, how it is delivered) has a helper that answers whether the name is one
    /// of its options, so that no one switch holds every name; the names are disjoint, so the
    /// order the helpers are asked in does not matter. Presets, which apply other options,
    /// and the names the proxy refuses are handled here.
    mutating func apply(option: Substring, presets: [String: String], limits: ImageProxy.Limits, depth: Int) throws(ProxyError) {
        let parts = option.split(separator: ":", omittingEmptySubsequences: false)
        let name = String(parts[0]), arguments = Array(parts.dropFirst())
        if try applySizeOption(name, arguments, limits: limits) { return }
        if try applyPlacementOption(name, arguments, limits: limits) { return }
        if try applyPixelOption(name, arguments, limits: limits) { return }
        if try applyDeliveryOption(name, arguments) { return }
        if try applySourceOption(name, arguments) { return }
        switch name {
        case "preset", "pr":
            guard !arguments.isEmpty else { throw .badRequest("\(name) takes preset names") }
            guard depth < 4 else { throw .badRequest("presets nest too deep") }
            for preset in arguments {
                guard let options = presets[String(preset)] else { throw .badRequest("unknown preset \(Self.printable(preset))") }
                try apply(Substring(options), presets: presets, limits: limits, depth: depth + 1)
            }
        case "smart_crop":
            throw Self.unsupported(name)
        default:
            throw .badRequest("option \(Self.printable(Substring(name))) is not supported")
        }
    }

    /// The options of the output's size (`resize`, `size`, `resizing_type`, `width`, `height`,
    /// `min-width`, `min-height`, `zoom`, `dpr`, `enlarge`, `extend`); `false` when `name` is
    /// none of them (nothing is changed then).
    private mutating func applySizeOption(_ name: String, _ arguments: [Substring], limits: ImageProxy.Limits) throws(ProxyError) -> Bool {
        let maximum = limits.maximumDimension
        switch name {
        case "resize", "rs":
            try count(arguments, name, 1...6)
            if !arguments[0].isEmpty { resizingType = try Self.resizingType(arguments[0]) }
            try size(Array(arguments.dropFirst()), name, maximum: maximum)
        case "size", "s":
            try count(arguments, name, 1...5)
            try size(arguments, name, maximum: maximum)
        case "resizing_type", "rt":
            try count(arguments, name, 1...1)
            resizingType = try Self.resizingType(arguments[0])
        case "width", "w":
            try count(arguments, name, 1...1)
            width = try Self.integer(arguments[0], name, in: 0...maximum)
        case "height", "h":
            try count(arguments, name, 1...1)
            height = try Self.integer(arguments[0], name, in: 0...maximum)
        case "min-width", "mw", "min_width":
            try count(arguments, name, 1...1)
            minimumWidth = try Self.integer(arguments[0], name, in: 0...maximum)
        case "min-height", "mh", "min_height":
            try count(arguments, name, 1...1)
            minimumHeight = try Self.integer(arguments[0], name, in: 0...maximum)
        case "zoom", "z":
            try count(arguments, name, 1...2)
            let x = try Self.number(arguments[0], name, in: 0.01...limits.maximumDPR)
            let y = arguments.count == 2 ? try Self.number(arguments[1], name, in: 0.01...limits.maximumDPR) : x
            guard x == y else { throw .badRequest("\(name) with two different factors is not supported") }
            zoom = x
        case "dpr":
            try count(arguments, name, 1...1)
            dpr = try Self.number(arguments[0], name, in: 1...limits.maximumDPR)
        case "enlarge", "el":
            try count(arguments, name, 1...1)
            enlarge = try Self.boolean(arguments[0], name)
        case "extend", "ex":
            try count(arguments, name, 1...4)
            try extend(arguments, name)
        default:
            return false
        }
        return true
    }

    /// The options of what part of the image is shown and how it is placed and turned
    /// (`gravity`, `crop`, `padding`, `rotate`, `flip`, `trim`); `false` when `name` is none of
    /// them (nothing is changed then).
    private mutating func applyPlacementOption(_ name: String, _ arguments: [Substring], limits: ImageProxy.Limits) throws(ProxyError) -> Bool {
        let maximum = limits.maximumDimension
        switch name {
        case "gravity", "g":
            try count(arguments, name, 1...3)
            smart = arguments[0] == "sm"
            if smart {
                guard arguments.count == 1 else { throw .badRequest("\(name):sm takes no offsets") }
                (gravity, focus) = (.center, nil)
            } else {
                (gravity, focus) = try Self.gravity(arguments, name)
            }
        case "crop", "c":
            try count(arguments, name, 2...5)
            let cropWidth = try Self.number(arguments[0], name, in: 0...Double(maximum) * 16)
            let cropHeight = try Self.number(arguments[1], name, in: 0...Double(maximum) * 16)
            var crop = RenderRecipe.SizedCrop(width: cropWidth, height: cropHeight)
            cropHasGravity = arguments.count > 2
            if cropHasGravity { (crop.alignment, crop.focus) = try Self.gravity(Array(arguments.dropFirst(2)), name) }
            self.crop = cropWidth == 0 && cropHeight == 0 ? nil : crop
        case "padding", "pd":
            try count(arguments, name, 1...4)
            let values = try arguments.map { (text: Substring) throws(ProxyError) -> Int in
                text.isEmpty ? 0 : try Self.integer(text, name, in: 0...maximum)
            }
            // CSS's shorthand: top, right (= top), bottom (= top), left (= right).
            let top = values[0], right = values.count > 1 ? values[1] : top
            let bottom = values.count > 2 ? values[2] : top, left = values.count > 3 ? values[3] : right
            padding = [top, right, bottom, left]
        case "rotate", "rot":
            try count(arguments, name, 1...1)
            let angle = try Self.integer(arguments[0], name, in: -3600...3600)
            guard angle % 90 == 0 else { throw .badRequest("\(name) takes a multiple of 90") }
            rotate = (angle % 360 + 360) % 360
        case "flip", "fl":
            try count(arguments, name, 1...2)
            flipHorizontal = try Self.boolean(arguments[0], name)
            flipVertical = arguments.count > 1 ? try Self.boolean(arguments[1], name) : false
        case "trim", "t":
            try count(arguments, name, 1...4)
            try trim(arguments, name)
        default:
            return false
        }
        return true
    }

    /// The options of what is done to the pixels (`background`, `blur`, `sharpen`, `pixelate`,
    /// `watermark`); `false` when `name` is none of them (nothing is changed then).
    private mutating func applyPixelOption(_ name: String, _ arguments: [Substring], limits: ImageProxy.Limits) throws(ProxyError) -> Bool {
        switch name {
        case "background", "bg":
            try count(arguments, name, 1...3)
            background = try Self.colour(arguments, name)
        case "blur", "bl":
            try count(arguments, name, 1...1)
            blur = try Self.number(arguments[0], name, in: 0...limits.maximumBlur)
        case "sharpen", "sh":
            try count(arguments, name, 1...1)
            sharpen = try Self.number(arguments[0], name, in: 0...limits.maximumBlur)
        case "pixelate", "pix":
            try count(arguments, name, 1...1)
            pixelate = try Self.integer(arguments[0], name, in: 0...limits.maximumDimension)
        case "watermark", "wm":
            try count(arguments, name, 1...5)
            let opacity = try Self.number(arguments[0], name, in: 0...1)
            watermark = opacity == 0 ? nil : try Self.watermark(opacity, Array(arguments.dropFirst()), name)
        default:
            return false
        }
        return true
    }

    /// The options of the encoded file and its response (`max_bytes`, `strip_metadata`,
    /// `strip_color_profile`, `quality`, `format_quality`, `format`, `cachebuster`, `expires`,
    /// `filename`, `return_attachment`); `false` when `name` is none of them (nothing is
    /// changed then).
    private mutating func applyDeliveryOption(_ name: String, _ arguments: [Substring]) throws(ProxyError) -> Bool {
        switch name {
        case "max_bytes", "mb":
            try count(arguments, name, 1...1)
            let bytes = try Self.number(arguments[0], name, in: 0...1e9)
            maxBytes = bytes == 0 ? nil : Int(bytes)
        case "strip_metadata", "sm":
            try count(arguments, name, 1...1)
            // The proxy's encoders never write EXIF or XMP: there is nothing to keep them with.
            guard try Self.boolean(arguments[0], name) else { throw .badRequest("\(name):false (keeping metadata) is not supported") }
        case "strip_color_profile", "scp":
            try count(arguments, name, 1...1)
            stripsColorProfile = try Self.boolean(arguments[0], name)
        case "quality", "q":
            try count(arguments, name, 1...1)
            quality = try Self.integer(arguments[0], name, in: 0...100)
        case "format_quality", "fq":
            guard !arguments.isEmpty, arguments.count % 2 == 0 else { throw .badRequest("\(name) takes format:quality pairs") }
            for index in stride(from: 0, to: arguments.count, by: 2) {
                let format = try Self.format(arguments[index])
                formatQuality[format] = try Self.integer(arguments[index + 1], name, in: 1...100)
            }
        case "format", "f", "ext":
            try count(arguments, name, 1...1)
            format = arguments[0].isEmpty ? nil : try Self.format(arguments[0])
        case "cachebuster", "cb":
            // Changes the URL (and so the browser's and CDN's caches), never the image.
            try count(arguments, name, 1...1)
        case "expires", "exp":
            try count(arguments, name, 1...1)
            expires = try Self.integer(arguments[0], name, in: 0...999_999_999_999)
        case "filename", "fn":
            try count(arguments, name, 1...2)
            filename = try Self.filename(arguments, name)
        case "return_attachment", "att":
            try count(arguments, name, 1...1)
            returnsAttachment = try Self.boolean(arguments[0], name)
        default:
            return false
        }
        return true
    }

    /// The options that pick the still of a source that has several (`page`,
    /// `video_thumbnail_second`); `false` when `name` is none of them (nothing is changed then).
    private mutating func applySourceOption(_ name: String, _ arguments: [Substring]) throws(ProxyError) -> Bool {
        switch name {
        case "page", "pg":
            try count(arguments, name, 1...1)
            page = try Self.integer(arguments[0], name, in: 0...ProxyRequest.maximumPage - 1)
        case "video_thumbnail_second", "vts":
            try count(arguments, name, 1...1)
            videoThumbnailSecond = try Self.number(arguments[0], name, in: 0...ProxyRequest.maximumVideoTime)
        default:
            return false
        }
        return true
    }

    /// `trim:%threshold[:%color[:%equal_hor[:%equal_ver]]]`: the threshold the largest channel
    /// difference a border pixel may have (0: exactly the colour), the colour the top-left
    /// pixel's when empty.
    private mutating func trim(_ arguments: [Substring], _ name: String) throws(ProxyError) {
        let threshold = try Self.number(arguments[0], name, in: 0...255)
        var trim = RenderRecipe.Trim(tolerance: threshold, euclidean: false)
        if arguments.count > 1, let colour = try Self.colour([arguments[1]], name) { trim.reference = .colour(colour) }
        if arguments.count > 2, !arguments[2].isEmpty { trim.equalHorizontal = try Self.boolean(arguments[2], name) }
        if arguments.count > 3, !arguments[3].isEmpty { trim.equalVertical = try Self.boolean(arguments[3], name) }
        self.trim = trim
    }

    /// The rest of a `watermark` option after its opacity: position (a compass point or `re`),
    /// x and y offsets (signed), scale (0 to 1; 0 keeps the watermark's size); empty ones
    /// left at their defaults.
    static func watermark(_ opacity: Double, _ arguments: [Substring], _ name: String) throws(ProxyError) -> Watermark {
        var mark = Watermark(opacity: opacity)
        if let position = arguments.first, !position.isEmpty {
            if position == "re" {
                mark.alignment = nil
            } else if let alignment = compass[String(position)] {
                mark.alignment = alignment
            } else {
                throw .badRequest("\(name)'s position must be ce, no, so, ea, we, noea, nowe, soea, sowe or re")
            }
        }
        if arguments.count > 1, !arguments[1].isEmpty { mark.x = try signedNumber(arguments[1], name) }
        if arguments.count > 2, !arguments[2].isEmpty { mark.y = try signedNumber(arguments[2], name) }
        if arguments.count > 3, !arguments[3].isEmpty { mark.scale = try number(arguments[3], name, in: 0...1) }
        return mark
    }

    /// A number that may be negative, at most 100,000 either way.
    static func signedNumber(_ text: Substring, _ name: String) throws(ProxyError) -> Double {
        let negative = text.first == "-"
        let magnitude = try number(negative ? text.dropFirst() : text, name, in: 0...100_000)
        return negative ? -magnitude : magnitude
    }

    /// `[width:height:enlarge:extend…]` of `resize` and `size`, empty arguments left as they are.
    private mutating func size(_ arguments: [Substring], _ name: String, maximum: Int) throws(ProxyError) {
        if arguments.count > 0, !arguments[0].isEmpty { width = try Self.integer(arguments[0], name, in: 0...maximum) }
        if arguments.count > 1, !arguments[1].isEmpty { height = try Self.integer(arguments[1], name, in: 0...maximum) }
        if arguments.count > 2, !arguments[2].isEmpty { enlarge = try Self.boolean(arguments[2], name) }
        if arguments.count > 3, !arguments[3].isEmpty { try extend(Array(arguments.dropFirst(3)), name) }
    }

    /// `extend:%extend[:%gravity]` (compass gravity only: imgproxy allows no smart or focus point here).
    private mutating func extend(_ arguments: [Substring], _ name: String) throws(ProxyError) {
        extend = try Self.boolean(arguments[0], name)
        guard arguments.count > 1 else { return }
        let (alignment, focus) = try Self.gravity(Array(arguments.dropFirst()), name)
        guard focus == nil else { throw .badRequest("\(name) takes a compass gravity") }
        extendGravity = alignment
    }

    private func count(_ arguments: [Substring], _ name: String, _ range: ClosedRange<Int>) throws(ProxyError) {
        guard range.contains(arguments.count) else {
            throw .badRequest("\(name) takes \(range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)") argument\(range.upperBound == 1 ? "" : "s")")
        }
    }

    static func unsupported(_ name: String) -> ProxyError {
        .badRequest("option \(name) is not supported")
    }

    /// Compass points in halves of the free space: 0 is left/top, 2 right/bottom.
    static let compass: [String: RenderRecipe.Alignment] = [
        "ce": .center, "no": .init(horizontal: 1, vertical: 0), "so": .init(horizontal: 1, vertical: 2),
        "ea": .init(horizontal: 2, vertical: 1), "we": .init(horizontal: 0, vertical: 1),
        "noea": .init(horizontal: 2, vertical: 0), "nowe": .init(horizontal: 0, vertical: 0),
        "soea": .init(horizontal: 2, vertical: 2), "sowe": .init(horizontal: 0, vertical: 2),
    ]

    /// `type[:x_offset:y_offset]` or `fp:x:y`.
    static func gravity(_ arguments: [Substring], _ name: String) throws(ProxyError) -> (RenderRecipe.Alignment, RenderRecipe.Focus?) {
        let type = String(arguments[0])
        if type == "fp" {
            guard arguments.count == 3 else { throw .badRequest("\(name):fp takes x and y") }
            let x = try number(arguments[1], name, in: 0...1), y = try number(arguments[2], name, in: 0...1)
            return (.center, .init(x: x, y: y))
        }
        if type == "sm" { throw .badRequest("\(name) cannot be sm (smart) here: only the main gravity can") }
        guard let alignment = compass[type] else {
            throw .badRequest("\(name) must be no, so, ea, we, noea, nowe, soea, sowe, ce or fp:x:y")
        }
        guard arguments.count != 2 else { throw .badRequest("\(name) offsets are x and y") }
        for offset in arguments.dropFirst() {
            let magnitude = offset.first == "-" ? offset.dropFirst() : offset
            guard try number(magnitude, name, in: 0...1e9) == 0 else { throw .badRequest("gravity offsets are not supported") }
        }
        return (alignment, nil)
    }

    static func resizingType(_ text: Substring) throws(ProxyError) -> ResizingType {
        guard let type = ResizingType(rawValue: String(text)) else {
            throw .badRequest("the resizing type must be fit, fill, fill-down, force or auto")
        }
        return type
    }

    static let formats: [String: ImageFormat] = ["jpg": .jpeg, "jpeg": .jpeg, "png": .png, "webp": .webp, "gif": .gif, "avif": .avif]

    static func format(_ text: Substring) throws(ProxyError) -> ImageFormat {
        guard let format = formats[text.lowercased()] else {
            throw .badRequest("format \(printable(text)) is not supported (jpg, png, webp, gif or avif)")
        }
        return format
    }

    /// `R:G:B` (0 to 255) or `RRGGBB`; empty is none.
    static func colour(_ arguments: [Substring], _ name: String) throws(ProxyError) -> [UInt8]? {
        if arguments.count == 3 {
            return try arguments.map { (text: Substring) throws(ProxyError) -> UInt8 in UInt8(try integer(text, name, in: 0...255)) }
        }
        guard arguments.count == 1 else { throw .badRequest("\(name) is R:G:B or a hex colour") }
        if arguments[0].isEmpty { return nil }
        guard arguments[0].utf8.count == 6, let bytes = ImgproxySigner.bytes(hex: String(arguments[0])) else {
            throw .badRequest("\(name) is R:G:B or a hex colour")
        }
        return Array(bytes)
    }

    /// `name[:encoded]`: percent-encoded, or URL-safe Base64 when `encoded` is true; no quote,
    /// backslash or control character, so that it goes into `Content-Disposition` as it is.
    static func filename(_ arguments: [Substring], _ name: String) throws(ProxyError) -> String {
        let encoded = arguments.count > 1 ? try boolean(arguments[1], name) : false
        let bytes: [UInt8]?
        if encoded {
            bytes = ImgproxySigner.data(base64URL: arguments[0]).map(Array.init)
        } else {
            bytes = PercentDecoding.bytes(arguments[0])
        }
        guard let bytes, !bytes.isEmpty, bytes.count <= 255, let text = String(validating: bytes, as: UTF8.self),
              !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0 == "\"" || $0 == "\\" || $0 == "/" }) else {
            throw .badRequest("\(name) is not a usable file name")
        }
        return text
    }

    /// Go's `ParseBool`, as imgproxy reads booleans.
    static func boolean(_ text: Substring, _ name: String) throws(ProxyError) -> Bool {
        switch text {
        case "1", "t", "T", "true", "TRUE", "True": return true
        case "0", "f", "F", "false", "FALSE", "False": return false
        default: throw .badRequest("\(name) takes a boolean (1, t, true, 0, f or false)")
        }
    }

    static func integer(_ text: Substring, _ name: String, in range: ClosedRange<Int>) throws(ProxyError) -> Int {
        let digits = text.first == "-" ? text.dropFirst() : text
        guard !digits.isEmpty, digits.count <= 12, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let value = Int(text), range.contains(value) else {
            throw .badRequest("\(name) takes an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    static func number(_ text: Substring, _ name: String, in range: ClosedRange<Double>) throws(ProxyError) -> Double {
        guard !text.isEmpty, text.count <= 12,
              text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: ".") }),
              let value = Double(text), value.isFinite, range.contains(value) else {
            throw .badRequest("\(name) takes a number from \(ProxyRequest.text(range.lowerBound)) to \(ProxyRequest.text(range.upperBound))")
        }
        return value
    }

    /// At most 40 printable ASCII characters of what a client sent, for an error message.
    static func printable(_ text: Substring) -> String {
        String(text.prefix(40).unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" })
    }
}
