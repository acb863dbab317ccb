import Synchronization

/// One binding's progressive blur (``ImageBindingOptions/progressiveBlur``): each preview is
/// blurred by how much of the file is still missing, so the picture sharpens as scans arrive.
///
/// The blur's standard deviation is 2 % of the preview's longer side times the missing fraction
/// of the bytes (8 px for the first scans of a 400 px image, none at the end). With no length
/// announced, it halves with each preview instead. The final image is never touched.
final class ProgressiveBlur: Sendable {
    /// The blur of a preview with nothing of the file yet, as a fraction of its longer side.
    static let strongest = 0.02

    private struct Progress {
        var received = 0
        var expected: Int?
        var previews = 0
    }

    private let progress = Mutex(Progress())

    /// `event`, with a preview's image blurred; other events as they are. Runs on the
    /// pipeline's thread, before the event is delivered.
    func apply(to event: ImageTask.Event) -> ImageTask.Event {
        switch event {
        case .progress(let received, let expected):
            progress.withLock { $0.received = received; $0.expected = expected }
            return event
        case .preview(var response):
            let image = response.container.image
            let radius = Self.strongest * Double(max(image.width, image.height)) * missingFraction()
            guard radius >= 0.5, let blurred = try? image.blurred(radius: radius) else { return event }
            response.container.image = blurred
            return .preview(response)
        default:
            return event
        }
    }

    /// The share of the file still to come: from the byte counts when the length is known,
    /// else 1/2, 1/4… by preview.
    private func missingFraction() -> Double {
        progress.withLock { progress in
            progress.previews += 1
            if let expected = progress.expected, expected > 0 {
                return max(0, 1 - Double(progress.received) / Double(expected))
            }
            return 1 / Double(1 << min(progress.previews, 30))
        }
    }
}
