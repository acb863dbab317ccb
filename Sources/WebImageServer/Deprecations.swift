// The 1.0 spellings that 1.1 replaced, kept until 2.0 so that 1.0 code still compiles (with a
// warning that names the replacement). Each forwards to the API that replaced it.

extension ImageProxy {
    /// The encoded image for `request`, with `format=auto` answered in WebP when
    /// `acceptsWebP` (and WebP is one of the configuration's `autoFormats`).
    @available(*, deprecated, message: "Pass the client's Accept: image(for: request, accept: acceptsWebP ? [\"image/webp\"] : [])")
    public func image(for request: ProxyRequest, acceptsWebP: Bool) async throws(ProxyError) -> Output {
        try await image(for: request, accept: acceptsWebP && autoFormats.contains(.webp) ? ["image/webp"] : [])
    }
}

extension ImageProxy.Configuration {
    @available(*, deprecated, renamed: "limits.maximumSourceBytes")
    public var maximumSourceBytes: Int {
        get { limits.maximumSourceBytes }
        set { limits.maximumSourceBytes = newValue }
    }

    @available(*, deprecated, renamed: "limits.maximumSourcePixels")
    public var maximumSourcePixels: Int {
        get { limits.maximumSourcePixels }
        set { limits.maximumSourcePixels = newValue }
    }

    @available(*, deprecated, renamed: "limits.maximumAnimationBytes")
    public var maximumAnimationBytes: Int {
        get { limits.maximumAnimationBytes }
        set { limits.maximumAnimationBytes = newValue }
    }

    @available(*, deprecated, renamed: "limits.maximumAnimationPixels")
    public var maximumAnimationPixels: Int {
        get { limits.maximumAnimationPixels }
        set { limits.maximumAnimationPixels = newValue }
    }

    @available(*, deprecated, renamed: "limits.maximumConcurrentRequests")
    public var maximumConcurrentRequests: Int {
        get { limits.maximumConcurrentRequests }
        set { limits.maximumConcurrentRequests = newValue }
    }
}

extension ProxyRequest {
    @available(*, deprecated, renamed: "ImageProxy.Limits")
    public typealias Limits = ImageProxy.Limits
}

extension ProxyServer {
    /// The server's connection limits; by default the proxy's ``ImageProxy/Limits/connections``.
    @available(*, deprecated, message: "Set ImageProxy.Configuration.limits.connections")
    public var connections: ConnectionLimits {
        get { connectionLimits }
        set { connectionLimits = newValue }
    }
}
