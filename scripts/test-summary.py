#!/usr/bin/env python3
"""The closing summary of `make test` (scripts/test.sh): one table of every test target that
ran, from the JUnit XML files scripts/run-suite.sh writes (WEBIMAGE_RESULTS_DIR), the names of
the failed tests with their first issue, the skipped ones with their reason, and the consumer
package's check. Exits 1 when anything failed, a run left no results, or nothing ran.

Usage: test-summary.py RESULTS_DIR [--consumer STATUS]
"""
import glob
import os
import sys
import xml.etree.ElementTree as ET


def main():
    directory = sys.argv[1]
    consumer = None
    if "--consumer" in sys.argv:
        consumer = int(sys.argv[sys.argv.index("--consumer") + 1])

    targets = {}  # target -> [passed, failed, skipped]
    failed, skipped, problems = [], [], []
    for status_file in sorted(glob.glob(os.path.join(directory, "*.status"))):
        name = os.path.basename(status_file)[: -len(".status")]
        status = int(open(status_file).read().strip() or "1")
        files = glob.glob(os.path.join(directory, name + "*.xml"))
        if not files:
            reason = "it stopped (no output for minutes)" if status == 124 else f"it ended with status {status}"
            problems.append(f"the {name} run left no results: {reason}")
            continue
        seen, failed_before = 0, len(failed)
        for path in files:
            for case in ET.parse(path).getroot().iter("testcase"):
                seen += 1
                target, _, suite = case.get("classname", "?").partition(".")
                test = f"{suite}/{case.get('name')}" if suite else case.get("name")
                counts = targets.setdefault(target, [0, 0, 0])
                failure = case.find("failure")
                if failure is None:
                    failure = case.find("error")
                skip = case.find("skipped")
                if failure is not None:
                    counts[1] += 1
                    message = (failure.get("message") or failure.text or "").strip().splitlines()
                    failed.append((target, test, message[0] if message else ""))
                elif skip is not None:
                    counts[2] += 1
                    skipped.append((target, test, (skip.get("message") or skip.text or "").strip()))
                else:
                    counts[0] += 1
        if status != 0 and len(failed) == failed_before:
            problems.append(f"the {name} run ended with status {status} ({seen} tests reported)")

    print()
    print("make test: summary")
    width = max([len(t) for t in targets] + [len("Examples/Consumer"), 6])
    print(f"  {'target':<{width}}  {'passed':>6}  {'failed':>6}  {'skipped':>7}")
    totals = [0, 0, 0]
    for target in sorted(targets):
        p, f, s = targets[target]
        totals = [totals[0] + p, totals[1] + f, totals[2] + s]
        print(f"  {target:<{width}}  {p:>6}  {f:>6}  {s:>7}")
    print(f"  {'total':<{width}}  {totals[0]:>6}  {totals[1]:>6}  {totals[2]:>7}")
    if consumer is not None:
        verdict = "built and ran" if consumer == 0 else f"FAILED (status {consumer})"
        print(f"  {'Examples/Consumer':<{width}}  {verdict}")
    if failed:
        print(f"Failed ({len(failed)}):")
        for target, test, message in failed:
            print(f"  {target}.{test}" + (f": {message}" if message else ""))
    if skipped:
        print(f"Skipped ({len(skipped)}):")
        for target, test, message in skipped:
            print(f"  {target}.{test}" + (f": {message}" if message else ""))
    for problem in problems:
        print(f"  {problem}")
    bad = bool(failed or problems or (consumer not in (None, 0)) or sum(totals) == 0)
    if sum(totals) == 0:
        print("  no test ran")
    print("make test: " + ("FAILED" if bad else "passed"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
