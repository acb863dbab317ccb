import DequeModule

/// ``AnimatedImagePlayer``'s state, behind its lock: what is on screen, the frames decoded
/// ahead, and where decoding stands.
struct PlayerState {
    enum Phase {
        /// Not playing and not decoding; `remaining` is what the frame on screen has left.
        case stopped(remaining: Duration?)
        /// Not advancing, still decoding ahead.
        case paused(remaining: Duration?)
        case playing
        /// Every play is over.
        case finished
    }

    /// A frame and its place in the animation.
    struct Placed {
        var frame: AnimatedImage.Frame
        /// Within a play.
        var index: Int
    }

    /// What the buffer holds ahead of the frame on screen.
    enum Entry {
        case frame(Placed)
        /// The play that the frames before this belong to ends here.
        case endOfPlay
    }

    /// A frame the decoding job is to decode next.
    struct Wanted {
        var play: Int
        var index: Int
        /// Bumped whenever the frames ahead are dropped, so that a frame decoded for an
        /// earlier plan is dropped too.
        var generation: Int
    }

    var phase = Phase.stopped(remaining: nil)
    var current: Placed?
    /// When the frame on screen ends, while playing.
    var due: ContinuousClock.Instant?
    var ahead = Deque<Entry>()
    var loopsCompleted = 0

    var bufferedBytes = 0
    var peakBufferedBytes = 0
    /// The bytes one frame is expected to take: the canvas as RGBA until a frame says more.
    var frameBytes: Int

    var isDecoding = false
    /// The next frame to decode: the one after the last in ``ahead`` (or on screen).
    var next = (play: 0, index: 0)
    var generation = 0
    /// Every frame still to play has been decoded (the last play's end reached) or decoding
    /// failed.
    var decodedAll = false
    var error: ImageError?
    var idleWaiters: [CheckedContinuation<Void, Never>] = []

    init(frameBytes: Int) {
        self.frameBytes = frameBytes
    }

    /// The frames in ``ahead`` (its entries less the ends of plays).
    private(set) var framesAhead = 0
    /// The frames of one play, once decoding has reached the end of the first.
    private(set) var framesPerPlay: Int?

    private var isStopped: Bool {
        switch phase {
        case .stopped, .finished: return true
        case .paused, .playing: return false
        }
    }

    /// Whether another frame should be decoded now: playback wants frames, some are left, and
    /// one more fits in `limit` (or none is buffered ahead: the next frame is always allowed).
    /// No more than one play is decoded ahead: a short animation would otherwise fill the
    /// limit with copies of its frames, decoding many plays ahead for nothing.
    private func wantsFrame(limit: Int) -> Bool {
        guard !isStopped, !decodedAll else { return false }
        if let framesPerPlay, framesAhead >= framesPerPlay { return false }
        let (sum, overflow) = bufferedBytes.addingReportingOverflow(frameBytes)
        return (!overflow && sum <= limit) || framesAhead == 0
    }

    /// Takes the decoding job when it should run and is not running: `true` means the caller
    /// must start it.
    mutating func claimDecoding(limit: Int) -> Bool {
        guard !isDecoding, wantsFrame(limit: limit) else { return false }
        isDecoding = true
        return true
    }

    /// The decoding job's next frame, or `nil`, releasing the job, when it should stop.
    mutating func nextDecode(limit: Int) -> Wanted? {
        guard wantsFrame(limit: limit) else {
            isDecoding = false
            let waiters = idleWaiters
            idleWaiters = []
            for waiter in waiters { waiter.resume() }
            return nil
        }
        return Wanted(play: next.play, index: next.index, generation: generation)
    }

    /// Files what the decoding job made of `wanted`.
    mutating func deliver(_ decoded: Result<AnimatedImage.Frame?, any Error>, for wanted: Wanted, loopCount: Int) {
        guard wanted.generation == generation else { return }
        switch decoded {
        case .success(let frame?):
            ahead.append(.frame(Placed(frame: frame, index: wanted.index)))
            framesAhead += 1
            bufferedBytes += frame.bitmap.cost
            peakBufferedBytes = max(peakBufferedBytes, bufferedBytes)
            frameBytes = max(frameBytes, frame.bitmap.cost)
            next.index += 1
        case .success(nil):
            guard wanted.index > 0 else {
                fail(ImageError.corruptData("the animation has no frame"))
                return
            }
            ahead.append(.endOfPlay)
            framesPerPlay = wanted.index
            next = (next.play + 1, 0)
            if loopCount != 0, next.play >= loopCount { decodedAll = true }
        case .failure(let error):
            fail(error as? ImageError ?? .corruptData("\(error)"))
        }
    }

    private mutating func fail(_ error: ImageError) {
        self.error = error
        // Playback shows what was decoded, then ends there.
        ahead.append(.endOfPlay)
        decodedAll = true
    }

    /// Drops the frames decoded ahead; decoding resumes with the frame after the one on screen.
    /// After a failed decode nothing is dropped: no more frames would be decoded, and the
    /// frames before the failure are what is left to play.
    mutating func dropFramesAhead() {
        guard error == nil else { return }
        for entry in ahead {
            if case .frame(let placed) = entry { bufferedBytes -= placed.frame.bitmap.cost }
        }
        ahead.removeAll()
        framesAhead = 0
        // Decoding on from the frame on screen reaches the end of its play (and whether that
        // was the last) again.
        decodedAll = false
        next = (play: loopsCompleted, index: current.map { $0.index + 1 } ?? 0)
        generation += 1
    }

    /// See ``AnimatedImagePlayer/advance(to:)``.
    mutating func advance(to now: ContinuousClock.Instant, loopCount: Int) -> AnimatedImage.Frame? {
        guard case .playing = phase else { return nil }
        guard let current else {
            // Nothing shown yet: the first frame, as soon as it is decoded.
            guard case .frame(let first)? = ahead.first else { return nil }
            ahead.removeFirst()
            framesAhead -= 1
            self.current = first
            due = now + first.frame.displayDuration
            return first.frame
        }
        if let due, now < due { return nil }
        if case .endOfPlay? = ahead.first {
            ahead.removeFirst()
            loopsCompleted += 1
            if error != nil || (loopCount != 0 && loopsCompleted >= loopCount) {
                phase = .finished
                due = nil
                return nil
            }
        }
        guard case .frame(let next)? = ahead.first else { return nil }
        ahead.removeFirst()
        framesAhead -= 1
        bufferedBytes -= current.frame.bitmap.cost
        self.current = next
        let duration = next.frame.displayDuration
        // On schedule, or late by less than the new frame: keep the schedule. Later (the
        // display stalled, or the frame was not decoded in time): start it again from now.
        if let due, now - due < duration {
            self.due = due + duration
        } else {
            due = now + duration
        }
        return next.frame
    }
}
