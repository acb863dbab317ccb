import FuzzSupport

// Seeds first when asked (WEBIMAGE_FUZZ_SEEDS); then libFuzzer calls fuzzDiskCache with each
// input (FuzzDiskCache.swift).
writeSeedsIfAsked()
FuzzDriver.run { fuzzDiskCache($0, $1) }
