import WebImageCore

// The 1.0 spellings that 1.1 replaced, kept until 2.0 so that 1.0 code still compiles (with a
// warning that names the replacement). Each forwards to the API that replaced it.

extension JPEGDecoder {
    /// Converts to sRGB even when the options ask to preserve the stored colours.
    @available(*, deprecated, message: "Set ImageDecodingOptions.colorSpace: .sRGB (the default) converts every JPEG, .preserve keeps the stored values")
    public init(convertsToSRGB: Bool) {
        self.init()
        alwaysConvertsToSRGB = convertsToSRGB
    }

    /// Whether this decoder converts to sRGB even when the options ask to preserve the colours.
    @available(*, deprecated, message: "Set ImageDecodingOptions.colorSpace instead")
    public var convertsToSRGB: Bool {
        get { alwaysConvertsToSRGB }
        set { alwaysConvertsToSRGB = newValue }
    }
}

/// The SVG renderer child's 1.x name: the same child now draws PDF pages too.
@available(*, deprecated, renamed: "RenderProcess")
public typealias SVGRenderProcess = RenderProcess
