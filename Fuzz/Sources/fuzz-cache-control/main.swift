import FuzzSupport

// libFuzzer calls fuzzCacheControl with each input (FuzzCacheControl.swift).
FuzzDriver.run { fuzzCacheControl($0, $1) }
