import Foundation
import Logging
import Metrics
import Synchronization
import WebImage
import WebImageS3

extension ImageProxy {
    /// What a proxy is built from. The defaults suit a public proxy; `webimage serve` maps its
    /// flags and environment variables onto these.
    ///
    /// ```swift
    /// var configuration = ImageProxy.Configuration(cacheDirectory: URL(fileURLWithPath: "/var/cache/proxy"))
    /// configuration.allowedHosts = ["images.example.com", "*.cdn.example.com"]
    /// configuration.signingKey = ProcessInfo.processInfo.environment["PROXY_KEY"]
    /// configuration.limits.maximumConcurrentRequests = 16
    /// ```
    public struct Configuration: Sendable {
        /// Where originals and variants are kept on disk; `nil` keeps nothing on disk.
        public var cacheDirectory: URL?
        /// The disk cache's size limit. Default: 1 GiB.
        public var diskCacheSize = 1 << 30
        /// Encoded variants kept in memory, in bytes. Default: 256 MiB.
        public var variantMemoryLimit = 256 << 20
        /// Decoded, processed images kept in memory by the manager, in bytes: they let a second
        /// output format of the same variant skip the decode. Default: 128 MiB.
        public var imageMemoryLimit = 128 << 20
        /// How long a decoded image stays in memory after it was made (see
        /// ``imageMemoryLimit``), or `nil` until it is evicted. Default: 10 seconds. Decoded
        /// images are the largest objects the proxy keeps (a 1600 px variant is 7 MB decoded and
        /// a tenth of that encoded); a second format of a variant is asked for within seconds
        /// of the first (`format=auto` clients of one page), and later requests are answered
        /// by the encoded variants. Expired images are dropped every few seconds, and the
        /// memory they held is returned to the system once the proxy is idle.
        public var imageMemoryLifetime: Duration? = .seconds(10)
        /// Turns every cache off (memory and disk, variants and originals): each request
        /// fetches, decodes and encodes. For measuring the cold path.
        public var cachesDisabled = false
        /// The folder `local:///path` sources are read from; `nil` refuses them.
        public var originDirectory: URL?
        /// Hosts that may be fetched, compared without case; `*.example.com` allows the
        /// subdomains of `example.com` (not `example.com` itself). Empty allows any host whose
        /// addresses pass the policy.
        public var allowedHosts: [String] = []
        /// The SSRF rule for resolved addresses.
        public var addressPolicy = AddressPolicy()
        /// With a key, every `/image` and `/info` request must be signed (``URLSigner``), and the other
        /// dialects answer only URLs signed with their own keys (``unsignedRoutes``).
        public var signingKey: String?
        /// Answer unsigned `/image` and `/info` requests even though a thumbor or imgproxy key is
        /// configured. Without any key, they are answered unsigned anyway; with
        /// ``signingKey``, never. Default: `false`.
        public var allowsUnsignedImageURLs = false
        /// `Cache-Control: max-age` of images, in seconds, and how long the proxy keeps a variant
        /// before making it again from the original. Default: one day.
        public var maxAge = 86_400
        /// thumbor's URL dialect: its prefix, key and unsafe URLs (``ThumborConfiguration``).
        public var thumbor = ThumborConfiguration()
        /// imgproxy's URL dialect: its prefix, key, salt and presets (``ImgproxyConfiguration``).
        public var imgproxy = ImgproxyConfiguration()
        /// What requests may ask for and sources may cost, the requests in progress at once and
        /// the connections held (``ImageProxy/Limits``).
        public var limits = Limits()
        /// Keep each source's ICC profile: its stored colour values are resized and the profile is
        /// embedded in the output. Off by default: sources are converted to sRGB and outputs
        /// carry no profile (a 64 px thumbnail of a photo with a 400 KB print profile is then a
        /// few kilobytes, not 400).
        public var keepsColorProfile = false
        /// Accept SVG sources. Off by default, as in thumbor and imgproxy: an SVG is a program
        /// for a renderer (librsvg, which reads nothing outside the file here), and a site that
        /// serves user uploads rarely means to serve vector files. Off, an SVG source is
        /// refused as an unsupported format, before any of it is parsed.
        public var allowsSVG = false
        /// Accept PDF sources (a page of one, page 1 unless asked, rasterized by Poppler, which
        /// reads nothing outside the file here). Off by default, as SVG: a PDF is a program for
        /// a renderer that cannot be interrupted, so register a `PDFDecoder` that draws in a
        /// child process (`webimage serve --allow-pdf` does) before turning this on for
        /// documents from anyone. Off, a PDF source is refused as an unsupported format, before
        /// any of it is parsed.
        public var allowsPDF = false
        /// Accept video sources (MP4, MOV, WebM, Matroska), answered with a poster frame: the
        /// first, or the one shown at `t` seconds. Off by default, as in imgproxy: FFmpeg is a
        /// large parser to expose to any URL. Its decoder reads only the bytes the proxy fetched
        /// (no file, URL or playlist a container names), within the source limits, the work
        /// budget and a bound on the frames decoded to reach `t`. Off, a video source is refused
        /// as an unsupported format, before any of it is parsed.
        public var allowsVideo = false
        /// What `format=auto` may answer in, in order of preference: the first the client's
        /// `Accept` names explicitly (`*/*` and `image/*` name none), else the source's own
        /// format. Formats without an encoder in ``registry`` are left out. Default: AVIF, then
        /// WebP.
        public var autoFormats: [ImageFormat] = [.avif, .webp]
        /// `Retry-After` of a 503, in seconds.
        public var retryAfter = 1
        /// The CPU time one variant's decode, processing and encode may take together (the time
        /// its work runs on ``executor``'s threads; downloads and waits for a thread do not
        /// count). Past it the work stops at its next check (between an animation's frames, an
        /// encoder's attempts, along an expensive filter) and the request is answered `503`.
        /// Default: 5 seconds (in a debug build, whose Swift code runs ten to fifty times slower,
        /// 120 seconds: the same work).
        public var workBudget: Duration = Self.defaultWorkBudget

