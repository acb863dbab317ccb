/// Which URLs each dialect answers without a signature: one rule for all of them, so that an
/// operator who configures a key closes the whole proxy, not the one dialect the key is for.
///
/// - A dialect with a key of its own (``ImageProxy/Configuration/signingKey`` for `/image` and `/info`,
///   ``ThumborConfiguration/key``, ``ImgproxyConfiguration/key``) answers only URLs signed with
///   it.
/// - When any key is configured, a dialect without one answers nothing unsigned (`403`),
///   unless the operator opens it explicitly: ``ImageProxy/Configuration/allowsUnsignedImageURLs``,
///   ``ImgproxyConfiguration/allowsUnsigned``, or thumbor's ``ThumborConfiguration/allowsUnsafe``.
/// - With no key at all, `/image` and imgproxy's URLs are answered unsigned (an open proxy, as
///   imgproxy and thumbor are by default); thumbor's `/unsafe/` URLs still need `allowsUnsafe`.
///   `webimage serve` says so at start-up in one warning line (``openRoutes``).
struct SigningPolicy: Sendable {
    let answersUnsignedImageURLs: Bool
    let answersUnsignedImgproxyURLs: Bool
    let answersUnsafeThumborURLs: Bool

    init(_ configuration: ImageProxy.Configuration) {
        let anyKey = configuration.signingKey != nil || configuration.thumbor.key != nil
            || configuration.imgproxy.key != nil || configuration.imgproxy.salt != nil
        answersUnsignedImageURLs = configuration.signingKey == nil && (!anyKey || configuration.allowsUnsignedImageURLs)
        answersUnsignedImgproxyURLs = configuration.imgproxy.key == nil && configuration.imgproxy.salt == nil
            && (!anyKey || configuration.imgproxy.allowsUnsigned)
        answersUnsafeThumborURLs = configuration.thumbor.allowsUnsafe
    }

    /// The routes that answer unsigned URLs, among the dialects that are on (`/image` and
    /// `/info`, which follow one rule, `/imgproxy/…`, `/thumbor/unsafe/…`): empty when every
    /// request must be signed.
    static func openRoutes(_ configuration: ImageProxy.Configuration) -> [String] {
        let policy = SigningPolicy(configuration)
        var routes: [String] = []
        if policy.answersUnsignedImageURLs { routes += ["/image", "/info"] }
        if policy.answersUnsignedImgproxyURLs, let prefix = configuration.imgproxy.normalizedPrefix { routes.append(prefix + "/…") }
        if policy.answersUnsafeThumborURLs, let prefix = configuration.thumbor.normalizedPrefix { routes.append(prefix + "/unsafe/…") }
        return routes
    }
}

extension ImageProxy.Configuration {
    /// The routes that answer unsigned URLs under this configuration (one rule for every
    /// dialect: any key closes every dialect without one of its own, unless opened by name):
    /// `webimage serve` names them in a warning at start-up.
    ///
    /// ```swift
    /// let configuration = ImageProxy.Configuration(cacheDirectory: nil)
    /// print(configuration.unsignedRoutes)   // ["/image", "/info", "/imgproxy/…"]: no key is configured
    /// ```
    public var unsignedRoutes: [String] { SigningPolicy.openRoutes(self) }
}
