import Foundation

/// Loads `file://` URLs, optionally confined to one folder.
///
/// With a root, a path that leaves it, by `..` or through a symbolic link, is refused: the
/// check runs on the fully resolved path, so a link inside the root that points outside it is
/// refused too. Reads run on ``BlockingExecutor/io``, never on the cooperative pool.
///
/// Only regular files are read: the file is opened with `O_NONBLOCK`, so that opening a FIFO
/// (which waits for a writer) returns at once, and anything `fstat` does not call a regular file
/// (FIFOs, devices, sockets, directories) is refused. With a timeout, a read that the file
/// system does not answer in time fails instead of waiting for ever.
///
/// ```swift
/// let loader = FileImageLoader(root: URL(fileURLWithPath: "/srv/images"))
/// let response = try await loader.load(ImageLoadRequest(url: URL(fileURLWithPath: "/srv/images/a.png")),
///                                      context: ImageLoadContext())
/// ```
public struct FileImageLoader: ImageLoader {
    /// The folder every loaded file must resolve into; `nil` allows any readable file.
    package var root: URL?
    /// The largest file read. Default: 50 MB, as for downloads.
    package var maximumFileSize: Int
    package var executor: BlockingExecutor
    /// The longest a file's read may take; `nil` waits as long as the file system does.
    package var timeout: Duration?

    public init(root: URL? = nil, maximumFileSize: Int = 50_000_000, executor: BlockingExecutor = .io, timeout: Duration? = nil) {
        self.root = root
        self.maximumFileSize = maximumFileSize
        self.executor = executor
        self.timeout = timeout
    }

    public func canLoad(_ url: URL) -> Bool { url.isFileURL }

    public func load(_ request: ImageLoadRequest, context: ImageLoadContext) async throws -> ImageLoadResponse {
        let url = request.url
        guard url.isFileURL else { throw ImageError.invalidURL("\(url.absoluteString) is not a file URL") }
        let root = self.root
        let limit = maximumFileSize
        let read: @Sendable () throws -> Data = {
            let path = try Self.resolve(url.path, within: root)
            return try POSIXFile.readRegularFile(path, limit: limit)
        }
        let data = if let timeout { try await executor.run(timeout: timeout, read) } else { try await executor.run(read) }
        context.didReceive(data, received: data.count, expected: data.count)
        let format = ImageFormat(sniffing: data)
        return ImageLoadResponse(data: data, url: url, metadata: .init(contentType: format?.mimeType, url: url.absoluteString))
    }

    /// The real path of `path`, checked to lie inside `root` when one is set.
    static func resolve(_ path: String, within root: URL?) throws -> String {
        guard let root else { return path }
        guard let realRoot = Platform.realPath(root.path) else {
            throw POSIXFile.failure("realpath", root.path)
        }
        // A path that does not exist cannot be resolved; it is reported as missing only when its
        // lexical form stays inside the root, so the error never reveals what lies outside.
        guard let real = Platform.realPath(path) else {
            let lexical = URL(fileURLWithPath: path).standardizedFileURL.path
            guard lexical == realRoot || lexical.hasPrefix(realRoot.hasSuffix("/") ? realRoot : realRoot + "/") else {
                throw ImageError.invalidURL("\(path) is outside the loader's root folder")
            }
            throw POSIXFile.failure("open", path, Platform.ErrorCode.noEntry)
        }
        let prefix = realRoot.hasSuffix("/") ? realRoot : realRoot + "/"
        guard real.hasPrefix(prefix) else {
            throw ImageError.invalidURL("\(path) is outside the loader's root folder")
        }
        return real
    }
}
