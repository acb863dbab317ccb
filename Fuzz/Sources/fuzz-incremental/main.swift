import FuzzSupport

// libFuzzer calls fuzzIncremental with each input (FuzzIncremental.swift).
FuzzDriver.run { fuzzIncremental($0, $1) }
