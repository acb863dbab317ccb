import FuzzSupport

// libFuzzer calls fuzzProxyRequest with each input (FuzzProxyRequest.swift).
FuzzDriver.run { fuzzProxyRequest($0, $1) }
