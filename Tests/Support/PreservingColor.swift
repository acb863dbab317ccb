import WebImageCore

extension ImageDecodingOptions {
    /// Options that keep the stored colour values and carry the ICC profile: for tests about
    /// the profile itself (reassembly, round trips through encoders) and for comparisons with
    /// references made without colour management (the corpus' fingerprints, Pillow's plain decode).
    public static var preservingColor: ImageDecodingOptions {
        var options = ImageDecodingOptions()
        options.colorSpace = .preserve
        return options
    }
}
