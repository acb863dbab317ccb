#!/usr/bin/env bash
# `make test` once everything is built: every suite (scripts/run-suite.sh), then the consumer
# package over the public API (Examples/Consumer, built with warnings as errors and run) even
# when a suite failed, then one summary of all of it (scripts/test-summary.py) as the last
# lines. Exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}

results=.build/test-results
rm -rf "$results"
WEBIMAGE_RESULTS_DIR=$results SWIFT=$SWIFT bash scripts/run-suite.sh "$@"

# The consumer package builds in this package's own .build: its dependencies are this package
# and the same checkouts, so what `swift build` compiled is reused (13 s, where a scratch path
# of its own rebuilt every dependency: 229 s on two cores). It is still a root package of its
# own, so it sees only the public API (not even `package` symbols).
echo
echo "A package of its own over the public API (Examples/Consumer), built with warnings as errors and run:"
"$SWIFT" build --package-path Examples/Consumer --scratch-path "$PWD/.build" && .build/debug/Consumer Demo/images
consumer=$?

python3 scripts/test-summary.py "$results" --consumer "$consumer"
