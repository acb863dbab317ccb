#!/usr/bin/env python3
"""Memory that comes back after a burst (issue 29): `webimage serve`'s resident memory before,
during and after a burst of ever-new variants.

1. Start `webimage serve` on the corpus photos with its default caches and limits.
2. Warm up: every photo once at 300 px, as JPEG; then wait until the process is idle and read
   its RSS (the base).
3. Burst for BURST seconds (90 by default; MEMORY_BURST_SECONDS): CLIENTS threads ask for
   variants never asked before (a random photo, a random width from 64 to 1600 px, JPEG, WebP,
   PNG or AVIF), while a sampler reads the RSS every 0.2 s (the peak) and a prober asks for
   `/healthz` every 0.5 s (it must answer throughout).
4. Stop the load and read the RSS 30 s later (MEMORY_SETTLE_SECONDS).

Prints rows in the format of the other benchmark scripts; the reference of the ratio is the
process's own RSS after warm-up (target: ≤ 2×). The peak is compared with the caches' configured
limits (the variant cache's and the decoded-image cache's memory) plus the allowance stated in
docs/benchmarks.md.
Usage: memory_bench.py WEBIMAGE_BINARY PHOTOS_DIR
"""

import os
import random
import shutil
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy_bench import Servers, fetch  # noqa: E402

BURST = float(os.environ.get("MEMORY_BURST_SECONDS", "90"))
SETTLE = float(os.environ.get("MEMORY_SETTLE_SECONDS", "30"))
CLIENTS = int(os.environ.get("MEMORY_CLIENTS", "4"))
FORMATS = ("jpeg", "webp", "png", "avif")
EXTENSIONS = (".jpg", ".jpeg", ".png", ".webp")
# The caches' memory limits of `webimage serve` on its defaults (ImageProxy.Configuration's
# variantMemoryLimit and imageMemoryLimit), and the allowance above them the peak may use:
# decode buffers of the renders in flight, the threads' stacks, the libraries' own pools.
CACHE_LIMITS_MIB = 256 + 128
PEAK_ALLOWANCE_MIB = 256


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def settle(pid, seconds):
    """Waits `seconds`, then returns the RSS."""
    time.sleep(seconds)
    return rss_mib(pid)


class Burst:
    def __init__(self, base, photos, seed=29):
        self.base, self.photos = base, photos
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.asked = set()
        self.stop = threading.Event()
        self.answered, self.failed = 0, 0
        self.peak = 0.0
        self.health_failures, self.health_worst = 0, 0.0

    def next_path(self):
        with self.lock:
            while True:
                variant = (self.random.choice(self.photos), self.random.randint(64, 1600), self.random.choice(FORMATS))
                if variant not in self.asked:
                    self.asked.add(variant)
                    break
        name, width, form = variant
        return f"/image?url={urllib.parse.quote('local:///' + name, safe='')}&w={width}&format={form}"

    def client(self):
        while not self.stop.is_set():
            path = self.next_path()
            try:
                fetch(self.base + path)
                with self.lock:
                    self.answered += 1
            except Exception:
                with self.lock:
                    self.failed += 1

    def sampler(self, pid):
        while not self.stop.is_set():
            self.peak = max(self.peak, rss_mib(pid))
            time.sleep(0.2)

    def prober(self):
        while not self.stop.is_set():
            started = time.perf_counter()
            try:
                with urllib.request.urlopen(self.base + "/healthz", timeout=5) as response:
                    response.read()
                    if response.status != 200:
                        self.health_failures += 1
            except Exception:
                self.health_failures += 1
            self.health_worst = max(self.health_worst, time.perf_counter() - started)
            time.sleep(0.5)

    def run(self, pid, seconds):
        threads = [threading.Thread(target=self.client) for _ in range(CLIENTS)]
        threads += [threading.Thread(target=self.sampler, args=(pid,)), threading.Thread(target=self.prober)]
        for thread in threads:
            thread.start()
        time.sleep(seconds)
        self.stop.set()
        for thread in threads:
            thread.join()


def main():
    binary = os.path.abspath(sys.argv[1])
    photos_dir = os.path.abspath(sys.argv[2])
    photos = sorted(n for n in os.listdir(photos_dir) if n.lower().endswith(EXTENSIONS))
    workdir = tempfile.mkdtemp(prefix="webimage-memory-bench-")
    servers = Servers(binary, photos_dir, workdir)
    try:
        base = servers.start_ours("memory", [])
        pid = servers.processes[-1].pid
        for name in photos:
            fetch(f"{base}/image?url={urllib.parse.quote('local:///' + name, safe='')}&w=300&format=jpeg")
        warm = settle(pid, 5)
        burst = Burst(base, photos)
        burst.run(pid, BURST)
        after = settle(pid, SETTLE)
        ratio = after / warm
        peak_bound = CACHE_LIMITS_MIB + PEAK_ALLOWANCE_MIB
        print("| group | case | ours | reference | reference's | ratio | target | met |")
        print("|---|---|---|---|---|---|---|---|")
        print(f"| memory | RSS {SETTLE:.0f} s after a {BURST:.0f} s burst of {burst.answered} new variants "
              f"({CLIENTS} clients, {burst.failed} failed) | {after:.0f} MiB | RSS after warm-up | {warm:.0f} MiB "
              f"| {ratio:.2f}× | ≤ 2.00× | {'yes' if ratio <= 2 else '**no**'} |")
        print(f"| memory | peak RSS during the burst | {burst.peak:.0f} MiB | caches' limits + allowance "
              f"| {CACHE_LIMITS_MIB} + {PEAK_ALLOWANCE_MIB} MiB | {burst.peak / peak_bound:.2f}× | ≤ 1.00× "
              f"| {'yes' if burst.peak <= peak_bound else '**no**'} |")
        print(f"| memory | /healthz during the burst: failures, slowest | {burst.health_failures}, "
              f"{burst.health_worst * 1000:.0f} ms | – | – | – | 0 failures | {'yes' if burst.health_failures == 0 else '**no**'} |",
              flush=True)
    finally:
        servers.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
