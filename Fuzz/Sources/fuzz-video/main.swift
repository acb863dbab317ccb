import FuzzSupport

// libFuzzer calls fuzzVideo with each input (FuzzVideo.swift).
FuzzDriver.run { fuzzVideo($0, $1) }
