import FuzzSupport

// libFuzzer calls fuzzDecode with each input (FuzzDecode.swift).
FuzzDriver.run { fuzzDecode($0, $1) }
