import CGTK
import Foundation
import WebImage

/// `--screenshot FILE`: the window as GTK draws it, once every thumbnail on screen has loaded
/// (or failed) and finished fading in, written as PNG. How docs/gtk-gallery.png is made,
/// under Xvfb (`make gallery` without a display).
@MainActor
enum GalleryScreenshot {
    enum Failure: Error, CustomStringConvertible {
        case notSettled(Int)
        case notDrawn

        var description: String {
            switch self {
            case .notSettled(let count): "\(count) thumbnails on screen were still loading after a minute"
            case .notDrawn: "the window could not be drawn"
            }
        }
    }

    static func take(of gallery: GalleryWindow, to path: String) async throws {
        let deadline = ContinuousClock.now + .seconds(60)   // a safety net, not a pace
        var statusUpdated = false
        var pixels: WidgetPixels?
        var failure: Failure?
        await FrameClock.afterEachPaint(of: gallery.content) {
            if statusUpdated {
                // The window, not its content: the window draws the theme's background behind the bars.
                pixels = WidgetPixels(of: gallery.windowWidget)
                return false
            }
            let visible = gallery.grid.visibleCells(in: gallery.content).cells
            let waiting = visible.count { !$0.cell.isSettled || gtk_widget_get_opacity($0.cell.view.picture) < 1 }
            if !visible.isEmpty, waiting == 0 {
                gallery.updateStatus()   // painted in the next frame, which is read back
                statusUpdated = true
            } else if ContinuousClock.now > deadline {
                failure = .notSettled(waiting)
                return false
            }
            return true
        }
        if let failure { throw failure }
        guard let pixels else { throw Failure.notDrawn }
        let png = try CoderRegistry.system().encode(ImageContainer(image: try pixels.rgbBitmap()), as: .png)
        try png.write(to: URL(fileURLWithPath: path))
    }
}
