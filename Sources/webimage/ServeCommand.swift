import ArgumentParser
import Foundation
import Logging
import WebImage
import WebImageS3
import WebImageServer

/// `webimage serve`: the image proxy, as a plain process configured by flags and environment
/// variables (a flag wins over its variable).
///
/// It prints `listening on http://HOST:PORT` on standard output once it accepts connections
/// (`--port 0` picks a free port, and the line tells which), logs one JSON line per request on
/// standard error, and on SIGTERM or SIGINT stops accepting, lets the requests in flight
/// finish, flushes the cache writes and exits 0.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the image proxy: GET /image?url=…&w=…&h=…&fit=…&format=…&q=…&blur=…&dpr=…",
        discussion: """
            Routes: /image (the proxy), / (a gallery of --origin-dir), /healthz, /metrics \
            (Prometheus). Every flag can also be set in the environment: WEBIMAGE_HOST, \
            WEBIMAGE_PORT, WEBIMAGE_CACHE_DIR, WEBIMAGE_ALLOW_HOSTS (comma-separated), \
            WEBIMAGE_ALLOW_LOOPBACK=1, WEBIMAGE_SIGNING_KEY, WEBIMAGE_ALLOW_UNSIGNED=1, WEBIMAGE_ORIGIN_DIR, \
            WEBIMAGE_NO_CACHE=1, WEBIMAGE_MAX_AGE, WEBIMAGE_MAX_CONCURRENT, \
            WEBIMAGE_MAX_SOURCE_BYTES, WEBIMAGE_MAX_SOURCE_PIXELS, WEBIMAGE_MAX_DIMENSION, \
            WEBIMAGE_MAX_ANIMATION_PIXELS, WEBIMAGE_WORK_BUDGET, WEBIMAGE_ORIGIN_TIMEOUT, \
            WEBIMAGE_ORIGIN_RETRIES, WEBIMAGE_HEADER_TIMEOUT, WEBIMAGE_IDLE_TIMEOUT, \
            WEBIMAGE_MAX_CONNECTIONS, WEBIMAGE_MAX_CONNECTIONS_PER_CLIENT, WEBIMAGE_RESERVED_CONNECTIONS, \
            WEBIMAGE_TRUSTED_PROXIES (comma-separated), WEBIMAGE_SHUTDOWN_GRACE, \
            WEBIMAGE_ALLOW_BUCKETS (comma-separated), WEBIMAGE_RESULT_STORE, \
            WEBIMAGE_ORIGIN_STORE=1, WEBIMAGE_RESULT_STORE_TIMEOUT_MS, \
            WEBIMAGE_LOG_LEVEL. \
            Prefer WEBIMAGE_SIGNING_KEY to --signing-key: other users can read a process's \
            arguments. The S3 service of s3:// sources and of the result store comes from \
            AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and \
            AWS_SESSION_TOKEN.
            """
    )

    @Option(help: ArgumentHelp("The address to listen on (default 127.0.0.1; 0.0.0.0 or :: for every interface).", valueName: "host"))
    var host: String?

    @Option(help: ArgumentHelp("The port to listen on (default 8080; 0 picks a free one).", valueName: "port"))
    var port: Int?

    @Option(help: ArgumentHelp("The disk cache folder (default: $XDG_CACHE_HOME/swift-web-image, or ~/.cache/swift-web-image).", valueName: "dir"))
    var cacheDir: String?

    @Option(name: .customLong("allow-host"), help: ArgumentHelp("Fetch only from this host (repeatable; *.example.com allows its subdomains). Default: any public host.", valueName: "host"))
    var allowHosts: [String] = []

    @Flag(help: "Allow fetching from loopback addresses (127.0.0.0/8, ::1). For local development and tests only.")
    var allowLoopback = false

    @Option(help: ArgumentHelp("Require every /image URL to be signed with this HMAC-SHA256 key. Any key (this, thumbor's or imgproxy's) closes every dialect that has none of its own.", valueName: "key"))
    var signingKey: String?

    @Flag(help: "Answer unsigned /image URLs although a thumbor or imgproxy key is configured.")
    var allowUnsigned = false

    @Option(help: ArgumentHelp("Serve this folder's images as local:///NAME sources (and show them at /).", valueName: "dir"))
    var originDir: String?

    @Flag(help: "Turn every cache off: each request fetches, decodes and encodes (for measuring the cold path).")
    var noCache = false

    @Option(help: ArgumentHelp("Cache-Control max-age of images, in seconds (default 86400).", valueName: "seconds"))
    var maxAge: Int?

    @Option(help: ArgumentHelp("Image requests in progress at once; more are answered 503 (default 32).", valueName: "n"))
    var maxConcurrent: Int?

    @Option(help: ArgumentHelp("Threads that decode, resize and encode images (default: one per core).", valueName: "n"))
    var threads: Int?

    @Option(help: ArgumentHelp("The largest source: bytes, or with a unit (25MiB, 30MB; default 25MiB).", valueName: "size"))
    var maxSourceBytes: ByteCount?

    @Option(help: ArgumentHelp(
        "Memory for the caches: two thirds for encoded variants, one third for decoded images (default 384MiB; 0 keeps nothing in memory).",
        valueName: "size"))
    var cacheMemory: ByteCount?

    @Option(help: ArgumentHelp("The largest source, in pixels (default 50000000).", valueName: "pixels"))
    var maxSourcePixels: Int?

    @Option(help: ArgumentHelp("The largest output width or height, in pixels (default 4096).", valueName: "pixels"))
    var maxDimension: Int?

    @Option(help: ArgumentHelp("The most canvas pixels one animation's decode may compose, width × height × frames (default 268435456).", valueName: "pixels"))
    var maxAnimationPixels: Int?

    @Flag(help: "Keep each source's colour profile and stored colour values, and embed the profile in the output, instead of converting to sRGB and writing none.")
    var keepColorProfile = false

    @Flag(help: "Accept SVG sources (rasterized by librsvg, nothing outside the file read); off by default. Env: WEBIMAGE_ALLOW_SVG.")
    var allowSVG = false

    @Flag(help: "Accept PDF sources (a page rasterized by Poppler in a child process, nothing outside the file read); off by default. Env: WEBIMAGE_ALLOW_PDF.")
    var allowPDF = false

    @Flag(help: "Accept video sources (MP4, MOV, WebM, Matroska: a poster frame decoded by FFmpeg from the bytes alone); off by default. Env: WEBIMAGE_ALLOW_VIDEO.")
    var allowVideo = false

    @Option(help: ArgumentHelp("What format=auto answers in, in order of preference, when the client's Accept names it (default avif,webp; \"none\" for the source's format always). Env: WEBIMAGE_AUTO_FORMATS.", valueName: "formats"))
    var autoFormats: String?

    @Option(help: ArgumentHelp("Seconds SIGTERM waits for the requests in flight before the server stops without them (default 10).", valueName: "seconds"))
    var shutdownGrace: Int?

    @Option(help: ArgumentHelp("Seconds of CPU one variant's decode, processing and encode may take together; past them the request is answered 503 (default 5).", valueName: "seconds"))
    var workBudget: Int?

    @Option(help: ArgumentHelp("Seconds an origin has to deliver a whole source, per attempt; past them the request is answered 504 (default 15).", valueName: "seconds"))
    var originTimeout: Int?

    @Option(help: ArgumentHelp("Tries after the first of an origin fetch that failed in a way that may pass (a refused or reset connection, a timeout, 408, 429, 500, 502, 503, 504, S3's SlowDown), with jittered waits of up to 2 s, honouring Retry-After; 0 for none (default 2).", valueName: "n"))
    var originRetries: Int?

    @Option(help: ArgumentHelp("Seconds a client has to send a whole request, from its first byte or from connecting (default 10).", valueName: "seconds"))
    var headerTimeout: Int?

    @Option(help: ArgumentHelp("Seconds a kept-alive connection may wait for its next request (default 60).", valueName: "seconds"))
    var idleTimeout: Int?

    @Option(help: ArgumentHelp("Connections open at once; more are closed as soon as they are accepted (default 4096, or the descriptor limit less 256 if lower).", valueName: "n"))
    var maxConnections: Int?

    @Option(help: ArgumentHelp("Connections one client (an IPv4 address or IPv6 /64) may hold open at once (default 128); behind --trusted-proxy, requests in progress per X-Forwarded-For client.", valueName: "n"))
    var maxConnectionsPerClient: Int?

    @Option(help: ArgumentHelp("Connections past --max-connections that answer only /healthz and /metrics (default 16; 0 for none).", valueName: "n"))
    var reservedConnections: Int?

    @Option(name: .customLong("trusted-proxy"), help: ArgumentHelp("The address of a proxy in front (repeatable): its connections are not capped per client, and its X-Forwarded-For names the client.", valueName: "address"))
    var trustedProxies: [String] = []

    @Option(name: .customLong("allow-bucket"), help: ArgumentHelp("Serve s3://BUCKET/KEY sources from this bucket (repeatable; * allows any bucket the credentials can read). Default: none.", valueName: "bucket"))
    var allowBuckets: [String] = []

    @Option(help: ArgumentHelp("Share rendered variants with every instance through this bucket and prefix (s3://bucket/prefix).", valueName: "url"))
    var resultStore: String?

    @Flag(help: "Keep originals fetched from HTTP origins in the result store too, so that a fleet downloads each source once.")
    var originStore = false

    @Option(help: ArgumentHelp("Milliseconds a result store read may take before the proxy renders instead (default 2000).", valueName: "ms"))
    var resultStoreTimeout: Int?

    @Option(help: ArgumentHelp("Serve thumbor URLs under this path (default /thumbor; / serves them at the root, beside /image; off turns them off).", valueName: "path"))
    var thumborPrefix: String?

    @Option(help: ArgumentHelp("thumbor's SECURITY_KEY: serve thumbor URLs signed with it (also $THUMBOR_SECURITY_KEY).", valueName: "key"))
    var thumborKey: String?

    @Flag(help: "Serve thumbor's /unsafe/ URLs, unsigned (thumbor's ALLOW_UNSAFE_URL; also $THUMBOR_ALLOW_UNSAFE_URL).")
    var thumborAllowUnsafe = false

    @Option(help: ArgumentHelp("Serve imgproxy URLs under this path (default /imgproxy; / serves them at the root, beside /image; off turns them off).", valueName: "path"))
    var imgproxyPrefix: String?

    @Option(help: ArgumentHelp("imgproxy's key, in hex: serve only imgproxy URLs signed with it and the salt (also $IMGPROXY_KEY).", valueName: "hex"))
    var imgproxyKey: String?

    @Option(help: ArgumentHelp("imgproxy's salt, in hex (also $IMGPROXY_SALT).", valueName: "hex"))
    var imgproxySalt: String?

    @Flag(help: "Answer unsigned imgproxy URLs although a /image or thumbor key is configured (also $WEBIMAGE_IMGPROXY_ALLOW_UNSIGNED).")
    var imgproxyAllowUnsigned = false

    @Option(help: ArgumentHelp("Bytes of the MAC an imgproxy signature keeps, 1 to 32 (default 32; also $IMGPROXY_SIGNATURE_SIZE).", valueName: "bytes"))
    var imgproxySignatureSize: Int?

    @Option(help: ArgumentHelp("An imgproxy preset, name=options (repeatable; also $IMGPROXY_PRESETS, name=options separated by commas); the preset default applies to every URL.", valueName: "preset"))
    var imgproxyPreset: [String] = []

    @Option(help: ArgumentHelp("imgproxy's watermark image for its wm option: a file, or an http(s) URL fetched through the origin checks (also $IMGPROXY_WATERMARK_PATH, $IMGPROXY_WATERMARK_URL, or $IMGPROXY_WATERMARK_DATA in Base64; $IMGPROXY_WATERMARK_OPACITY scales every wm's opacity).", valueName: "file-or-url"))
    var imgproxyWatermark: String?

    @Option(help: ArgumentHelp("trace, debug, info (the default: one line per request), notice, warning (no request lines), error or critical.", valueName: "level"))
    var logLevel: String?

    /// The settings after flags, then the environment, then the defaults.
    struct Settings {
        var host: String
        var port: Int
        /// The proxy's configuration, its connection limits included.
        var configuration: ImageProxy.Configuration
        var shutdownGracePeriod: Duration
        var logLevel: Logger.Level
    }

    func settings(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Settings {
        func value(_ flag: String?, _ name: String) -> String? {
            flag ?? environment[name].flatMap { $0.isEmpty ? nil : $0 }
        }
        func integer(_ flag: Int?, _ name: String, _ option: String, minimum: Int = 1) throws -> Int? {
            if let flag {
                guard flag >= minimum else { throw ValidationError("--\(option) must be at least \(minimum)") }
                return flag
            }
            guard let text = value(nil, name) else { return nil }
            guard let number = Int(text), number >= minimum else {
                throw ValidationError("\(name) must be an integer of at least \(minimum)")
            }
            return number
        }
        func enabled(_ flag: Bool, _ name: String) -> Bool {
            flag || ["1", "true", "yes"].contains(environment[name]?.lowercased() ?? "")
        }

        let host = value(host, "WEBIMAGE_HOST") ?? "127.0.0.1"
        let port = try integer(port, "WEBIMAGE_PORT", "port", minimum: 0) ?? 8080
        guard port <= 65535 else { throw ValidationError("the port must be at most 65535") }

        var configuration = try proxyConfiguration(environment: environment, value: value, enabled: enabled, integer: integer)
        let grace = try integer(shutdownGrace, "WEBIMAGE_SHUTDOWN_GRACE", "shutdown-grace", minimum: 0) ?? 10
        configuration.limits.connections = try connectionLimits(environment: environment, integer: integer)
        let levelName = value(logLevel, "WEBIMAGE_LOG_LEVEL") ?? "info"
        guard let level = Logger.Level(rawValue: levelName.lowercased()) else {
            throw ValidationError("the log level must be trace, debug, info, notice, warning, error or critical")
        }
        return Settings(
            host: host, port: port, configuration: configuration, shutdownGracePeriod: .seconds(grace), logLevel: level)
    }

    /// The proxy's configuration: the cache, the origins it may fetch from, the signing keys,
    /// the limits, the formats, then S3, thumbor and imgproxy. Apart from `settings`, so that
    /// each part of the settings reads as one; `value`, `enabled` and `integer` are its readers
    /// of a flag or its variable.
    private func proxyConfiguration(
        environment: [String: String],
        value: (String?, String) -> String?, enabled: (Bool, String) -> Bool,
        integer: (Int?, String, String, Int) throws -> Int?
    ) throws -> ImageProxy.Configuration {
        let cacheDirectory = value(cacheDir, "WEBIMAGE_CACHE_DIR").map { URL(fileURLWithPath: $0) }
            ?? DiskCache.userCacheDirectory.appendingPathComponent("swift-web-image")
        var configuration = ImageProxy.Configuration(cacheDirectory: cacheDirectory)
        configuration.cachesDisabled = enabled(noCache, "WEBIMAGE_NO_CACHE")
        configuration.allowedHosts = allowHosts.isEmpty
            ? (environment["WEBIMAGE_ALLOW_HOSTS"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            : allowHosts
        configuration.addressPolicy = AddressPolicy(allowsLoopback: enabled(allowLoopback, "WEBIMAGE_ALLOW_LOOPBACK"))
        configuration.signingKey = value(signingKey, "WEBIMAGE_SIGNING_KEY")
        configuration.allowsUnsignedImageURLs = enabled(allowUnsigned, "WEBIMAGE_ALLOW_UNSIGNED")
        if let originDir = value(originDir, "WEBIMAGE_ORIGIN_DIR") {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: originDir, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--origin-dir \(originDir) is not a folder")
            }
            configuration.originDirectory = URL(fileURLWithPath: originDir).standardizedFileURL
        }
        if let maxAge = try integer(maxAge, "WEBIMAGE_MAX_AGE", "max-age", 0) { configuration.maxAge = maxAge }
        if let maximum = try integer(maxConcurrent, "WEBIMAGE_MAX_CONCURRENT", "max-concurrent", 1) { configuration.limits.maximumConcurrentRequests = maximum }
        if let threads = try integer(threads, "WEBIMAGE_THREADS", "threads", 1) {
            configuration.executor = BlockingExecutor(name: "serve.image", width: threads)
        }
        if let maximum = try integer(maxSourceBytes?.bytes, "WEBIMAGE_MAX_SOURCE_BYTES", "max-source-bytes", 1) { configuration.limits.maximumSourceBytes = maximum }
        if let bytes = try integer(cacheMemory?.bytes, "WEBIMAGE_CACHE_MEMORY", "cache-memory", 0) {
            configuration.variantMemoryLimit = bytes / 3 * 2
            configuration.imageMemoryLimit = bytes - configuration.variantMemoryLimit
        }
        if let maximum = try integer(maxSourcePixels, "WEBIMAGE_MAX_SOURCE_PIXELS", "max-source-pixels", 1) { configuration.limits.maximumSourcePixels = maximum }
        if let maximum = try integer(maxDimension, "WEBIMAGE_MAX_DIMENSION", "max-dimension", 1) { configuration.limits.maximumDimension = maximum }
        if let maximum = try integer(maxAnimationPixels, "WEBIMAGE_MAX_ANIMATION_PIXELS", "max-animation-pixels", 1) {
            configuration.limits.maximumAnimationPixels = maximum
        }
        if let seconds = try integer(workBudget, "WEBIMAGE_WORK_BUDGET", "work-budget", 1) { configuration.workBudget = .seconds(seconds) }
        if let seconds = try integer(originTimeout, "WEBIMAGE_ORIGIN_TIMEOUT", "origin-timeout", 1) { configuration.originTimeout = .seconds(seconds) }
        if let retries = try integer(originRetries, "WEBIMAGE_ORIGIN_RETRIES", "origin-retries", 0) { configuration.originRetryPolicy.maximumAttempts = retries + 1 }
        configuration.keepsColorProfile = enabled(keepColorProfile, "WEBIMAGE_KEEP_COLOR_PROFILE")
        configuration.allowsSVG = enabled(allowSVG, "WEBIMAGE_ALLOW_SVG")
        configuration.allowsPDF = enabled(allowPDF, "WEBIMAGE_ALLOW_PDF")
        configuration.allowsVideo = enabled(allowVideo, "WEBIMAGE_ALLOW_VIDEO")
        try Self.registerRenderers(&configuration)
        if let formats = autoFormats ?? ProcessInfo.processInfo.environment["WEBIMAGE_AUTO_FORMATS"] {
            configuration.autoFormats = try Self.autoFormats(formats)
        }
        try configureS3(&configuration, environment: environment, value: value, enabled: enabled, integer: integer)
        try configureThumbor(&configuration, value: value, enabled: enabled)
        try configureImgproxy(&configuration, environment: environment, value: value, integer: integer)
        return configuration
    }

    /// The SVG and PDF decoders of a configuration that allows them: documents from anyone are
    /// drawn in a child of this program (`webimage render-svg`, `render-pdf`), killed past the
    /// work budget or when the request goes (neither librsvg nor Poppler can be interrupted).
    private static func registerRenderers(_ configuration: inout ImageProxy.Configuration) throws {
        guard configuration.allowsSVG || configuration.allowsPDF else { return }
        guard let executable = Bundle.main.executableURL else {
            throw ValidationError("\(configuration.allowsSVG ? "--allow-svg" : "--allow-pdf"): this program's path is unknown")
        }
        let timeLimit = configuration.workBudget
        func renderer(_ command: String) -> RenderProcess {
            var renderer = RenderProcess(executable: executable, arguments: [command])
            renderer.timeLimit = timeLimit
            return renderer
        }
        if configuration.allowsSVG { configuration.registry.register(SVGDecoder(renderer: .childProcess(renderer("render-svg")))) }
        if configuration.allowsPDF { configuration.registry.register(PDFDecoder(renderer: .childProcess(renderer("render-pdf")))) }
    }

    /// The server's connection limits: its timeouts, how many connections it holds (in all and
    /// per client) and the proxies in front whose X-Forwarded-For it believes.
    private func connectionLimits(
        environment: [String: String], integer: (Int?, String, String, Int) throws -> Int?
    ) throws -> ConnectionLimits {
        var connections = ConnectionLimits()
        if let seconds = try integer(headerTimeout, "WEBIMAGE_HEADER_TIMEOUT", "header-timeout", 1) { connections.headerTimeout = .seconds(seconds) }
        if let seconds = try integer(idleTimeout, "WEBIMAGE_IDLE_TIMEOUT", "idle-timeout", 1) { connections.idleTimeout = .seconds(seconds) }
        if let maximum = try integer(maxConnections, "WEBIMAGE_MAX_CONNECTIONS", "max-connections", 1) { connections.maximumConnections = maximum }
        if let maximum = try integer(maxConnectionsPerClient, "WEBIMAGE_MAX_CONNECTIONS_PER_CLIENT", "max-connections-per-client", 1) {
            connections.maximumConnectionsPerClient = maximum
        }
        if let reserve = try integer(reservedConnections, "WEBIMAGE_RESERVED_CONNECTIONS", "reserved-connections", 0) {
            connections.reservedConnections = reserve
        }
        let proxies = trustedProxies.isEmpty
            ? (environment["WEBIMAGE_TRUSTED_PROXIES"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            : trustedProxies
        for proxy in proxies where IPAddress(proxy) == nil {
            throw ValidationError("--trusted-proxy \(proxy) is not an IP address")
        }
        connections.trustedProxies = proxies
        return connections
    }

    /// thumbor's dialect, under thumbor's own variable names where it has them.
    private func configureThumbor(
        _ configuration: inout ImageProxy.Configuration,
        value: (String?, String) -> String?, enabled: (Bool, String) -> Bool
    ) throws {
        if let prefix = value(thumborPrefix, "WEBIMAGE_THUMBOR_PREFIX") {
            guard prefix == "off" || prefix.hasPrefix("/") else { throw ValidationError("--thumbor-prefix must start with / (or be off)") }
            configuration.thumbor.prefix = prefix == "off" ? nil : prefix
        }
        configuration.thumbor.key = value(thumborKey, "THUMBOR_SECURITY_KEY")
        configuration.thumbor.allowsUnsafe = enabled(thumborAllowUnsafe, "THUMBOR_ALLOW_UNSAFE_URL")
    }

    /// imgproxy's dialect, under imgproxy's own variable names where it has them (its source
    /// limits too, when ours are not given).
    private func configureImgproxy(
        _ configuration: inout ImageProxy.Configuration, environment: [String: String],
        value: (String?, String) -> String?, integer: (Int?, String, String, Int) throws -> Int?
    ) throws {
        if let prefix = value(imgproxyPrefix, "WEBIMAGE_IMGPROXY_PREFIX") {
            guard prefix == "off" || prefix.hasPrefix("/") else { throw ValidationError("--imgproxy-prefix must start with / (or be off)") }
            configuration.imgproxy.prefix = prefix == "off" ? nil : prefix
        }
        func isRoot(_ prefix: String?) -> Bool { prefix?.allSatisfy { $0 == "/" } ?? false }
        if isRoot(configuration.imgproxy.prefix), isRoot(configuration.thumbor.prefix) {
            throw ValidationError("thumbor and imgproxy URLs cannot both be served at / (give one of --thumbor-prefix and --imgproxy-prefix another path)")
        }
        let key = value(imgproxyKey, "IMGPROXY_KEY"), salt = value(imgproxySalt, "IMGPROXY_SALT")
        let size = try integer(imgproxySignatureSize, "IMGPROXY_SIGNATURE_SIZE", "imgproxy-signature-size", 1) ?? 32
        guard size <= 32 else { throw ValidationError("the imgproxy signature size must be from 1 to 32") }
        if key != nil || salt != nil {
            guard let key, let salt, ImgproxySigner(key: key, salt: salt, signatureSize: size) != nil else {
                throw ValidationError("the imgproxy key and salt must both be given, in hex (--imgproxy-key, --imgproxy-salt or $IMGPROXY_KEY, $IMGPROXY_SALT)")
            }
            configuration.imgproxy.key = key
            configuration.imgproxy.salt = salt
        }
        configuration.imgproxy.signatureSize = size
        configuration.imgproxy.allowsUnsigned = imgproxyAllowUnsigned
            || ["1", "true", "yes"].contains(environment["WEBIMAGE_IMGPROXY_ALLOW_UNSIGNED"]?.lowercased() ?? "")
        do throws(ProxyError) {
            let presets = imgproxyPreset.isEmpty ? (environment["IMGPROXY_PRESETS"] ?? "") : imgproxyPreset.joined(separator: ",")
            configuration.imgproxy.presets = try ImgproxyConfiguration.presets(parsing: presets)
        } catch {
            throw ValidationError("imgproxy presets: \(error.message)")
        }
        try applyImgproxyWatermark(to: &configuration, environment: environment)
        // imgproxy's source limits, in its units (megapixels; bytes, 0 for none).
        if maxSourcePixels == nil, environment["WEBIMAGE_MAX_SOURCE_PIXELS"] == nil, let text = environment["IMGPROXY_MAX_SRC_RESOLUTION"] {
            guard let megapixels = Double(text), megapixels > 0, megapixels < 1e6 else {
                throw ValidationError("IMGPROXY_MAX_SRC_RESOLUTION must be a positive number of megapixels")
            }
            configuration.limits.maximumSourcePixels = Int(megapixels * 1_000_000)
        }
        if maxSourceBytes == nil, environment["WEBIMAGE_MAX_SOURCE_BYTES"] == nil, let text = environment["IMGPROXY_MAX_SRC_FILE_SIZE"] {
            guard let bytes = Int(text), bytes >= 0 else { throw ValidationError("IMGPROXY_MAX_SRC_FILE_SIZE must be a number of bytes") }
            if bytes > 0 { configuration.limits.maximumSourceBytes = bytes }
        }
    }

    /// imgproxy's watermark: `--imgproxy-watermark` (a file or an http(s) URL), else
    /// `IMGPROXY_WATERMARK_DATA`, `_PATH` or `_URL`, and `IMGPROXY_WATERMARK_OPACITY`. A file
    /// is read here, at most as large as a source may be.
    func applyImgproxyWatermark(to configuration: inout ImageProxy.Configuration, environment: [String: String]) throws {
        var path = environment["IMGPROXY_WATERMARK_PATH"], url = environment["IMGPROXY_WATERMARK_URL"]
        if let imgproxyWatermark {
            let isURL = imgproxyWatermark.hasPrefix("http://") || imgproxyWatermark.hasPrefix("https://")
            (path, url) = isURL ? (nil, imgproxyWatermark) : (imgproxyWatermark, nil)
        }
        if imgproxyWatermark == nil, let text = environment["IMGPROXY_WATERMARK_DATA"] {
            guard let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), !data.isEmpty else {
                throw ValidationError("IMGPROXY_WATERMARK_DATA must be Base64")
            }
            configuration.imgproxy.watermarkData = data
        } else if let path {
            let file = URL(fileURLWithPath: path)
            let size = (try? file.resourceValues(forKeys: [.fileSizeKey, .isRegularFileKey])) ?? URLResourceValues()
            guard size.isRegularFile == true, let bytes = size.fileSize, bytes <= configuration.limits.maximumSourceBytes,
                  let data = try? Data(contentsOf: file) else {
                throw ValidationError("the imgproxy watermark \(path) must be a readable file of at most \(configuration.limits.maximumSourceBytes) bytes")
            }
            configuration.imgproxy.watermarkData = data
        } else if let url {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased()) else {
                throw ValidationError("the imgproxy watermark URL must be http or https")
            }
            configuration.imgproxy.watermarkURL = parsed
        }
        if let text = environment["IMGPROXY_WATERMARK_OPACITY"] {
            guard let opacity = Double(text), (0...1).contains(opacity) else { throw ValidationError("IMGPROXY_WATERMARK_OPACITY must be from 0 to 1") }
            configuration.imgproxy.watermarkOpacity = opacity
        }
    }

    /// `--auto-formats`: comma-separated output formats the proxy encodes (`none` for none).
    static func autoFormats(_ text: String) throws -> [ImageFormat] {
        if text == "none" { return [] }
        return try text.split(separator: ",").map { name in
            guard let format = ProxyRequest.OutputFormat(rawValue: String(name)).flatMap(\.imageFormat) else {
                throw ValidationError("--auto-formats takes jpeg, png, webp, gif, avif and jxl, separated by commas (or none), not \(name)")
            }
            return format
        }
    }

    /// The S3 service (from the `AWS_*` variables), the buckets of `s3://` sources and the
    /// fleet's result store.
    private func configureS3(
        _ configuration: inout ImageProxy.Configuration, environment: [String: String],
        value: (String?, String) -> String?, enabled: (Bool, String) -> Bool,
        integer: (Int?, String, String, Int) throws -> Int?
    ) throws {
        configuration.allowedBuckets = allowBuckets.isEmpty
            ? (environment["WEBIMAGE_ALLOW_BUCKETS"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            : allowBuckets
        if let store = value(resultStore, "WEBIMAGE_RESULT_STORE") {
            guard let url = URL(string: store), url.scheme == "s3", url.host(percentEncoded: false)?.isEmpty == false else {
                throw ValidationError("--result-store must be s3://bucket or s3://bucket/prefix")
            }
            configuration.resultStore = url
        }
        configuration.keepsOriginalsInStore = enabled(originStore, "WEBIMAGE_ORIGIN_STORE")
        if configuration.keepsOriginalsInStore, configuration.resultStore == nil {
            throw ValidationError("--origin-store needs --result-store")
        }
        if let milliseconds = try integer(resultStoreTimeout, "WEBIMAGE_RESULT_STORE_TIMEOUT_MS", "result-store-timeout", 1) {
            configuration.resultStoreTimeout = .milliseconds(milliseconds)
        }
        guard configuration.resultStore != nil || !configuration.allowedBuckets.isEmpty else { return }
        do {
            configuration.s3 = try S3Configuration.fromEnvironment(environment)
        } catch {
            throw ValidationError("s3:// sources and the result store need AWS_ENDPOINT_URL (or AWS_REGION), AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: \(error)")
        }
    }

    func run() async throws {
        let settings = try settings()
        let level = settings.logLevel
        let telemetry = try Telemetry.bootstrap()
        LoggingSystem.bootstrap({ label, provider in
            var handler = JSONLogHandler(label: label)
            handler.logLevel = level
            handler.metadataProvider = provider
            return handler
        }, metadataProvider: telemetry == nil ? nil : Telemetry.loggingMetadataProvider)
        var configuration = settings.configuration
        configuration.logger = Logger(label: "webimage.serve")
        configuration.accessLogger = Logger(label: "webimage.serve.access")

        let proxy: ImageProxy
        do {
            proxy = try ImageProxy(configuration: configuration)
        } catch {
            printError("webimage serve: cannot open the cache at \(configuration.cacheDirectory?.path ?? "-"): \(error)")
            throw ExitCode.failure
        }
        let host = settings.host
        let open = configuration.unsignedRoutes
        if !open.isEmpty {
            // One line, before the address: an operator who meant to close the proxy sees it.
            configuration.logger.warning(
                "unsigned URLs are answered at \(open.joined(separator: ", ")): anyone who can reach this server can make it fetch and resize images (set WEBIMAGE_SIGNING_KEY to close every dialect)")
        }
        do {
            var server = ProxyServer(proxy: proxy)
            server.shutdownGracePeriod = settings.shutdownGracePeriod
            server.supportingServices = telemetry.map { [$0.service] } ?? []
            try await server.run(host: host, port: settings.port) { port in
                let shown = host.contains(":") ? "[\(host)]" : host
                print("listening on http://\(shown):\(port)")
                fflush(nil)
            }
        } catch {
            printError("webimage serve: \(error)")
            throw ExitCode.failure
        }
    }
}
