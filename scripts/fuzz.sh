#!/usr/bin/env bash
# The libFuzzer targets in Fuzz/ (a separate SwiftPM package over this one).
#
#   scripts/fuzz.sh build                 build every target (the ASan build of scripts/sanitized-build.sh)
#   scripts/fuzz.sh run SECONDS [TARGET…] run each target (default: all) for SECONDS, one after another
#   scripts/fuzz.sh replay [TARGET…]      run each input of each target's corpus once, under the
#                                         default limits (FUZZ_TIMEOUT does not apply)
#   scripts/fuzz.sh list                  the targets
#
# FUZZ_SEED=N makes a run repeat libFuzzer's choices (CI's smoke sets it: a finding there must
# come back when the same commit is run again); campaigns leave it unset and explore afresh.
# A run that finds something prints each new artifact (up to 48 KB) in Base64 after its summary,
# so that a finding made on another machine (CI) can be replayed from the log alone:
#   base64 -d > input <<< 'THE LINE'; .build-asan/…/debug/fuzz-incremental input
#
# A target's corpus grows in $FUZZ_CORPUS/<target> (default Fuzz/.corpus/<build>, not committed), seeded
# from the repository's fixtures; findings land in Fuzz/.artifacts/<target>/ and fail the run.
# Each run prints libFuzzer's final statistics; the summary table lists executions, exec/s,
# coverage (cov: edges, ft: features) and corpus size per target (docs/reliability.md).
#
# Limits that make an input a finding: a crash or sanitizer report, more than 512 MB resident or
# a single allocation over 512 MB, and more than FUZZ_TIMEOUT seconds for one input: 1 s in the
# optimised build (FUZZ_BUILD=release), 5 s in the shared debug build, where Swift code under
# ASan runs some 20 times slower (the thumbnail of Demo/images/chi-animated.gif takes over a second there).
# libFuzzer's time limit is wall-clock time: a campaign under `nice -n 19` beside other builds can
# be starved for seconds, and inputs that take milliseconds then time out. Such campaigns run with
# a larger FUZZ_TIMEOUT (10), and `replay` then checks the corpus they kept against the default.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/sanitized-build.sh
# The Swift runtime's backtracer does not work under ASan (it hangs or reports itself): off, so
# that a Swift trap ends the run at once with libFuzzer's own report.
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=no}
# ASan keeps freed memory in a quarantine of 256 MB by default, to catch uses after free; over a
# corpus of a thousand image inputs it alone took fuzz-decode's resident memory to 514 MB, past
# the 512 MB limit that is meant to catch our allocations (measured 2026-11-25: 166 MB with a
# 16 MB quarantine). 64 MB still holds many inputs' worth of freed buffers.
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64}
# fontconfig's process-wide configuration, built for the first SVG with text, lives until exit
# (scripts/lsan.supp says more).
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}
# One corpus per build: units the release build keeps (larger, slower inputs) can be over the
# debug build's time limit.
CORPUS=${FUZZ_CORPUS:-Fuzz/.corpus/${FUZZ_BUILD:-debug}}
ARTIFACTS=Fuzz/.artifacts
TARGETS=(fuzz-decode fuzz-incremental fuzz-header fuzz-metadata fuzz-proxy-request fuzz-disk-cache fuzz-data-url fuzz-cache-control fuzz-grid fuzz-svg fuzz-pdf fuzz-video fuzz-placeholder fuzz-request-head)


# The seed folders and dictionary of a target.
seeds_of() {
  case "$1" in
    fuzz-decode|fuzz-incremental|fuzz-header|fuzz-metadata) echo "Fuzz/.seeds/images" ;;
    fuzz-grid) echo "Fuzz/seeds/grid" ;;
    fuzz-svg) echo "Fuzz/seeds/svg" ;;
    fuzz-pdf) echo "Fuzz/seeds/pdf" ;;
    fuzz-video) echo "Fuzz/seeds/video" ;;
    fuzz-proxy-request) echo "Fuzz/seeds/proxy-request" ;;
    fuzz-data-url) echo "Fuzz/seeds/data-url" ;;
    fuzz-cache-control) echo "Fuzz/seeds/cache-control" ;;
    fuzz-placeholder) echo "Fuzz/seeds/placeholder" ;;
    fuzz-request-head) echo "Fuzz/seeds/request-head" ;;
    fuzz-disk-cache) echo "Fuzz/.seeds/disk-cache" ;;
  esac
}
dictionary_of() {
  case "$1" in
    fuzz-decode|fuzz-incremental|fuzz-header|fuzz-metadata|fuzz-grid) echo "Fuzz/dictionaries/images.dict" ;;
    fuzz-svg) echo "Fuzz/dictionaries/svg.dict" ;;
    fuzz-pdf) echo "Fuzz/dictionaries/pdf.dict" ;;
    fuzz-video) echo "Fuzz/dictionaries/video.dict" ;;
    fuzz-proxy-request) echo "Fuzz/dictionaries/proxy-request.dict" ;;
    fuzz-data-url) echo "Fuzz/dictionaries/data-url.dict" ;;
    fuzz-cache-control) echo "Fuzz/dictionaries/cache-control.dict" ;;
    fuzz-placeholder) echo "Fuzz/dictionaries/placeholder.dict" ;;
    fuzz-request-head) echo "Fuzz/dictionaries/request-head.dict" ;;
    fuzz-disk-cache) echo "Fuzz/dictionaries/disk-cache.dict" ;;
  esac
}

