import Foundation
import WebImage

/// What one output is made of, whatever URL dialect asked for it: the one description of the
/// work that ``ImageProxy`` plans, caches and renders. Each dialect (`/image`, thumbor) parses
/// its URL into a recipe; signing, limits, the SSRF guard and the caches stay shared, so two
/// URLs of different dialects asking for the same pixels meet on the same variant key.
///
/// The order of the work is fixed: the manual crop (source pixels), the resize into the box
/// (with the crop window an aligned `fill` keeps), the flips, the quarter turns, grayscale,
/// the colour filters, the convolutions, the blur, the canvas, the frame, the watermark, then
/// the encoder.
struct RenderRecipe: Sendable, Hashable {
    /// How the image meets a `width` × `height` box.
    enum Box: String, Sendable, Hashable {
        /// Inside the box, aspect ratio kept (CSS `contain`, thumbor `fit-in`).
        case fit = "contain"
        /// Covers the box, the overflow cropped at ``RenderRecipe/alignment`` (CSS `cover`,
        /// thumbor's default).
        case fill = "cover"
        /// Exactly the box, each side scaled on its own (CSS `fill`, thumbor `stretch()`).
        case stretch = "fill"
        /// Covers the box, nothing cropped: the box is the smallest size (thumbor `full-fit-in`).
        case cover = "full"
        /// As ``fill``, but when the image is too small to cover the box (and is not enlarged),
        /// the window keeps the box's aspect ratio (imgproxy `fill-down`).
        case fillDown = "fill-down"
        /// ``fill`` when the image and the box have the same orientation, else ``fit``
        /// (imgproxy `auto`).
        case auto = "auto"

        /// The library's mode for a plain resize (``cover``, ``fillDown`` and ``auto`` never are one).
        var contentMode: ContentMode {
            switch self {
            case .fit, .cover, .auto: .fit
            case .fill, .fillDown: .fill
            case .stretch: .stretch
            }
        }

        /// Whether the box may keep a window of the image (so that alignment and focus matter).
        var crops: Bool { self == .fill || self == .fillDown || self == .auto }
    }

    /// A point of the image as fractions of its width and height (imgproxy's `fp:x:y`): a
    /// `fill` centres its window on it as far as the image allows.
    struct Focus: Sendable, Hashable {
        var x: Double
        var y: Double
    }

    /// A crop whose size is given and whose place follows a gravity, cut from the source before
    /// the resize (imgproxy's `crop:width:height:gravity`): a side under 1 is a fraction of
    /// the source's, 0 the whole side, from 1 on a number of pixels.
    struct SizedCrop: Sendable, Hashable {
        var width: Double
        var height: Double
        var alignment = Alignment.center
        var focus: Focus?
    }

    /// What is done to the canvas after everything else (imgproxy's `extend`, `padding` and
    /// `background`): the image is placed on a box at least `width` × `height` (0 leaves a side
    /// as it is) at `alignment`, bordered by `padding`, and its transparent pixels and the new
    /// area painted in `background` (transparent when `nil`).
    struct Canvas: Sendable, Hashable {
        var width = 0
        var height = 0
        var alignment = Alignment.center
        /// Top, right, bottom, left, in output pixels.
        var padding = [0, 0, 0, 0]
        /// Red, green and blue.
        var background: [UInt8]?
        /// The background is the image's mean colour (thumbor's `fill(auto)`), measured when it is drawn.
        var meanBackground = false
        /// The image's own transparent pixels stay so; only the new area is painted (thumbor's
        /// `fill` without `fill_transparent`).
        var keepsTransparency = false
        /// The background is the image itself, blurred and stretched over the canvas (thumbor's
        /// `fill(blur)`): see ``RecipeCanvas/backdrop(of:width:height:)``.
        var blurredBackground = false

        /// The key's words for it.
        var key: String {
            var text = "canvas=\(width)x\(height)@\(alignment.horizontal),\(alignment.vertical)"
            text += ",pad=" + padding.map(String.init).joined(separator: ",")
            if let background { text += ",bg=" + background.map { String($0) }.joined(separator: ",") }
            if meanBackground { text += ",bg=mean" }
            if blurredBackground { text += ",bg=blur" }
            if keepsTransparency { text += ",keepalpha" }
            return text
        }
    }

