#!/usr/bin/env python3
"""A cached variant's cost beside nginx serving the same bytes as static files (issue 29), in
one run: `make bench GROUPS=warm`.

- ours: `webimage serve` with its caches, every variant asked once before it is timed, so each
  timed request is a memory hit (answered ahead of the HTTP codec);
- nginx: 2 workers, `sendfile`, the same bytes (our own outputs) as static files;
- the same variants asked for by thumbor and imgproxy URLs, beside `/image` ones;
- with `WARM_BASELINE=BINARY`, the same server built from an earlier commit.

wrk runs 32 connections for WARM_BENCH_SECONDS (5) per server, WARM_BENCH_ROUNDS (6) rounds;
each round measures every server once, pairs back to back in an order that flips from round to
round. The figures: requests/s and the server's CPU time (user + system, its children's too)
per request. This machine switches between a fast and a slow mode between runs, so each ratio
is the median of the rounds' own ratios, and each figure the median of its rounds.
Usage: warm_bench.py WEBIMAGE_BINARY PHOTOS_DIR
"""

import os
import shutil
import statistics
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy_bench import photo_arguments, QUALITY, WIDTH, Servers, fetch, nginx_workdir, row, wrk  # noqa: E402

ROUNDS = int(os.environ.get("WARM_BENCH_ROUNDS", "6"))
SECONDS = int(os.environ.get("WARM_BENCH_SECONDS", "5"))
REFERENCE = {"nginx": "nginx, the same bytes as static files", "baseline": "the server at WARM_BASELINE", "ours": "warm /image URLs"}


def main():
    arguments = photo_arguments("warm")
    if arguments is None:
        return
    binary, photos, names = arguments
    baseline = os.environ.get("WARM_BASELINE")
    ours_paths = [f"/image?url={urllib.parse.quote('local:///' + n, safe='')}&w={WIDTH}&q={QUALITY}" for n in names]
    workdir, static_dir = nginx_workdir("webimage-warm-bench-")
    servers = Servers(binary, photos, workdir)
    try:
        bases = {"ours": servers.start_ours("ours", ["--thumbor-allow-unsafe"])}
        bases["thumbor URLs"] = bases["imgproxy URLs"] = bases["ours"]
        if baseline:
            bases["baseline"] = servers.start_ours("baseline", [], binary=os.path.abspath(baseline))
        for n, path in zip(names, ours_paths):
            with open(os.path.join(static_dir, n), "wb") as f:
                f.write(fetch(bases["ours"] + path))
        _, bases["nginx"] = servers.start_nginx(static_dir)
        paths = {
            "ours": ours_paths, "baseline": ours_paths, "nginx": ["/" + n for n in names],
            "thumbor URLs": [f"/thumbor/unsafe/{WIDTH}x0/{urllib.parse.quote(n)}" for n in names],
            "imgproxy URLs": [f"/imgproxy/insecure/rs:fit:{WIDTH}:0/q:{QUALITY}/plain/local:///{urllib.parse.quote(n)}" for n in names],
        }
        servers.pids["thumbor URLs"] = servers.pids["imgproxy URLs"] = servers.pids["ours"]
        for label, base in bases.items():  # every answer once before it is timed (ours: now cached)
            for path in paths[label]:
                fetch(base + path)
        pairs = [("ours", "nginx"), ("thumbor URLs", "ours"), ("imgproxy URLs", "ours")] + ([("ours", "baseline")] if baseline else [])
        results = {}
        for round_number in range(ROUNDS):
            measured = set()
            for pair in pairs:
                for label in (pair if round_number % 2 == 0 else pair[::-1]):
                    if label in measured:
                        continue
                    measured.add(label)
                    rps, _, _, errors, cpu = wrk(bases[label], paths[label], seconds=SECONDS, connections=32, threads=2,
                                                 workdir=workdir, pid=servers.pids[label])
                    results.setdefault(label, []).append((rps, cpu, errors))
        for label, runs in results.items():
            text = ", ".join(f"{r[0]:.0f} req/s {r[1]:.1f} µs" for r in runs)
            print(f"  {label}: {text}; errors {sum(r[2] for r in runs)}", file=sys.stderr)
        print(f"{len(names)} photos → {WIDTH} px, cached; {ROUNDS} alternating rounds of {SECONDS} s, wrk -c32", file=sys.stderr)

        def paired(reference, index, name, unit, target=None, higher_is_better=True, ours="ours"):
            ratio = statistics.median(a[index] / b[index] for a, b in zip(results[ours], results[reference]))
            median = lambda label: statistics.median(r[index] for r in results[label])
            row(name, median(ours), median(reference), REFERENCE[reference], unit, target, higher_is_better, ratio)

        print()
        print("| group | benchmark | ours | reference | ref. value | ours vs ref. | target | met |")
        print("|---|---|---:|---|---:|---:|---|---|")
        paired("nginx", 0, "warm (cached), requests/s", "req/s", 1.0)
        paired("nginx", 1, "warm (cached), server CPU per request", "µs", 1.5, higher_is_better=False)
        for dialect in ("thumbor URLs", "imgproxy URLs"):
            paired("ours", 0, f"warm (cached), {dialect}, requests/s", "req/s", 0.9, ours=dialect)
        if baseline:
            paired("baseline", 0, "warm (cached), requests/s", "req/s")
            paired("baseline", 1, "warm (cached), server CPU per request", "µs", higher_is_better=False)
    finally:
        servers.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