# Image seeds: the fixtures and demo images up to 128 KB in the optimised build, 40 KB in the
# debug one (larger ones only slow mutation down; in the debug build the 85 KB animated GIF's
# thumbnail alone takes 13 s), plus the committed regression inputs of every target.
prepare_seeds() {
  local bin=$1
  rm -rf Fuzz/.seeds/images
  mkdir -p Fuzz/.seeds/images Fuzz/.seeds/disk-cache
  find Tests/Fixtures Demo/images -maxdepth 1 -type f -size -$((seed_kb + 1))k \
    \( -name '*.jpg' -o -name '*.png' -o -name '*.gif' -o -name '*.webp' -o -name '*.avif' -o -name '*.heic' -o -name '*.jxl' \
       -o -name '*.bmp' -o -name '*.ico' -o -name '*.tif' -o -name '*.svg' \) \
    -exec cp {} Fuzz/.seeds/images/ \;
  if [ -d Tests/Fixtures/fuzz ]; then
    find Tests/Fixtures/fuzz -path '*fuzz-decode*' -o -path '*fuzz-incremental*' -o -path '*fuzz-header*' | \
      while read -r f; do [ -f "$f" ] && cp "$f" "Fuzz/.seeds/images/regression-$(basename "$f")"; done
  fi
  # The disk cache target writes a valid journal and entry file as its seeds.
  WEBIMAGE_FUZZ_SEEDS=Fuzz/.seeds/disk-cache "$bin/fuzz-disk-cache" -runs=0 >/dev/null 2>&1 || true
}

# The disk-cache targets (fuzz-disk-cache, fuzz-cache-control) make their caches in $TMPDIR: a
# folder on tmpfs (FUZZ_TMPDIR, default /dev/shm when it is writable), removed afterwards. The
# file system is not under test, and on a disk every input's file operations cost 30 times more.
use_tmpfs() {
  local parent=${FUZZ_TMPDIR:-/dev/shm}
  [ -d "$parent" ] && [ -w "$parent" ] || parent=${TMPDIR:-/tmp}
  TMPDIR=$(mktemp -d "$parent/webimage-fuzz.XXXXXX")
  export TMPDIR
  trap 'rm -rf "$TMPDIR"' EXIT
}

# fuzz-pdf: Poppler decodes each image a document embeds at the image's own size before drawing
# it, and poppler-glib shows no image's size beforehand: the 783-byte flate-image.pdf seed with its
# /Width and /Height changed to 30000 makes one 3.6 GB allocation (7 s of CPU to fill it). The
# renderer child meets such an allocation at its address-space limit (1 GiB): malloc returns
# NULL, cairo hands Poppler an error surface and the image is left out, in milliseconds. The
# target's allocations over 256 MB return NULL the same way, rather than being findings of
# libFuzzer's malloc limit, and the target's memory stays under the 512 MB RSS limit.
asan_options_of() {
  case "$1" in
    fuzz-pdf) echo "$ASAN_OPTIONS:allocator_may_return_null=1:max_allocation_size_mb=256" ;;
    *) echo "$ASAN_OPTIONS" ;;
  esac
}

default_timeout() {
  if [ "${FUZZ_BUILD:-debug}" = release ]; then echo 1; else echo 5; fi
}

