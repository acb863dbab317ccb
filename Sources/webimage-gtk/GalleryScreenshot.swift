import CGTK
import Foundation
import WebImage

/// `--screenshot FILE`: the window as GTK draws it, once every thumbnail on screen has loaded
/// (or failed) and finished fading in, written as PNG. How the README's screenshot is made,
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
        var waiting = Int.max
        while waiting > 0 {
            guard ContinuousClock.now < deadline else { throw Failure.notSettled(waiting) }
            await FrameClock.nextFrame(of: gallery.content)
            let visible = gallery.grid.visibleCells(in: gallery.content).cells
            waiting = visible.isEmpty ? Int.max : visible.count { cell in
                !cell.cell.isSettled || gtk_widget_get_opacity(cell.cell.view.picture) < 1
            }
        }
        gallery.updateStatus()
        await FrameClock.nextFrame(of: gallery.content)
        guard let pixels = WidgetPixels(of: gallery.content) else { throw Failure.notDrawn }
        let png = try CoderRegistry.system().encode(ImageContainer(image: try pixels.rgbBitmap()), as: .png)
        try png.write(to: URL(fileURLWithPath: path))
    }
}
