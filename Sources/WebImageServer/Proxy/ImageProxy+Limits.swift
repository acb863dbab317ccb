extension ImageProxy {
    /// Everything a proxy bounds, in one place: what a request may ask for, what a source may
    /// cost, how many requests run at once and how connections are held. Set it as
    /// ``Configuration/limits``; ``ProxyServer`` applies ``connections``.
    ///
    /// ```swift
    /// var configuration = ImageProxy.Configuration()
    /// configuration.limits.maximumDimension = 2048
    /// configuration.limits.maximumSourceBytes = 10 << 20
    /// configuration.limits.maximumConcurrentRequests = 16
    /// configuration.limits.connections.maximumConnections = 1_000
    /// ```
    public struct Limits: Sendable, Hashable {
        /// The largest output width or height, in pixels (after `dpr`). Default: 4096.
        public var maximumDimension = 4096
        /// The largest `dpr`. Default: 4.
        public var maximumDPR = 4.0
        /// The largest `blur` sigma, in CSS pixels. Default: 100.
        public var maximumBlur = 100.0
        /// The largest source accepted, in bytes (downloads and local files). Default: 25 MiB.
        public var maximumSourceBytes = 25 << 20
        /// The largest source accepted, in pixels (width × height, read from the header before
        /// decoding). Default: 50 megapixels.
        public var maximumSourcePixels = 50_000_000
        /// The most bytes the decoded frames of one animation may take. Default: 256 MiB.
        public var maximumAnimationBytes = 256 << 20
        /// The most work one animation's decode may do, as canvas pixels composed (canvas
        /// width × height × frames): every frame is composed at canvas size whatever the output
        /// size, so a small file can ask for minutes of CPU. Default: 2^28 (about 268 million
        /// pixels: 128 frames of a 1080p canvas), about a second of one core.
        public var maximumAnimationPixels = 1 << 28
        /// Image requests in progress at once; more are answered 503. Default: 32.
        public var maximumConcurrentRequests = 32
        /// The timeouts and the cap on open connections that keep idle or slow clients from
        /// using up the process's file descriptors (applied by ``ProxyServer``).
        public var connections = ConnectionLimits()

        public init() {}
    }
}