case "${1:-}" in
  build)
    if [ "${FUZZ_BUILD:-debug}" = release ]; then
      for target in "${TARGETS[@]}"; do "$SWIFT" build "${fuzz_build[@]}" --product "$target"; done
    else
      "$SWIFT" build --build-tests "${fuzz_build[@]}"
    fi
    ;;
  list)
    printf '%s\n' "${TARGETS[@]}"
    ;;
  replay)
    shift
    targets=("$@")
    [ ${#targets[@]} -gt 0 ] || targets=("${TARGETS[@]}")
    bin=$("$SWIFT" build "${fuzz_build[@]}" --show-bin-path)
    timeout=$(default_timeout)
    use_tmpfs
    failed=0
    for target in "${targets[@]}"; do
      corpus="$CORPUS/$target"
      [ -d "$corpus" ] || { echo "replay: $target has no corpus in $corpus"; continue; }
      mkdir -p "$ARTIFACTS/$target"
      log="$ARTIFACTS/$target/last-replay.log"
      status=0
      ASAN_OPTIONS=$(asan_options_of "$target") UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
      "$bin/$target" "$corpus" -runs=0 -timeout="$timeout" -rss_limit_mb=512 -malloc_limit_mb=512 -print_final_stats=1 \
        -artifact_prefix="$ARTIFACTS/$target/" >"$log" 2>&1 || status=$?
      slowest=$(grep -o 'stat::slowest_unit_time_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
      if [ "$status" -ne 0 ]; then
        failed=1
        echo "replay: $target: FINDING (exit $status, see $log)"
        grep -E 'ERROR|fuzz finding|SUMMARY|Test unit written|runtime error' "$log" | head -20 || true
      else
        echo "replay: $target: $(ls "$corpus" | wc -l) inputs, each within ${timeout}s (slowest ${slowest}s)"
      fi
    done
    exit "$failed"
    ;;
  run)
    seconds=${2:?usage: scripts/fuzz.sh run SECONDS [TARGET…]}
    shift 2
    targets=("$@")
    [ ${#targets[@]} -gt 0 ] || targets=("${TARGETS[@]}")
    bin=$("$SWIFT" build "${fuzz_build[@]}" --show-bin-path)
    summary=()
    failed=0
    timeout=${FUZZ_TIMEOUT:-$(default_timeout)}
    if [ "${FUZZ_BUILD:-debug}" = release ]; then seed_kb=${FUZZ_SEED_MAX_KB:-128}; else seed_kb=${FUZZ_SEED_MAX_KB:-40}; fi
    use_tmpfs
    prepare_seeds "$bin"
    for target in "${targets[@]}"; do
      corpus="$CORPUS/$target"
      mkdir -p "$corpus" "$ARTIFACTS/$target"
      extra=()
      [ -d "Tests/Fixtures/fuzz/$target" ] && extra+=("Tests/Fixtures/fuzz/$target")
      log="$ARTIFACTS/$target/last-run.log"
      echo "fuzz: $target for ${seconds}s"
      status=0
      seed=()
      [ -n "${FUZZ_SEED:-}" ] && seed=(-seed="$FUZZ_SEED")
      find "$ARTIFACTS/$target" -maxdepth 1 -type f ! -name '*.log' -printf '%f\n' | sort > "$ARTIFACTS/$target/.before"
      ASAN_OPTIONS=$(asan_options_of "$target") UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
      "$bin/$target" "$corpus" "$(seeds_of "$target")" "${extra[@]}" "${seed[@]}" \
        -dict="$(dictionary_of "$target")" -max_total_time="$seconds" -timeout="$timeout" \
        -rss_limit_mb=512 -malloc_limit_mb=512 -max_len=131072 -print_final_stats=1 \
        -artifact_prefix="$ARTIFACTS/$target/" >"$log" 2>&1 || status=$?
      runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo '?')
      speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo '?')
      last=$(grep -E '^#[0-9]+' "$log" | grep ' cov: ' | tail -1 || true)
      cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*' || echo '?')
      ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*' || echo '?')
      units=$(echo "$last" | grep -o 'corp: [0-9]*' | grep -o '[0-9]*$' || echo '?')
      result=ok
      if [ "$status" -ne 0 ]; then
        result="FINDING (exit $status, see $log)"
        failed=1
        grep -E 'ERROR|fuzz finding|SUMMARY|Test unit written|runtime error' "$log" | head -20 || true
        find "$ARTIFACTS/$target" -maxdepth 1 -type f ! -name '*.log' ! -name '.before' -printf '%f\n' | sort \
          | comm -13 "$ARTIFACTS/$target/.before" - | sed "s|^|$ARTIFACTS/$target/|" >> "$ARTIFACTS/.new"
      fi
      rm -f "$ARTIFACTS/$target/.before"
      summary+=("$(printf '%-20s %12s %8s %7s %8s %7s  %s' "$target" "$runs" "$speed" "$cov" "$ft" "$units" "$result")")
    done
    echo
    printf '%-20s %12s %8s %7s %8s %7s  %s\n' target executions exec/s cov ft corpus result
    printf '%s\n' "${summary[@]}"
    if [ -s "$ARTIFACTS/.new" ]; then
      echo
      while read -r artifact; do
        if [ "$(stat -c %s "$artifact")" -le 49152 ]; then
          echo "fuzz: $artifact ($(stat -c %s "$artifact") bytes) in Base64:"
          base64 -w0 "$artifact"; echo
        else
          echo "fuzz: $artifact is $(stat -c %s "$artifact") bytes, too large to print"
        fi
      done < "$ARTIFACTS/.new"
    fi
    rm -f "$ARTIFACTS/.new"
    exit "$failed"
    ;;
  *)
    sed -n '2,/^set -e/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
