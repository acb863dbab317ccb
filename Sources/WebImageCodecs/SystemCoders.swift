import WebImageCore

extension CoderRegistry {
    /// A registry with every coder this module provides. Each call makes a new registry, so
    /// callers can register their own coders without affecting others.
    ///
    /// ```swift
    /// let image = try CoderRegistry.system().decode(bytes)
    /// ```
    public static func system() -> CoderRegistry {
        CoderRegistry(decoders: systemDecoders, encoders: systemEncoders)
    }

    // One line per coder.
    static var systemDecoders: [any ImageDecoder] {
        [
            JPEGDecoder(),
            WebPDecoder(),
            PNGDecoder(),
            GIFDecoder(),
            AVIFDecoder(),
            HEIFDecoder(),
            JXLDecoder(),
            SVGDecoder(),
            VideoDecoder(),
            PDFDecoder(),
        ]
    }

    static var systemEncoders: [any ImageEncoder] {
        [
            JPEGEncoder(),
            WebPEncoder(),
            PNGEncoder(),
            GIFEncoder(),
            AVIFEncoder(),
            JXLEncoder(),
        ]
    }
}
