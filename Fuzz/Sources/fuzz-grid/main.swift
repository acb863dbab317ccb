import FuzzSupport

// libFuzzer calls fuzzGrid with each input (FuzzGrid.swift).
FuzzDriver.run { fuzzGrid($0, $1) }
