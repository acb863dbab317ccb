import FuzzSupport

// libFuzzer calls fuzzHeader with each input (FuzzHeader.swift).
FuzzDriver.run { fuzzHeader($0, $1) }
