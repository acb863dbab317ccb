import WebImage

extension ImageProxy {
    /// The outcome of one request.
    ///
    /// ```swift
    /// let output = try await proxy.image(for: try ProxyRequest(query: "url=https%3A%2F%2Fexample.com%2Fa.jpg&w=300"), accept: [])
    /// print(output.image.contentType, output.source, output.isComplete)   // image/jpeg miss true
    /// ```
    public struct Output: Sendable {
        public var image: EncodedImage
        public var source: VariantSource
        /// Whether the format was picked from `Accept` (the response then carries
        /// `Vary: Accept`).
        public var variesOnAccept: Bool
        /// `false` when the source was cut short or damaged and the image shows only what it
        /// held (`ImageContainer/isComplete`): such an output is not kept, and the response
        /// tells caches not to keep it either.
        public var isComplete = true
        /// `true` when the variant came from the ``Configuration/resultStore`` (another instance
        /// rendered it); ``source`` is then ``VariantSource/disk``.
        public var isFromResultStore = false

        /// What `X-Cache`, the log and the metrics say: `memory`, `disk`, `store` or `miss`.
        var cacheLabel: String { isFromResultStore ? "store" : source.rawValue }
    }
}
