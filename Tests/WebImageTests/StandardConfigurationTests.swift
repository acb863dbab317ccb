import Testing
import WebImage

/// `.standard`'s HTTP loader asks origins for what its registry decodes, unless told otherwise.
@Suite struct StandardConfigurationTests {
    /// The documented example passes `HTTPImageLoader.Configuration()`: its `Accept` must still
    /// name AVIF and JPEG XL, which the system registry decodes (it named four formats in 1.0).
    @Test func aDefaultHTTPConfigurationAcceptsWhatTheRegistryDecodes() {
        let registry = CoderRegistry.system()
        let accept = HTTPImageLoader.Configuration().accepting(registry.decodableFormats).accept
        for format in registry.decodableFormats {
            #expect(accept.contains(format.mimeType), "\(format) missing from \(accept)")
        }
        #expect(accept.hasPrefix("image/avif,image/jxl,"))
    }

    /// An `Accept` the caller set, or formats the caller named, are kept as given.
    @Test func anAcceptTheCallerChoseIsKept() {
        var set = HTTPImageLoader.Configuration()
        set.accept = "image/png"
        #expect(set.accepting([.avif]).accept == "image/png")
        let named = HTTPImageLoader.Configuration(acceptedFormats: [.jpeg])
        #expect(named.accepting([.avif]).accept == "image/jpeg,image/*;q=0.8")
    }
}
