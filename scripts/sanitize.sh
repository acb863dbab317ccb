#!/usr/bin/env bash
# The test suite under sanitizers, each in its own scratch path so that the normal .build is
# never invalidated:
#
#   scripts/sanitize.sh address   AddressSanitizer (+ LeakSanitizer), with UBSan on the C code
#                                 (our CCodecShims and the C of the dependencies): .build-asan,
#                                 the build the fuzz targets share (scripts/sanitized-build.sh)
#   scripts/sanitize.sh thread    ThreadSanitizer: .build-tsan
#   scripts/sanitize.sh           both
#
# Every test runs (tests that spawn the `webimage` executable find it built with the same
# sanitizer beside the tests; nginx tests run when nginx is installed), except two that cannot
# work under ASan: the one that checks glibc's malloc tunable (ASan's allocator replaces
# glibc's), and the corpus test that decodes bombs in a child limited to 1 GiB of address space
# (ASan and TSan reserve terabytes for their shadow memory). A sanitizer report aborts the test
# process, which fails the run.
#
# The TSan build defines WEBIMAGE_TSAN: every module of ours then resolves `Mutex` to
# WebImageCore's pthread-backed `PThreadMutex` (Sources/WebImageCore/Support/PThreadMutex.swift
# and a TSanMutex.swift in each module), because on Linux `Synchronization.Mutex` is a futex
# lock inside the uninstrumented Synchronization library, which TSan cannot see: with it, every
# access to locked state reads as a race. TSan intercepts pthread mutexes. See
# docs/reliability.md; CI runs ASan only (TSan is a third full build).
# TSan's one suppression, a false report inside swift-nio's pooled receive buffers, is in
# scripts/tsan.supp (with why); ASan's are in scripts/asan.supp.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/sanitized-build.sh

# WEBIMAGE_SANITIZE_SHORT=1 runs the short version CI runs (issue 16: "CI runs the short
# versions"): the tests of the code that works on raw memory, where a sanitizer finds what Swift's
# own checks cannot. That is every codec test (our C shims, the decoders' and encoders' buffers),
# every core test (bitmaps, the resampler, the processors, the disk cache's files) and the
# server's suites that drive its pixel code directly (the dialects' filters, trim, smart crop,
# max_bytes, imgproxy's minimum sizes). The proxy's HTTP tests, some 200 s of CI's two cores
# under ASan, run in `make test`; the whole suite under both sanitizers is `make sanitize`.
# `webimage info` and `convert` run the core's and the codecs' code in a child built with the same
# sanitizer: their suites (WebImageCommandTests) run with the core's and the codecs' tests.
short_suites='WebImageServerTests\.(ThumborEffectTests|TrimServingTests|SmartCropServingTests|MaxBytesServingTests|ImgproxyMinimumSizeTests)|WebImageCommandTests\.(InfoCommandTests|InfoColourTests)'
# The processes' shares, as in scripts/run-suite.sh: `webimage convert`'s tests are codec work,
# `webimage serve`'s run with the server's tests.
codec_work='WebImageCodecsTests|WebImageCommandTests\.ConvertCommandTests'
server_work='WebImageServerTests|WebImageCommandTests\.ServeCommandTests'

run() {
  local sanitizer=$1 scratch=$2
  shift 2
  echo "sanitize: the test suite under the $sanitizer sanitizer ($scratch)"
  "$SWIFT" build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" "$@"
  if [ "${WEBIMAGE_SANITIZE_SHORT:-0}" = 1 ]; then
    echo "sanitize: the short version (WEBIMAGE_SANITIZE_SHORT=1): the core and the server's pixel code, then the codecs"
    # Two processes, as scripts/run-suite.sh runs the whole suite: the codec tests' synchronous
    # work would otherwise starve the core tests that keep time.
    SWIFT="$SWIFT" bash scripts/run-suite.sh --sanitize="$sanitizer" --scratch-path "$scratch" "$@" \
      --filter WebImageCoreTests --filter "$short_suites" || return $?
    SWIFT="$SWIFT" bash scripts/run-suite.sh --sanitize="$sanitizer" --scratch-path "$scratch" "$@" --filter "$codec_work"
    return $?
  fi
  # The whole suite in three processes: under a sanitizer the core tests' synchronous work (5 to
  # 15 times slower) holds the two threads of the cooperative pool long enough that the proxy
  # tests' origins time out (every one of them, from the first minute on, in a TSan run beside
  # one fuzzer on 2026-11-28); alone, the server tests pass. Codecs last, as in run-suite.sh.
  local status=0
  SWIFT="$SWIFT" bash scripts/run-suite.sh --sanitize="$sanitizer" --scratch-path "$scratch" "$@" \
    --skip "$codec_work" --skip "$server_work" || status=$?
  SWIFT="$SWIFT" bash scripts/run-suite.sh --sanitize="$sanitizer" --scratch-path "$scratch" "$@" --filter "$server_work" || status=$?
  SWIFT="$SWIFT" bash scripts/run-suite.sh --sanitize="$sanitizer" --scratch-path "$scratch" "$@" --filter "$codec_work" || status=$?
  return $status
}

# halt_on_error: a report ends the process (UBSan otherwise prints and continues).
# The Swift runtime's backtracer does not work under ASan (it hangs or reports itself): off.
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=no}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# No LeakSanitizer for the suite: it cannot follow the pointers Swift keeps with tag bits in an
# enum's spare bits (Data's storage, among others), so every lazily made global `Data` of the
# tests, and Foundation's own Process and FileHandle globals, read as leaks (checked on the
# whole suite: no report named the library's code or the C shims). The fuzz targets keep
# libFuzzer's leak check, per input, where such globals are few.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=0:suppressions=$PWD/scripts/asan.supp}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:suppressions=$PWD/scripts/tsan.supp}

tsan_flags=(-Xswiftc -DWEBIMAGE_TSAN)

case "${1:-all}" in
  address) run address .build-asan "${asan_flags[@]:1}" ;;
  thread) WEBIMAGE_FUZZER_RUNTIME= run thread .build-tsan "${tsan_flags[@]}" ;;
  all)
    run address .build-asan "${asan_flags[@]:1}"
    WEBIMAGE_FUZZER_RUNTIME= run thread .build-tsan "${tsan_flags[@]}"
    ;;
  *) echo "usage: scripts/sanitize.sh [address|thread|all]" >&2; exit 2 ;;
esac
