import WebImage

extension ProxyRequest {
    /// The format asked for with `format=`: `auto`, or one output format. A struct rather than
    /// an enum so that formats can be added without breaking a `switch` (``Format``, the enum
    /// it replaces, could not name AVIF).
    ///
    /// ```swift
    /// let request = try ProxyRequest(query: "url=https%3A%2F%2Fexample.com%2Fa.jpg&format=avif")
    /// print(request.outputFormat == .avif)   // true
    /// ```
    public struct OutputFormat: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String

        /// A format this proxy names, by its parameter value (`jpg` is `jpeg`); `nil` otherwise.
        public init?(rawValue: String) {
            let name = rawValue == "jpg" ? "jpeg" : rawValue
            guard Self.all.contains(where: { $0.rawValue == name }) else { return nil }
            self.rawValue = name
        }

        private init(_ name: String) {
            rawValue = name
        }

        /// The first of ``ImageProxy/Configuration/autoFormats`` the client's `Accept` names,
        /// else the source's own format (JPEG, or PNG with transparency, for formats not every
        /// client shows).
        public static let auto = OutputFormat("auto")
        public static let jpeg = OutputFormat("jpeg")
        public static let png = OutputFormat("png")
        public static let webp = OutputFormat("webp")
        public static let gif = OutputFormat("gif")
        public static let avif = OutputFormat("avif")
        public static let jxl = OutputFormat("jxl")

        /// Every value `format=` takes.
        public static let all: [OutputFormat] = [.auto, .jpeg, .png, .webp, .gif, .avif, .jxl]

        public var description: String { rawValue }

        /// The format to encode as; `nil` for ``auto``.
        public var imageFormat: ImageFormat? {
            self == .auto ? nil : ImageFormat(rawValue: rawValue)
        }
    }
}
