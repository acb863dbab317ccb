#!/usr/bin/env bash
# Runs the built test suite: `swift test --skip-build ARGS…` (in two processes, below), its output line by line and a
# watchdog on it.
#
# - Line by line: through `script`, so that the output is a terminal's, which Swift Testing
#   flushes at every line; into a pipe (CI's log) it is block-buffered, and a run that stops
#   shows only a prefix.
# - The watchdog: when the suite prints nothing for WEBIMAGE_STALL_SECONDS (default 240; the
#   slowest test takes under a minute), the tests that started and never ended are listed and the
#   run is stopped with status 124. The suite has stalled so (every thread idle, tests of many
#   suites waiting; docs/reliability.md, "A suite that stops") in about one run in five on a
#   loaded two-core machine. With WEBIMAGE_STALL_RETRIES=N a stalled run is started again, up to
#   N times; a run that fails is never retried.
# - With WEBIMAGE_RESULTS_DIR set, each process also writes its results as JUnit XML there
#   (`<name>-swift-testing.xml`, name `main` or `codecs`, or `run` when the caller picks the tests),
#   which scripts/test-summary.py reads for `make test`'s closing summary.
set -uo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
stall_seconds=${WEBIMAGE_STALL_SECONDS:-240}
retries=${WEBIMAGE_STALL_RETRIES:-0}
log=$(mktemp /tmp/webimage-suite-XXXXXX.log)
trap 'rm -f "$log"' EXIT

# The descendants of $1, deepest first.
descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1"); do
    descendants "$child"
    echo "$child"
  done
}

# The tests that printed "started" and no end, from a Swift Testing log.
pending_tests() {
  python3 - "$1" <<'PY'
import re, sys
text = re.sub(r"\x1b\[[0-9;]*m", "", open(sys.argv[1], "rb").read().decode("utf-8", "replace"))
started, ended = [], set()
for line in text.splitlines():
    if "Test case passing" in line:
        continue
    if m := re.search(r"◇ Test (.+) started\.$", line):
        started.append(m.group(1))
    elif m := re.search(r"[✔✘] Test (.+?) (with \d+ test cases? )?(passed|failed)", line):
        ended.add(m.group(1))
    elif m := re.search(r"Test (.+?) skipped", line):
        ended.add(m.group(1))
for name in started:
    if name not in ended:
        print("  " + name)
PY
}

# run_once NAME ARGS…
run_once() {
  local name=$1; shift
  local results=()
  if [ -n "${WEBIMAGE_RESULTS_DIR:-}" ]; then
    mkdir -p "$WEBIMAGE_RESULTS_DIR"
    rm -f "$WEBIMAGE_RESULTS_DIR/$name"*.xml
    results=(--xunit-output "$WEBIMAGE_RESULTS_DIR/$name.xml")
  fi
  : >"$log"
  script -q -e -f -c "$(printf '%q ' "$SWIFT" test --skip-build "${results[@]}" "$@")" "$log" &
  local pid=$! last_size=-1 quiet=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 5
    local size
    size=$(stat -c %s "$log")
    if [ "$size" -eq "$last_size" ]; then quiet=$((quiet + 5)); else quiet=0; last_size=$size; fi
    if [ "$quiet" -ge "$stall_seconds" ]; then
      echo
      echo "run-suite: no output for ${stall_seconds}s: the suite has stopped. Tests started and not ended:"
      pending_tests "$log"
      kill -9 $(descendants "$pid") "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      return 124
    fi
  done
  wait "$pid"
}

# One run, started again after a stall (status 124) up to $retries times: run_with_retries NAME ARGS…
run_with_retries() {
  local attempt=0 status
  while true; do
    run_once "$@"
    status=$?
    if [ "$status" -ne 124 ] || [ "$attempt" -ge "$retries" ]; then
      if [ -n "${WEBIMAGE_RESULTS_DIR:-}" ]; then echo "$status" >"$WEBIMAGE_RESULTS_DIR/$1.status"; fi
      return "$status"
    fi
    attempt=$((attempt + 1))
    echo "run-suite: starting the suite again ($attempt of $retries) after the stall above"
  done
}

# Two processes, one after the other, unless the caller picks tests itself: everything but the
# codec work, then the codec work: the codecs' tests and `webimage convert`'s (in
# WebImageCommandTests). Swift Testing runs every test at once on the cooperative pool (two
# threads here), and those tests are synchronous CPU work (corpus decodes, reference comparisons,
# `webimage convert` runs waited for) that hold those threads for minutes under a sanitizer.
# In one process the network tests' continuations waited behind them, so their time limits and
# HTTP deadlines ran out with nothing wrong (docs/reliability.md, "Tests starved of threads").
case " $* " in
  *" --filter "*|*" --filter="*|*" --skip "*|*" --skip="*) run_with_retries run "$@"; exit $? ;;
esac
codec_work='WebImageCodecsTests|WebImageCommandTests\.ConvertCommandTests'
run_with_retries main "$@" --skip "$codec_work"
first=$?
run_with_retries codecs "$@" --filter "$codec_work"
second=$?
if [ "$first" -ne 0 ]; then exit "$first"; fi
exit "$second"
