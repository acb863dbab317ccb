import CGTK
import WebImage

/// An ``AnimatedImagePlayer`` shown in a `GtkPicture`, paced by the picture's frame clock:
/// on every frame GTK draws, the player is asked for the frame due, and a new one replaces the
/// picture's texture. GTK stops a widget's tick callbacks while it is unmapped, and the view
/// stops the player then, so a hidden animation neither draws nor decodes.
@MainActor
final class PictureAnimation {
    let player: AnimatedImagePlayer
    private let picture: UnsafeMutablePointer<GtkWidget>
    private var tick: guint = 0
    /// Called for every frame shown, with its position in the play and how long after its due
    /// time it reached the picture.
    var onFrame: (@MainActor (_ index: Int, _ lateness: Duration) -> Void)?

    init(player: AnimatedImagePlayer, picture: UnsafeMutablePointer<GtkWidget>) {
        self.player = player
        self.picture = picture
    }

    isolated deinit {
        removeTick()
        player.stop()
    }

    /// Starts or resumes playback; does nothing once the animation has finished.
    func play() {
        guard !player.isFinished else { return }
        player.play(at: .now)
        if tick == 0 {
            tick = gtk_widget_add_tick_callback(picture, Self.onTick, Unmanaged.passUnretained(self).toOpaque(), nil)
        }
    }

    /// Stops playback and decoding ahead, keeping the frame on screen (``play()`` resumes).
    func stop() {
        removeTick()
        player.stop()
    }

    private func removeTick() {
        guard tick != 0 else { return }
        gtk_widget_remove_tick_callback(picture, tick)
        tick = 0
    }

    /// One frame of GTK's clock. Returns whether to keep ticking.
    private func step() -> Bool {
        // The schedule is the player's (ContinuousClock); the frame clock only says when to look.
        let due = player.nextFrameDue
        let now = ContinuousClock.now
        if let frame = player.advance(to: now) {
            PictureAnimation.show(frame.bitmap, in: picture)
            onFrame?(player.currentFrameIndex ?? 0, due.map { max(.zero, now - $0) } ?? .zero)
        }
        guard player.isFinished else { return true }
        tick = 0
        return false
    }

    /// Puts `bitmap` on `picture` as a new texture.
    static func show(_ bitmap: Bitmap?, in picture: UnsafeMutablePointer<GtkWidget>) {
        if let texture = bitmap?.makeTexture() {
            gtk_picture_set_paintable(OpaquePointer(picture), texture)
            g_object_unref(UnsafeMutableRawPointer(texture))
        } else {
            gtk_picture_set_paintable(OpaquePointer(picture), nil)
        }
    }

    private static let onTick: @convention(c) (UnsafeMutablePointer<GtkWidget>?, OpaquePointer?, gpointer?) -> gboolean = { _, _, data in
        guard let address = data.map({ UInt(bitPattern: $0) }) else { return 0 }
        // GTK calls tick callbacks on the main thread; the callback is removed before the
        // animation goes, so the pointer is alive.
        return MainActor.assumeIsolated {
            Unmanaged<PictureAnimation>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeUnretainedValue().step() ? 1 : 0
        }
    }
}
