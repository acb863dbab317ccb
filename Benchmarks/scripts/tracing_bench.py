#!/usr/bin/env python3
"""What tracing costs the proxy (issue 28), side by side in one run:

- untraced: `webimage serve` with tracing compiled in and no tracer bootstrapped, against the
  same server built before tracing was added (`TRACING_BASELINE=BINARY`; the rows are left out
  without it), cold (caches off, 4 connections) and warm (every variant cached, 32 connections);
- traced: the same binary exporting every request's spans over OTLP/HTTP to a receiver of the
  real protocol on loopback (Tests/Fixtures/otlp-receiver.py), against itself untraced, cold and
  warm. A traced server answers every request through its router (the event-loop answer of
  cached variants makes no span), so the warm row shows what a trace per cached request costs.

The servers run one at a time, in rounds: each round measures every server once, a pair's two
sides back to back, in an order that flips from one round to the next (A B, then B A). This
machine switches between a fast and a slow mode between runs of a few seconds, which moves
requests/s by a third: so each ratio is the median of the rounds' own ratios (both sides of a
pair measured in the same minute), and each figure beside it the median of its rounds.
Prints one Markdown table in the format of WebImageBenchmarks.
Usage: tracing_bench.py WEBIMAGE_BINARY PHOTOS_DIR
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy_bench import photo_arguments, QUALITY, WIDTH, Servers, fetch, row, wrk  # noqa: E402

ROUNDS = int(os.environ.get("TRACING_BENCH_ROUNDS", "6"))
SECONDS = int(os.environ.get("TRACING_BENCH_SECONDS", "5"))


def start_receiver(workdir):
    """The OTLP receiver, its spans printed to a file (counted at the end: the traced rounds
    must have exported)."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "Fixtures", "otlp-receiver.py")
    path = os.path.join(workdir, "spans.jsonl")
    with open(path, "w") as out:
        process = subprocess.Popen([sys.executable, script], stdout=out, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 30
    while time.time() < deadline and process.poll() is None:
        with open(path) as f:
            first = f.readline().strip()
        if first.startswith("listening on "):
            return process, first[len("listening on "):], path
        time.sleep(0.1)
    raise RuntimeError("otlp-receiver.py did not start (is opentelemetry-proto installed?)")


REFERENCE = {
    "before tracing cold": "the server before tracing", "before tracing warm": "the server before tracing",
    "untraced cold": "the same server, no tracer", "untraced warm": "the same server, no tracer",
}


def measure(servers, label, base, paths, warm, results):
    args = dict(seconds=SECONDS, connections=32 if warm else 4, threads=2, workdir=servers.workdir,
                pid=servers.pids[label])
    for path in paths:  # every answer once before it is timed (warm: now cached)
        fetch(base + path)
    rps, _, _, errors, cpu = wrk(base, paths, **args)
    results.setdefault(label, []).append((rps, cpu, errors))


def main():
    arguments = photo_arguments("tracing")
    if arguments is None:
        return
    binary, photos, names = arguments
    baseline = os.environ.get("TRACING_BASELINE")
    paths = [f"/image?url={urllib.parse.quote('local:///' + n, safe='')}&w={WIDTH}&q={QUALITY}" for n in names]
    workdir = tempfile.mkdtemp(prefix="webimage-tracing-bench-")
    servers = Servers(binary, photos, workdir)
    receiver = None
    try:
        receiver, endpoint, spans_path = start_receiver(workdir)
        servers.processes.append(receiver)
        traced_env = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_SERVICE_NAME": "webimage-bench"}
        variants = [("untraced", {}, None), ("traced", traced_env, None)]
        if baseline:
            variants.append(("before tracing", {}, os.path.abspath(baseline)))
        bases = {}
        for label, env, other in variants:
            bases[label + " cold"] = servers.start_ours(label + " cold", ["--no-cache"], env=env, binary=other)
            bases[label + " warm"] = servers.start_ours(label + " warm", [], env=env, binary=other)
        # Pairs, each measured back to back: (ours, reference).
        pairs = [("untraced cold", "traced cold"), ("untraced warm", "traced warm")]
        if baseline:
            pairs = [("untraced cold", "before tracing cold"), ("untraced warm", "before tracing warm")] + pairs
        results = {}
        done = set()
        for round_number in range(ROUNDS):
            done.clear()
            for pair in pairs:
                for label in (pair if round_number % 2 == 0 else pair[::-1]):
                    if (round_number, label) in done:
                        continue  # a server in two pairs is measured once a round
                    done.add((round_number, label))
                    measure(servers, label, bases[label], paths, label.endswith("warm"), results)
        with open(spans_path) as f:
            exported = sum(1 for line in f if line.startswith('{"span"'))
        print(f"{len(names)} photos → {WIDTH} px; {ROUNDS} alternating rounds of {SECONDS} s each; "
              f"{exported} spans reached the OTLP receiver", file=sys.stderr)

        def median(label, index):
            return statistics.median(r[index] for r in results[label])

        def paired(ours, reference, index, name, unit, target=None, higher_is_better=True):
            """A row whose ratio is the median of the rounds' ratios."""
            ratio = statistics.median(a[index] / b[index] for a, b in zip(results[ours], results[reference]))
            row(name, median(ours, index), median(reference, index), REFERENCE[reference], unit, target, higher_is_better, ratio)

        for label, runs in results.items():
            text = ", ".join(f"{r[0]:.1f} req/s, {r[1]:.1f} µs CPU" for r in runs)
            print(f"  {label}: {text}; errors {sum(r[2] for r in runs)}", file=sys.stderr)
        print()
        print("| group | benchmark | ours | reference | ref. value | ours vs ref. | target | met |")
        print("|---|---|---:|---|---:|---:|---|---|")
        if baseline:
            for kind in ("cold", "warm"):
                paired(f"untraced {kind}", f"before tracing {kind}", 0, f"tracing compiled in, no tracer: {kind}, requests/s", "req/s", 0.99)
            paired("untraced warm", "before tracing warm", 1, "tracing compiled in, no tracer: warm, server CPU per request", "µs",
                   1.01, higher_is_better=False)
        else:
            print("  tracing: TRACING_BASELINE is not set; the rows against the server before tracing are left out", file=sys.stderr)
        paired("traced cold", "untraced cold", 0, "exporting every request's spans: cold, requests/s", "req/s", 0.95)
        paired("traced warm", "untraced warm", 0, "exporting every request's spans: warm, requests/s", "req/s")
        if exported == 0:
            print("tracing benchmark: no span reached the receiver", file=sys.stderr)
    finally:
        servers.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
