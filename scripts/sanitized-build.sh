# Sourced by scripts/fuzz.sh and scripts/sanitize.sh: the one AddressSanitizer build that both
# use, so that CI compiles the package and its dependencies under ASan once.
#
# `.build-asan` (debug): every target under ASan, UBSan on the C code (CCodecShims and the C of
# the dependencies), and libFuzzer's coverage instrumentation (edges, 8-bit counters, comparison
# tracing), which costs the test suite little: without libFuzzer linked in, ASan's runtime
# answers the coverage callbacks with no-ops. WEBIMAGE_FUZZER_RUNTIME adds the fuzz targets to
# the package (see Package.swift) and names libFuzzer's runtime for them.
#
# FUZZ_BUILD=release builds the fuzz targets alone, optimised, in `.build-fuzz`: several
# times the executions per second, for long campaigns (not in CI).

SWIFT=${SWIFT:-swift}
toolchain_lib=$(dirname "$(dirname "$(readlink -f "$(command -v "$SWIFT")")")")/lib/swift/clang/lib/linux
export WEBIMAGE_FUZZER_RUNTIME=${WEBIMAGE_FUZZER_RUNTIME:-$toolchain_lib/libclang_rt.fuzzer_no_main-x86_64.a}
[ -f "$WEBIMAGE_FUZZER_RUNTIME" ] || { echo "no libFuzzer runtime at $WEBIMAGE_FUZZER_RUNTIME" >&2; exit 1; }

coverage=inline-8bit-counters,pc-table,trace-cmp
asan_flags=(--sanitize=address
  -Xswiftc -sanitize-coverage=edge,$coverage
  -Xcc -fsanitize-coverage=$coverage -Xcc -fsanitize=undefined)
if [ "${FUZZ_BUILD:-debug}" = release ]; then
  fuzz_build=(-c release --scratch-path .build-fuzz "${asan_flags[@]}")
else
  fuzz_build=(--scratch-path .build-asan "${asan_flags[@]}")
fi