    /// A rectangle in source pixels.
    struct Rectangle: Sendable, Hashable {
        var x: Int, y: Int, width: Int, height: Int
    }

    var source: ProxyRequest.Source
    /// A border of one colour cut away first of all (thumbor's and imgproxy's `trim`).
    var trim: Trim?
    /// Cut from the source before anything else but the trim, in source pixels; clamped to the image.
    var crop: Rectangle?
    /// The box in output pixels; `nil` leaves a side free (it follows the aspect ratio).
    var width: Int?
    var height: Int?
    /// A side that is the (cropped) source's own size, known only once decoded (thumbor `orig`).
    var widthIsOriginal = false
    var heightIsOriginal = false
    var box: Box = .fit
    /// Swap the box when its orientation differs from the image's (thumbor `adaptive-`).
    var adaptive = false
    /// Where a `fill` keeps its window: 0 is left/top, 1 right/bottom, in halves.
    var alignment = Alignment.center
    /// Where a `fill` centres its window instead of ``alignment`` (imgproxy's focus point).
    var focus: Focus?
    /// Cut from the source before the resize, after ``crop`` (imgproxy's `crop`).
    var sizedCrop: SizedCrop?
    /// Extend, padding and background, last of all (imgproxy's).
    var canvas: Canvas?
    /// The quality of each output format where it differs from ``quality`` (imgproxy's
    /// `format_quality`): the format is known only once the source is decoded.
    var formatQuality: [ImageFormat: Int] = [:]
    var upscale = false
    /// The smallest output width and height, in output pixels (imgproxy's `min-width` and
    /// `min-height`): the scale is raised to reach them, enlarging if need be, and a given side
    /// of the box then crops what grew past it. 0 for none.
    var minimumWidth = 0
    var minimumHeight = 0
    /// The output scaled once more by this factor after the resize (thumbor `proportion()`).
    var proportion = 1.0
    var flipHorizontal = false
    var flipVertical = false
    /// Clockwise quarter turns, 0 to 3.
    var quarterTurns = 0
    var grayscale = false
    /// thumbor's `equalize()`: after the colour filters, before ``grayscale``.
    var equalizes = false
    /// thumbor's `sharpen(amount,radius,luminance_only)`, after the blur.
    var sharpen: ThumborSharpen?
    /// imgproxy's `sharpen` sigma (0: none), after the blur.
    var sharpenSigma = 0.0
    /// imgproxy's `pixelate` block size (0 or 1: none), after the sharpening.
    var pixelate = 0
    /// thumbor's `noise(amount[,seed])`, after the sharpening and pixelation.
    var noise: Noise?
    /// thumbor's `round_corner(…)`, last of all (after the canvas).
    var roundCorner: ThumborRoundCorner?
    /// thumbor's colour filters, in the URL's order, after the geometry and before ``grayscale``.
    var colorFilters: [ThumborColorFilter.Operation] = []
    /// thumbor's `convolution()` kernels, in the URL's order, after the colour filters.
    var convolutions: [ThumborConvolution] = []
    /// thumbor's `frame(url)`: the nine-patch drawn around the output, after the round corners
    /// and before the watermark (``ThumborFrame``); loaded as a source is.
    var frame: ProxyRequest.Source?
    /// The Gaussian sigma in output pixels.
    var blur = 0.0
    /// A `fill` window placed where the image draws the eye (thumbor's `smart`, imgproxy's
    /// `g:sm`), unless a ``focus`` or ``focalRegions`` are given.
    var isSmart = false
    /// Regions of the source, in its pixels, that a `fill` window centres on, weighted by their
    /// areas (thumbor's `focal()`): they override ``alignment`` and ``isSmart``.
    var focalRegions: [Rectangle] = []
    /// An image drawn over the output, last of all.
    var watermark: Watermark?
    /// The most bytes a lossy output (JPEG, WebP, AVIF) may take: its quality is lowered until
    /// it fits, or to 1 (thumbor's `max_bytes`, imgproxy's `mb`). Other formats are left as they are.
    var maxBytes: Int?
    /// The output format; `nil` is the source's own (or one negotiated from `Accept`).
    var format: ImageFormat?
    /// Whether a format may be chosen from the client's `Accept` when ``format`` is `nil`
    /// (``ImageProxy/Configuration/autoFormats``).
    var negotiatesFormat = false
    var quality = 80
    /// Leave the source's ICC profile out of the output (the encoders embed it otherwise).
    var stripsICC = false
    /// A video source's poster time in seconds; `nil` for the first frame.
    var videoTime: Double?
    /// A video source's animated preview from ``videoTime``; `nil` for the poster.
    var videoClip: VideoClip?
    /// A PDF source's page, from 1; `nil` for the first.
    var page: Int?
    /// Which URL dialect asked (labels metrics and logs; not part of the key).
    var dialect = "image"

