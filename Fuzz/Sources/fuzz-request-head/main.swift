import FuzzSupport

// libFuzzer calls fuzzRequestHead with each input (FuzzRequestHead.swift).
FuzzDriver.run { fuzzRequestHead($0, $1) }
