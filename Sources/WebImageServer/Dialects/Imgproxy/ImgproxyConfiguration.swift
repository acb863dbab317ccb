import Foundation

/// How `webimage serve` answers imgproxy's URLs (`ImgproxyURL`): where, with which key and
/// salt, and with which presets.
///
/// ```swift
/// var configuration = ImageProxy.Configuration()
/// configuration.imgproxy.prefix = "/"   // a drop-in: /SIGNATURE/rs:fit:300:200/… at the root
/// configuration.imgproxy.key = "736563726574"    // IMGPROXY_KEY, in hex
/// configuration.imgproxy.salt = "68656C6C6F"     // IMGPROXY_SALT, in hex
/// configuration.imgproxy.presets = try ImgproxyConfiguration.presets(parsing: "default=q:85,thumb=rs:fill:160:160")
/// ```
///
/// Without a key, any signature segment is accepted (`insecure`, `_`, …), as imgproxy does,
/// but only while no other key is configured either: a proxy with a `/image` or thumbor key
/// refuses unsigned imgproxy URLs unless ``allowsUnsigned`` opens them.
/// Under the prefix `/`, the proxy's own routes (`/image`, `/info`, `/healthz`, `/metrics`, `/`,
/// `/favicon.ico`) keep their meaning; every other path is an imgproxy URL. thumbor's dialect
/// then keeps a prefix of its own: both cannot be at the root.
public struct ImgproxyConfiguration: Sendable, Hashable {
    /// The path imgproxy URLs are served under (`/imgproxy/insecure/…`); `/` serves them at the
    /// root, as imgproxy does; `nil` turns the dialect off. Default: `/imgproxy`.
    public var prefix: String? = "/imgproxy"
    /// imgproxy's `IMGPROXY_KEY`, in hex: with it (and ``salt``), every URL must be signed.
    public var key: String?
    /// imgproxy's `IMGPROXY_SALT`, in hex.
    public var salt: String?
    /// Answer unsigned imgproxy URLs even though another dialect has a key. Without any key,
    /// imgproxy URLs are answered unsigned anyway; with ``key``, never. Default: `false`.
    public var allowsUnsigned = false
    /// imgproxy's `IMGPROXY_SIGNATURE_SIZE`: the bytes of the MAC a signature keeps, 1 to 32.
    public var signatureSize = 32
    /// imgproxy's `IMGPROXY_PRESETS`: options by preset name (`"thumb": "rs:fill:160:160/q:70"`).
    /// The `default` preset applies to every URL, before its own options.
    public var presets: [String: String] = [:]
    /// The watermark image of imgproxy's `watermark` (`wm`) option: the bytes of
    /// `IMGPROXY_WATERMARK_DATA` (decoded from Base64) or of the file `IMGPROXY_WATERMARK_PATH`
    /// names. Without it (and without ``watermarkURL``), `wm` with an opacity above 0 is a `400`.
    public var watermarkData: Data?
    /// imgproxy's `IMGPROXY_WATERMARK_URL`: the watermark image fetched, as a source is, through
    /// the origin guard (and cached); used when ``watermarkData`` is `nil`.
    public var watermarkURL: URL?
    /// imgproxy's `IMGPROXY_WATERMARK_OPACITY`: every `wm`'s opacity is multiplied by it (0 to 1).
    public var watermarkOpacity = 1.0

    public init() {}

    /// The presets of imgproxy's `IMGPROXY_PRESETS` format: `name=options` separated by commas,
    /// the options separated by `/`. Each preset's options are read as a URL's would be (with
    /// limits no configuration exceeds), so that a typo is refused here rather than answering
    /// `400` to every URL that names the preset.
    ///
    /// ```swift
    /// let presets = try ImgproxyConfiguration.presets(parsing: "default=q:85,thumb=rs:fill:160:160/g:no")
    /// // ["default": "q:85", "thumb": "rs:fill:160:160/g:no"]
    /// ```
    ///
    /// - Throws: ``ProxyError`` 400 naming a malformed entry.
    public static func presets(parsing text: String) throws(ProxyError) -> [String: String] {
        var presets: [String: String] = [:]
        for entry in text.split(separator: ",") {
            let parts = entry.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, !parts[0].contains(":") else {
                throw .badRequest("a preset is name=options: \(entry)")
            }
            presets[String(parts[0])] = String(parts[1])
        }
        var limits = ImageProxy.Limits()
        limits.maximumDimension = 1 << 20
        limits.maximumDPR = 1000
        limits.maximumBlur = 1e6
        for (name, options) in presets {
            var parsed = ImgproxyOptions()
            do throws(ProxyError) {
                try parsed.apply(Substring(options), presets: presets, limits: limits, depth: 1)
            } catch {
                throw .badRequest("preset \(name): \(error.message)")
            }
        }
        return presets
    }

    /// What the variant keys say of the configured watermark, so that variants made with
    /// another watermark (after a restart with a new one) are never found; `nil` when none is
    /// configured.
    var watermarkDigest: String? {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ bytes: some Sequence<UInt8>) {
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        }
        if let watermarkData {
            mix(watermarkData)
        } else if let watermarkURL {
            mix(watermarkURL.absoluteString.utf8)
        } else {
            return nil
        }
        return String(hash, radix: 16) + "x" + ProxyRequest.text(watermarkOpacity)
    }

    /// The prefix without its trailing `/` (`""` for the root), or `nil` when off.
    var normalizedPrefix: String? {
        guard var prefix else { return nil }
        while prefix.hasSuffix("/") { prefix.removeLast() }
        if !prefix.isEmpty, !prefix.hasPrefix("/") { prefix = "/" + prefix }
        return prefix
    }
}