    /// thumbor's `noise()` as the URL gives it; the generator's seed is derived from it and the
    /// source (``ImageProxy/processors(for:maximumDimension:)``).
    struct Noise: Sendable, Hashable {
        var amount: Int
        var seed = 0
    }

    struct Alignment: Sendable, Hashable {
        var horizontal: Int
        var vertical: Int
        static let center = Alignment(horizontal: 1, vertical: 1)
    }

    init(source: ProxyRequest.Source) {
        self.source = source
    }

    /// Whether both sides of the box are given (directly or as the source's own).
    var hasBox: Bool { (width != nil || widthIsOriginal) && (height != nil || heightIsOriginal) }

    /// Whether the output may be a window of the image, so that where the window goes
    /// (alignment, focus, smart, focal regions) changes the pixels: a box that crops, or a
    /// minimum size that can grow the image past a given side.
    var windowMatters: Bool { (hasBox && box.crops) || minimumWidth > 0 || minimumHeight > 0 }

    /// ``videoTime`` when it asks for other than the first frame, the default; `nil` otherwise:
    /// what enters the key and the request, so that `t=0` and no `t` are one variant.
    var chosenVideoTime: Double? { videoTime.flatMap { $0 > 0 ? $0 : nil } }
    /// ``page`` when it asks for other than the first page, the default; `nil` otherwise.
    var chosenPage: Int? { page.flatMap { $0 > 1 ? $0 : nil } }

    /// Whether the plain resize of the `/image` dialect renders it (and may decode at reduced
    /// size); anything else needs ``RecipeGeometry``, which sees the decoded size.
    var isPlainResize: Bool {
        trim == nil && crop == nil && sizedCrop == nil && !widthIsOriginal && !heightIsOriginal && !upscale && proportion == 1
            && minimumWidth == 0 && minimumHeight == 0
            && (!hasBox || (!adaptive && (box == .fit || box == .stretch
                || (box == .fill && alignment == .center && focus == nil && !isSmart && focalRegions.isEmpty))))
    }

