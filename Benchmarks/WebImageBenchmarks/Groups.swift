/// Every benchmark group, in the order `make bench` runs them. Each group's file adds its rows.
let benchmarkGroups: [(String, @Sendable (Report) -> Void)] = [
    ("memory", runMemoryCacheBenchmarks),
    ("disk", runDiskCacheBenchmarks),
    ("codecs", runCodecBenchmarks),
    ("formats", runFormatBenchmarks),
    ("profile-bytes", runProfileBytesBenchmarks),
    ("smartcrop", runSmartCropBenchmarks),
    // ThumbHash and BlurHash beside the thumbnail decode they follow.
    ("placeholders", runPlaceholderBenchmarks),
    ("thumbnail-memory", runThumbnailMemoryBenchmarks),
    ("pipeline", runPipelineBenchmarks),
    ("prefetch", runPrefetchBenchmarks),
    ("scroll", runScrollBenchmarks),
    ("gtk", runGTKBenchmarks),
    // The GTK gallery under Xvfb (skipped, with a line saying so, without Xvfb or webimage-gtk).
    ("gallery", runGalleryScrollBenchmarks),
    ("s3-sign", runS3SignBenchmarks),
    ("s3-store", runS3StoreBenchmarks),
]
