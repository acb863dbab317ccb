// Only the header matters: it declares libFuzzer's driver, which the fuzz targets link from
// the toolchain's libclang_rt.fuzzer_no_main (see Package.swift). A C target needs a source.
#include "CFuzzerDriver.h"
