import FuzzSupport

// libFuzzer calls fuzzDataURL with each input (FuzzDataURL.swift).
FuzzDriver.run { fuzzDataURL($0, $1) }
