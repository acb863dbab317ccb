import WebImageCore

// The 1.0 spellings that 1.1 replaced, kept until 2.0 so that 1.0 code still compiles (with a
// warning that names the replacement). Each forwards to the API that replaced it.

extension S3Configuration {
    @available(*, deprecated, renamed: "retryPolicy.maximumAttempts")
    public var maximumAttempts: Int {
        get { retryPolicy.maximumAttempts }
        set { retryPolicy.maximumAttempts = newValue }
    }

    @available(*, deprecated, renamed: "retryPolicy.baseDelay")
    public var retryBaseDelay: Duration {
        get { retryPolicy.baseDelay }
        set { retryPolicy.baseDelay = newValue }
    }

    @available(*, deprecated, renamed: "retryPolicy.maximumDelay")
    public var maximumRetryDelay: Duration {
        get { retryPolicy.maximumDelay }
        set { retryPolicy.maximumDelay = newValue }
    }
}
