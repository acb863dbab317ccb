import FuzzSupport

// libFuzzer calls fuzzMetadata with each input (FuzzMetadata.swift).
FuzzDriver.run { fuzzMetadata($0, $1) }
