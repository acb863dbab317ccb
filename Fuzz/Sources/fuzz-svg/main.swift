import FuzzSupport

// libFuzzer calls fuzzSVG with each input (FuzzSVG.swift).
FuzzDriver.run { fuzzSVG($0, $1) }
