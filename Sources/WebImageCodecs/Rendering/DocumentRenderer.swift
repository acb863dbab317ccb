/// Where a decoder of documents (``SVGDecoder``, ``PDFDecoder``) draws them: their libraries
/// cannot interrupt a render, so documents from anyone are drawn in a child process that can be
/// stopped.
///
/// ```swift
/// let child = RenderProcess(executable: URL(fileURLWithPath: "/usr/local/bin/webimage"), arguments: ["render-pdf"])
/// let decoder = PDFDecoder(renderer: .childProcess(child))
/// ```
public enum DocumentRenderer: Sendable, Hashable {
    /// In this process: bounded by the decoder's limits, but not in time. For documents you trust.
    case inProcess
    /// In a child process that is killed past its time limit or when the caller leaves
    /// (``RenderProcess``): for documents from anyone.
    case childProcess(RenderProcess)
}
