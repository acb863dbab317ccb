import FuzzSupport

// libFuzzer calls fuzzPDF with each input (FuzzPDF.swift).
FuzzDriver.run { fuzzPDF($0, $1) }
