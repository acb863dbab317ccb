extension ImageManager {
    /// The placeholder remembered for the image `source` names: the ThumbHash of its source,
    /// computed the first time any variant of it was decoded, answered synchronously from
    /// memory with no file read. It survives a restart (the disk cache's index keeps it) and the
    /// eviction of the image's bytes, and serves every variant of the source: thumbnails and
    /// processed images alike. `nil` for a source this cache never saw decoded.
    ///
    /// ```swift
    /// if let placeholder = manager.placeholder(for: url) {
    ///     show(try placeholder.bitmap(maxSide: 32))   // a blurred picture, before any byte
    /// }
    /// let image = try await manager.image(for: url)
    /// ```
    ///
    /// A binding shows it by itself with ``ImageBindingOptions/rememberedPlaceholder``.
    public func placeholder(for source: some ImageRequestConvertible) -> ImagePlaceholder? {
        let request = source.asImageRequest()
        guard let key = request.dataKey else { return nil }
        return (request.cache ?? configuration.cache).placeholder(forKey: key)
    }

    /// Computes and remembers the ThumbHash of a freshly decoded source that has none yet, on
    /// the decode thread that decoded it. Previews and cut-short images are not the source's
    /// picture and are skipped.
    func rememberPlaceholder(of container: ImageContainer, decodedWith options: ImageDecodingOptions, plan: StagePlan) {
        guard configuration.remembersPlaceholders, !container.isPreview, container.isComplete,
              plan.cache.placeholder(forKey: plan.dataKey.key) == nil
        else { return }
        var picture = container.image.placeholderReduction()
        if !options.appliesOrientation, container.orientation != .up {
            picture = picture.oriented(container.orientation)
        }
        plan.cache.rememberPlaceholder(ThumbHash(encoding: picture), forKey: plan.dataKey.key)
    }
}
