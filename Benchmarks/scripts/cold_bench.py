#!/usr/bin/env python3
"""Cold renders beside a libvips server, by the format of the original (issue 29), in one run:
`make bench GROUPS=cold`.

- ours: `webimage serve --no-cache`, every request decoded, resized to 512 px wide and encoded
  as JPEG at quality 80 (`format=jpeg`: without it a PNG or WebP original is answered in its own
  format, and the two servers would not do the same work);
- libvips: Benchmarks/scripts/vips_server.py (pyvips, two processes, `thumbnail` shrinking
  while loading, JPEG at Q 80, no metadata), the same photos at the same width.

For the corpus photos together and for each format of original (JPEG, PNG, WebP), wrk runs 4
connections for COLD_BENCH_SECONDS (5) on each server, COLD_BENCH_ROUNDS (4) rounds, both servers
back to back in an order that flips from round to round; each ratio is the median of the rounds'
own ratios of requests/s, each figure the median of its rounds. Every answer is asked for once
before the timing (the page cache and both servers' threads warm). Each photo is served under
8 names and wrk cycles through them, so that no two requests in flight ask for the same original:
the proxy would decode it once for both.
Usage: cold_bench.py WEBIMAGE_BINARY PHOTOS_DIR
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy_bench import photo_arguments, QUALITY, Servers, fetch, row, wrk  # noqa: E402

ROUNDS = int(os.environ.get("COLD_BENCH_ROUNDS", "4"))
SECONDS = int(os.environ.get("COLD_BENCH_SECONDS", "5"))
WIDTH = 512
# Each photo is served under this many names (hard links), and wrk cycles through them: no two
# requests in flight ask for the same original. The proxy makes work asked for at the same time
# once for every request waiting on it (the decode of an original shared by two widths too); the
# libvips server does not, and that sharing is not what this measures.
COPIES = 8
# Targets of ours ÷ libvips in requests/s (issue 29).
TARGETS = {"all": 3.0, "JPEG": None, "PNG": 2.0, "WebP": 3.0}


def main():
    arguments = photo_arguments("cold")
    if arguments is None:
        return
    binary, photos, names = arguments
    kinds = {
        "all": names,
        "JPEG": [n for n in names if n.lower().endswith((".jpg", ".jpeg"))],
        "PNG": [n for n in names if n.lower().endswith(".png")],
        "WebP": [n for n in names if n.lower().endswith(".webp")],
    }
    workdir = tempfile.mkdtemp(prefix="webimage-cold-bench-")
    origin = os.path.join(workdir, "origin")
    os.makedirs(origin)
    copies = {}
    for n in names:
        stem, extension = os.path.splitext(n)
        copies[n] = [f"{stem}-{c}{extension}" for c in range(COPIES)]
        for copy in copies[n]:
            try:
                os.link(os.path.join(photos, n), os.path.join(origin, copy))
            except OSError:
                shutil.copyfile(os.path.join(photos, n), os.path.join(origin, copy))
    servers = Servers(binary, origin, workdir)
    try:
        bases = {"ours": servers.start_ours("ours", ["--no-cache"]), "libvips": servers.start_vips(WIDTH)}
        paths = {
            "ours": lambda n: f"/image?url={urllib.parse.quote('local:///' + n, safe='')}&w={WIDTH}&q={QUALITY}&format=jpeg",
            "libvips": lambda n: "/" + n,
        }
        for n in names:
            for label in bases:
                for copy in copies[n]:
                    fetch(bases[label] + paths[label](copy))
        results = {}
        for round_number in range(ROUNDS):
            for kind, members in kinds.items():
                order = ("ours", "libvips") if round_number % 2 == 0 else ("libvips", "ours")
                for label in order:
                    rps = wrk(bases[label], [paths[label](copies[n][c]) for c in range(COPIES) for n in members], seconds=SECONDS, connections=4,
                              threads=2, workdir=workdir)[0]
                    results.setdefault((kind, label), []).append(rps)
        for (kind, label), runs in results.items():
            print(f"  {kind} {label}: " + ", ".join(f"{r:.1f}" for r in runs) + " req/s", file=sys.stderr)
        print(f"{len(names)} photos → {WIDTH} px JPEG, uncached; {ROUNDS} alternating rounds of {SECONDS} s, wrk -c4",
              file=sys.stderr)
        print()
        print("| group | benchmark | ours | reference | ref. value | ours vs ref. | target | met |")
        print("|---|---|---:|---|---:|---:|---|---|")
        for kind, members in kinds.items():
            ours, vips = results[(kind, "ours")], results[(kind, "libvips")]
            ratio = statistics.median(a / b for a, b in zip(ours, vips))
            label = f"cold, {len(members)} {'photos' if kind == 'all' else kind + ' originals'} → {WIDTH} px JPEG, requests/s"
            row(label, statistics.median(ours), statistics.median(vips), "pyvips server, thumbnail + JPEG (2 processes)",
                "req/s", TARGETS[kind], True, ratio)
        png_decoders(workdir, [os.path.join(photos, n) for n in kinds["PNG"]])
    finally:
        servers.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def png_decoders(workdir, pngs):
    """libspng's and libpng's full decodes and libdeflate's inflate alone (png_decoders.c), on
    stderr: why our PNG path keeps libdeflate. Skipped without a C compiler or libspng-dev."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "png_decoders.c")
    binary = os.path.join(workdir, "png_decoders")
    built = subprocess.run(["cc", "-O2", source, "-o", binary, "-lspng", "-lpng", "-ldeflate"], capture_output=True, text=True)
    if built.returncode != 0:
        print("  cold: png_decoders.c not built (libspng-dev missing?); skipped", file=sys.stderr)
        return
    print(subprocess.run([binary] + pngs, capture_output=True, text=True).stdout, file=sys.stderr, end="")


if __name__ == "__main__":
    main()