    /// The key of one output: the source and everything that changes the bytes, in a fixed order,
    /// with `format` as negotiated (`webp`, or `source` for "the source's own format"). The
    /// fields of `/image` come first and exactly as they always were, so that variants cached
    /// before recipes existed are still found; the others follow only when they differ from
    /// the default.
    func variantKey(format negotiated: String) -> String {
        let lossy = negotiated == "jpeg" || negotiated == "webp" || negotiated == "source"
        var fields = [
            Self.sourceKey(source),
            "w=\(width ?? 0)", "h=\(height ?? 0)",
            "fit=\(hasBox ? box.rawValue : "contain")",
            "blur=\(ProxyRequest.text(blur))",
            "q=\(lossy ? quality : 0)",
            "format=\(negotiated)",
        ]
        if let trim { fields.append(trim.key) }
        if let crop { fields.append("crop=\(crop.x),\(crop.y),\(crop.width),\(crop.height)") }
        if widthIsOriginal || heightIsOriginal { fields.append("orig=\(widthIsOriginal ? "w" : "")\(heightIsOriginal ? "h" : "")") }
        if adaptive, hasBox, box != .stretch { fields.append("adaptive") }
        if windowMatters, alignment != .center { fields.append("align=\(alignment.horizontal),\(alignment.vertical)") }
        if windowMatters, let focus { fields.append("focus=\(ProxyRequest.text(focus.x)),\(ProxyRequest.text(focus.y))") }
        if windowMatters, isSmart, focus == nil, focalRegions.isEmpty { fields.append("smart") }
        if windowMatters, focus == nil, !focalRegions.isEmpty {
            fields.append("focal=" + focalRegions.map { "\($0.x),\($0.y),\($0.width),\($0.height)" }.joined(separator: ";"))
        }
        if let sizedCrop {
            var field = "gcrop=\(ProxyRequest.text(sizedCrop.width))x\(ProxyRequest.text(sizedCrop.height))@\(sizedCrop.alignment.horizontal),\(sizedCrop.alignment.vertical)"
            if let focus = sizedCrop.focus { field += "fp\(ProxyRequest.text(focus.x)),\(ProxyRequest.text(focus.y))" }
            fields.append(field)
        }
        if upscale { fields.append("up") }
        if minimumWidth > 0 || minimumHeight > 0 { fields.append("min=\(minimumWidth)x\(minimumHeight)") }
        if proportion != 1 { fields.append("prop=\(ProxyRequest.text(proportion))") }
        if flipHorizontal || flipVertical { fields.append("flip=\(flipHorizontal ? "h" : "")\(flipVertical ? "v" : "")") }
        if quarterTurns % 4 != 0 { fields.append("rot=\(quarterTurns % 4)") }
        if !colorFilters.isEmpty { fields.append("adj=" + colorFilters.map(\.key).joined(separator: ",")) }
        if !convolutions.isEmpty { fields.append(convolutions.map(\.key).joined(separator: "+")) }
        if equalizes { fields.append("eq") }
        if grayscale { fields.append("gray") }
        if let sharpen { fields.append("sharpen=\(ProxyRequest.text(sharpen.amount)),\(ProxyRequest.text(sharpen.radius)),\(sharpen.luminanceOnly ? 1 : 0)") }
        if sharpenSigma > 0 { fields.append("sh=\(ProxyRequest.text(sharpenSigma))") }
        if pixelate > 1 { fields.append("pix=\(pixelate)") }
        if let noise { fields.append("noise=\(noise.amount),\(noise.seed)") }
        if let roundCorner {
            fields.append("round=\(roundCorner.horizontalRadius)|\(roundCorner.verticalRadius),"
                + roundCorner.colour.map(String.init).joined(separator: ",") + (roundCorner.transparent ? ",t" : ""))
        }
        if let videoTime = chosenVideoTime { fields.append("t=\(ProxyRequest.text(videoTime))") }
        if let videoClip { fields.append("clip=\(ProxyRequest.text(videoClip.duration))@\(ProxyRequest.text(videoClip.framesPerSecond))") }
        if let page = chosenPage { fields.append("page=\(page)") }
        if let maxBytes { fields.append("mb=\(maxBytes)") }
        if stripsICC { fields.append("noicc") }
        if let canvas { fields.append(canvas.key) }
        if let frame { fields.append("frame=" + Self.sourceKey(frame)) }
        if let watermark { fields.append(watermark.key) }
        if lossy, !formatQuality.isEmpty {
            fields.append("fq=" + formatQuality.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue):\($0.value)" }.joined(separator: ","))
        }
        return fields.joined(separator: "|")
    }

    /// The source as a stable string: the cache key of the original bytes' variants.
    static func sourceKey(_ source: ProxyRequest.Source) -> String {
        switch source {
        case .remote(let url): url.absoluteString
        case .local(let path): "local:///" + path
        }
    }
}

extension ProxyRequest {
    /// This `/image` request as the shared description of the work.
    var recipe: RenderRecipe {
        var recipe = RenderRecipe(source: source)
        recipe.width = pixelWidth
        recipe.height = pixelHeight
        recipe.box = switch fit {
        case .contain: .fit
        case .cover: .fill
        case .fill: .stretch
        }
        recipe.blur = pixelBlur
        recipe.format = outputFormat.imageFormat
        recipe.negotiatesFormat = outputFormat == .auto
        recipe.quality = quality
        recipe.videoTime = videoTime
        recipe.videoClip = videoClip
        recipe.page = page
        return recipe
    }
}
