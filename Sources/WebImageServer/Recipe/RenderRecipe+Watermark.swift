import Foundation
import WebImage

extension RenderRecipe {
    /// An image drawn over the output, last of all: thumbor's `watermark()` filter and
    /// imgproxy's `watermark` option. Its image is loaded through the same pipeline as a
    /// source (the same origin guard, caches and limits); ``WatermarkOverlay`` draws it.
    struct Watermark: Sendable, Hashable {
        /// Where the watermark's image comes from.
        enum Origin: Sendable, Hashable {
            /// A source as the main image's (thumbor's filter names a URL or, with
            /// `--origin-dir`, a file there).
            case source(ProxyRequest.Source)
            /// The proxy's configured imgproxy watermark (`IMGPROXY_WATERMARK_PATH`, `_URL` or
            /// `_DATA`), identified in the key by a digest of that configuration.
            case configured(digest: String)
        }

        /// Where the watermark goes along one axis of the output.
        enum Placement: Sendable, Hashable {
            /// This far from the left (top) edge.
            case start(Length)
            /// This far from the right (bottom) edge.
            case end(Length)
            /// Centred, then moved by this much (imgproxy's offsets from the centre).
            case center(Length)
            /// thumbor's `repeat`: as many copies as fit, spread over the side.
            case spread
            /// imgproxy's `re`: copies from the edge on, this many pixels apart.
            case tiled(spacing: Int)
        }

        /// A distance: pixels, or a fraction of the output's side (thumbor's `20p`, imgproxy's
        /// offsets under 1).
        enum Length: Sendable, Hashable {
            case pixels(Int)
            case fraction(Double)

            /// In pixels of a side of `side` pixels, rounded as thumbor does (halves up).
            func pixels(of side: Int) -> Int {
                switch self {
                case .pixels(let pixels): pixels
                case .fraction(let fraction): Int((Double(side) * fraction + (fraction < 0 ? -1e-5 : 1e-5)).rounded())
                }
            }

            var key: String {
                switch self {
                case .pixels(let pixels): "\(pixels)"
                case .fraction(let fraction): ProxyRequest.text(fraction) + "f"
                }
            }
        }

        /// How the watermark's own alpha is changed.
        enum Opacity: Sendable, Hashable {
            /// thumbor's `alpha`: this percentage of 255 taken off every alpha value.
            case lessTransparency(percent: Int)
            /// imgproxy's `opacity`: every alpha value times this factor (0 to 1).
            case scaled(Double)
        }

        var origin: Origin
        var horizontal: Placement
        var vertical: Placement
        var opacity: Opacity
        /// The largest share of the output's width (height) the watermark may take, its aspect
        /// ratio kept (thumbor's `w_ratio`/`h_ratio`, imgproxy's `scale` for both); `nil` for
        /// both draws it at its own size.
        var widthShare: Double?
        var heightShare: Double?

        /// The key's words for it.
        var key: String {
            let origin: String = switch origin {
            case .source(let source): RenderRecipe.sourceKey(source)
            case .configured(let digest): "configured:" + digest
            }
            func placement(_ placement: Placement) -> String {
                switch placement {
                case .start(let length): "s" + length.key
                case .end(let length): "e" + length.key
                case .center(let length): "c" + length.key
                case .spread: "spread"
                case .tiled(let spacing): "tile\(spacing)"
                }
            }
            let opacity: String = switch opacity {
            case .lessTransparency(let percent): "a\(percent)"
            case .scaled(let factor): "o" + ProxyRequest.text(factor)
            }
            let shares = [widthShare, heightShare].map { $0.map(ProxyRequest.text) ?? "-" }.joined(separator: ",")
            return "wm=\(origin)@\(placement(horizontal)),\(placement(vertical)),\(opacity),\(shares)"
        }
    }
}