        #if DEBUG
        static let defaultWorkBudget: Duration = .seconds(120)
        #else
        static let defaultWorkBudget: Duration = .seconds(5)
        #endif
        /// The longest one attempt at a download, or the read of a local file, may take.
        /// Default: 15 seconds.
        public var originTimeout: Duration = .seconds(15)
        /// How a fetch from an origin (HTTP, or an `s3://` source) that failed in a way that may
        /// pass is tried again before the request is answered `502` or `504`: a refused or lost
        /// connection, a timeout, `408`, `429`, `500`, `502`, `503`, `504` or `SlowDown`, before
        /// any of the body arrived. Each attempt has the whole ``originTimeout``. The access log
        /// line of the request that fetched shows `origin_retries`, and
        /// `webimage_retries_total{reason}` counts them. Default: `RetryPolicy()`, 3 attempts in
        /// all with waits of full jitter from 200 ms doubling up to 2 s (a `Retry-After` honoured
        /// up to 2 s); `RetryPolicy.never` answers the first failure.
        ///
        /// ```swift
        /// var configuration = ImageProxy.Configuration(cacheDirectory: nil)
        /// configuration.originRetryPolicy = RetryPolicy(maximumAttempts: 2)
        /// ```
        public var originRetryPolicy = RetryPolicy()
        /// PEM files of certificate authorities trusted for HTTPS origins besides the system's
        /// roots (`HTTPImageLoader/Configuration/additionalTrustRoots`): origins behind a
        /// private CA. Certificates are still verified against the origin's host name, through
        /// the egress guard too. Default: none.
        public var originTrustRoots: [URL] = []
        /// The coders; tests wrap the decoders to count decodes.
        public var registry: CoderRegistry = .system()
        /// The threads that decode, process and encode the proxy's images. Default:
        /// `BlockingExecutor/decoding` (one thread per core), which every `ImageManager` of
        /// the process shares unless given its own. An app that embeds the proxy beside its own
        /// image work gives the proxy threads of its own, so that neither waits for the other:
        ///
        /// ```swift
        /// var configuration = ImageProxy.Configuration(cacheDirectory: nil)
        /// configuration.executor = BlockingExecutor(name: "proxy.images", width: 2)
        /// ```
        public var executor: BlockingExecutor = .decoding
        /// The log for the proxy's own events (one line per request goes to ``accessLogger``).
        public var logger = Logger(label: "webimage.serve")
        /// One line per request.
        public var accessLogger = Logger(label: "webimage.serve.access")
        /// Origins (`http://127.0.0.1:8080`, as written in the URL) whose addresses are not
        /// checked: lets end-to-end tests use one origin on loopback.
        @_spi(Testing) public var trustedOrigins: Set<String> = []
        /// How origin host names are resolved; tests give one whose answers they choose.
        package var resolver = HostResolver()
        /// The S3-compatible service that `s3://bucket/key` sources, the ``resultStore`` and the
        /// origin store use: its endpoint and credentials come from here, never from a request,
        /// so `s3://` sources do not pass the SSRF guard (they cannot name a host). `nil`
        /// refuses `s3://` sources.
        public var s3: S3Configuration?
        /// Buckets `s3://` sources may name, compared exactly; `*` allows any bucket the
        /// credentials can read. Empty (the default) refuses `s3://` sources, so that credentials
        /// given for the ``resultStore`` do not open every bucket they can read to the world.
        public var allowedBuckets: [String] = []
        /// `s3://bucket/prefix`: rendered variants are kept there after they are answered, and
        /// looked for there before rendering, so that every instance sharing the bucket renders
        /// a variant once for all. Needs ``s3``.
        public var resultStore: URL?
        /// Keep originals fetched from HTTP origins in the ``resultStore`` too, so that a fleet
        /// downloads each source once.
        public var keepsOriginalsInStore = false
        /// The longest a result store read may take; past it, or on any store failure, the
        /// proxy renders as if the store were not there. Default: 2 seconds.
        public var resultStoreTimeout: Duration = .seconds(2)

        public init(cacheDirectory: URL? = nil) {
            self.cacheDirectory = cacheDirectory
        }
    }
}
