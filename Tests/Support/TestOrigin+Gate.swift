import Synchronization

extension TestOrigin {
    /// Holds the responses to one path until the test lets them go, so that a test decides
    /// exactly when a download can finish (or how far it gets) without sleeping.
    ///
    /// ```swift
    /// let gate = origin.gate("/first.png")
    /// async let first = loader.load(ImageLoadRequest(url: origin.url("/first.png")), context: context)
    /// await origin.waitForRequests(path: "/first.png", count: 1)   // it is now held
    /// gate.open()
    /// ```
    public final class Gate: Sendable {
        /// How much of a held response the server sends before holding.
        public enum Mode: Sendable, Equatable {
            /// Nothing: not even the status line.
            case holdHeaders
            /// The headers and the first `bytes` of the body, then hold.
            case sendHeadersThenHold(bytes: Int)
        }

        public let mode: Mode

        private struct State {
            var isOpen = false
            var held: [@Sendable () -> Void] = []
        }

        private let state = Mutex(State())

        init(mode: Mode) {
            self.mode = mode
        }

        /// Releases every held response, and lets every later one through at once.
        public func open() {
            let held = state.withLock { state in
                state.isOpen = true
                defer { state.held = [] }
                return state.held
            }
            for resume in held { resume() }
        }

        /// Releases the response held longest, leaving the gate closed for the others.
        /// Returns `false` when none was held.
        @discardableResult
        public func releaseOne() -> Bool {
            let first: (@Sendable () -> Void)? = state.withLock { state in
                state.held.isEmpty ? nil : state.held.removeFirst()
            }
            first?()
            return first != nil
        }

        /// How many responses are held right now.
        public var heldCount: Int { state.withLock { $0.held.count } }

        /// Runs `resume` now if the gate is open, else when it opens (or releases this one).
        func pass(_ resume: @escaping @Sendable () -> Void) {
            let runNow = state.withLock { state in
                if state.isOpen { return true }
                state.held.append(resume)
                return false
            }
            if runNow { resume() }
        }
    }
}
