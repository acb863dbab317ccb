import FuzzSupport

// libFuzzer calls fuzzPlaceholder with each input (FuzzPlaceholder.swift).
FuzzDriver.run { fuzzPlaceholder($0, $1) }
