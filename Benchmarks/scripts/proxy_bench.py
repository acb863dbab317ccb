#!/usr/bin/env python3
"""The image proxy under load, beside its peers, in one run (issue: the image proxy).

Every photo of the corpus resized to 300 px wide, requested round-robin by wrk on loopback:

- cold (caches off): `webimage serve --no-cache` against nginx's image_filter module and
  thumbor, all three reading the photos from the same local folder and writing the source's
  format at quality 80, two worker processes (or threads) each for two cores;
- warm: `webimage serve` with its caches, every variant requested once beforehand, against
  nginx serving the very same output bytes as static files;
- the URL dialects (issue 12): thumbor URLs served by us (`/thumbor/unsafe/300x0/NAME`) beside
  the real thumbor answering the same URLs; imgproxy URLs (`rs:fit:300:0`) beside a libvips
  server doing the same resize (Benchmarks/scripts/vips_server.py, two processes); and warm
  thumbor and imgproxy URLs beside a warm `/image` URL;
- `/info` (issue 30): a cold `/info` of a 12-megapixel JPEG (made from the corpus's largest JPEG
  with Pillow) beside a cold `/image?w=64` of the same file, one request at a time with the
  caches off, alternating: `/info` decodes at most 100 px (1/8 scale by the DCT), so it should
  cost no more than the smallest thumbnail.

Prints one Markdown table in the format of WebImageBenchmarks (ours, reference, ratio, target).
Usage: proxy_bench.py WEBIMAGE_BINARY PHOTOS_DIR
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.error
import urllib.request

WIDTH = 300
QUALITY = 80
EXTENSIONS = (".jpg", ".jpeg", ".png", ".webp")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(url, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                response.read()
                return
        except urllib.error.HTTPError:
            return  # it answers
        except Exception:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout} s")


def fetch(url):
    with urllib.request.urlopen(url, timeout=120) as response:
        if response.status != 200:
            raise RuntimeError(f"{url}: status {response.status}")
        return response.read()


def stat_fields(pid):
    """The fields of /proc/PID/stat after the command's name (state first), or None once the
    process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def process_tree(root):
    """`root` and every process below it (nginx's workers are its master's children)."""
    children = {}
    for entry in os.listdir("/proc"):
        fields = stat_fields(entry) if entry.isdigit() else None
        if fields:
            children.setdefault(int(fields[1]), []).append(int(entry))
    tree, pending = [], [root]
    while pending:
        pid = pending.pop()
        tree.append(pid)
        pending.extend(children.get(pid, []))
    return tree


def cpu_seconds(root):
    """User + system CPU time used so far by `root` and the processes below it."""
    total = 0
    for pid in process_tree(root):
        fields = stat_fields(pid)
        if fields:
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat(5))
    return total / os.sysconf("SC_CLK_TCK")


def wrk(base, paths, seconds, connections, threads, workdir, pid=None):
    """Runs wrk over `paths` round-robin; returns (requests/s, p50 ms, p99 ms, errors, µs of the
    server's CPU per request or None). `pid`: the server's process, whose CPU time (and its
    children's) is read before and after."""
    script = os.path.join(workdir, "paths.lua")
    with open(script, "w") as f:
        f.write("local paths = {" + ",".join('"%s"' % p for p in paths) + "}\n")
        # Each wrk thread starts at its own place in the list. Started at the same place, the
        # threads ask for the same path at the same moment, and the proxy makes work asked for
        # at the same time once for every request waiting on it: a cold run then measured up to
        # half the renders it counted (2026-11-29; every cold figure before that date has it).
        f.write("local threads = 0\n")
        f.write("function setup(thread)\n  thread:set('start', threads)\n  threads = threads + 1\nend\n")
        f.write("function init(args)\n  i = math.floor((start or 0) * #paths / %d)\nend\n" % threads)
        f.write("request = function()\n  i = i + 1\n  return wrk.format('GET', paths[(i % #paths) + 1])\nend\n")
    cpu_before = cpu_seconds(pid) if pid else None
    out = subprocess.run(
        ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", script, base],
        check=True, capture_output=True, text=True).stdout
    cpu_per_request = None
    if pid:
        requests = int(re.search(r"(\d+) requests in", out).group(1))
        cpu_per_request = (cpu_seconds(pid) - cpu_before) / max(requests, 1) * 1e6
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))

    def percentile(name):
        m = re.search(rf"^\s+{name}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        value, unit = float(m.group(1)), m.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    errors = 0
    m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if m:
        errors += int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m:
        errors += sum(int(g) for g in m.groups())
    return rps, percentile("50"), percentile("99"), errors, cpu_per_request


class Servers:
    def __init__(self, binary, photos, workdir):
        self.binary, self.photos, self.workdir = binary, photos, workdir
        self.processes = []
        self.pids = {}

    def start_ours(self, name, extra, origin=None, env=None, binary=None):
        """`webimage serve` (this instance's binary, or `binary`) with `env` over our own."""
        log = open(os.path.join(self.workdir, f"{name}.log"), "w")
        process = subprocess.Popen(
            [binary or self.binary, "serve", "--port", "0", "--origin-dir", origin or self.photos, "--log-level", "warning",
             "--max-concurrent", "256", "--cache-dir", os.path.join(self.workdir, f"{name}-cache")] + extra,
            stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True, env={**os.environ, **(env or {})})
        self.processes.append(process)
        self.pids[name] = process.pid
        line = process.stdout.readline()
        m = re.search(r"listening on (http://\S+)", line)
        if not m:
            raise RuntimeError(f"webimage serve said: {line!r}")
        base = m.group(1).rstrip("/")
        wait_until_up(base + "/healthz")
        return base

    def start_nginx(self, static_dir):
        filter_port, static_port = free_port(), free_port()
        conf = os.path.join(self.workdir, "nginx.conf")
        module = "/usr/lib/nginx/modules/ngx_http_image_filter_module.so"
        with open(conf, "w") as f:
            f.write(f"""
load_module {module};
worker_processes 2;
daemon off;
pid {self.workdir}/nginx.pid;
error_log {self.workdir}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    include /etc/nginx/mime.types;
    client_body_temp_path {self.workdir}/nginx-body;
    proxy_temp_path {self.workdir}/nginx-proxy;
    fastcgi_temp_path {self.workdir}/nginx-fastcgi;
    uwsgi_temp_path {self.workdir}/nginx-uwsgi;
    scgi_temp_path {self.workdir}/nginx-scgi;
    server {{
        listen 127.0.0.1:{filter_port};
        root {self.photos};
        location / {{
            image_filter resize {WIDTH} -;
            image_filter_jpeg_quality {QUALITY};
            image_filter_webp_quality {QUALITY};
            image_filter_buffer 64M;
        }}
    }}
    server {{
        listen 127.0.0.1:{static_port};
        root {static_dir};
        sendfile on;
        open_file_cache max=100;
        location / {{ }}
    }}
}}
""")
        process = subprocess.Popen(["nginx", "-p", self.workdir, "-c", conf],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.processes.append(process)
        self.pids["nginx"] = process.pid
        filter_base, static_base = f"http://127.0.0.1:{filter_port}", f"http://127.0.0.1:{static_port}"
        wait_until_up(static_base + "/")
        return filter_base, static_base

    def start_thumbor(self):
        port = free_port()
        conf = os.path.join(self.workdir, "thumbor.conf")
        with open(conf, "w") as f:
            f.write(f"""
LOADER = 'thumbor.loaders.file_loader'
FILE_LOADER_ROOT_PATH = {self.photos!r}
STORAGE = 'thumbor.storages.no_storage'
RESULT_STORAGE = None
QUALITY = {QUALITY}
WEBP_QUALITY = {QUALITY}
AUTO_WEBP = False
MAX_WIDTH = 0
MAX_HEIGHT = 0
""")
        log = open(os.path.join(self.workdir, "thumbor.log"), "w")
        process = subprocess.Popen(["thumbor", "-p", str(port), "-i", "127.0.0.1", "-c", conf, "--processes", "2", "-l", "error"],
                                   stdout=log, stderr=log, start_new_session=True)
        self.processes.append(process)
        base = f"http://127.0.0.1:{port}"
        wait_until_up(base + "/healthcheck")
        return base

    def start_vips(self, width=WIDTH):
        port = free_port()
        log = open(os.path.join(self.workdir, "vips.log"), "w")
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vips_server.py")
        process = subprocess.Popen([sys.executable, script, str(port), self.photos, str(width)],
                                   stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True)
        self.processes.append(process)
        if process.stdout.readline().strip() != "ready":
            raise RuntimeError("vips_server.py did not start (is pyvips installed?)")
        base = f"http://127.0.0.1:{port}"
        wait_until_up(base + "/health")
        return base

    def stop(self):
        for process in self.processes:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


INFO_SIDE = (4000, 3000)


def twelve_megapixel_jpeg(photos, names, folder):
    """A 4000×3000 baseline JPEG at quality 90, resized from the corpus's largest JPEG, in
    `folder`; its name, or None without Pillow."""
    try:
        from PIL import Image
    except ImportError:
        return None
    jpegs = [os.path.join(photos, n) for n in names if n.lower().endswith((".jpg", ".jpeg"))]

    def pixels(path):
        with Image.open(path) as im:
            return im.size[0] * im.size[1]
    with Image.open(max(jpegs, key=pixels)) as im:
        im.convert("RGB").resize(INFO_SIDE, Image.LANCZOS).save(os.path.join(folder, "twelve.jpg"), quality=90)
    return "twelve.jpg"


def info_against_thumbnail(servers, photos, names, workdir):
    """Median milliseconds of a cold `/info` and of a cold `/image?w=64` of one 12 MP JPEG,
    each asked PROXY_INFO_ROUNDS times (default 20), one at a time, alternating; None without
    Pillow."""
    folder = os.path.join(workdir, "info-origin")
    os.makedirs(folder)
    name = twelve_megapixel_jpeg(photos, names, folder)
    if name is None:
        return None
    base = servers.start_ours("info", ["--no-cache"], origin=folder)
    source = urllib.parse.quote("local:///" + name, safe="")
    paths = {"info": f"/info?url={source}", "image": f"/image?url={source}&w=64"}
    rounds = int(os.environ.get("PROXY_INFO_ROUNDS", "20"))
    times = {"info": [], "image": []}
    for round_index in range(rounds + 2):
        for kind in ("info", "image") if round_index % 2 == 0 else ("image", "info"):
            started = time.perf_counter()
            fetch(base + paths[kind])
            elapsed = (time.perf_counter() - started) * 1000
            if round_index >= 2:  # the first two rounds warm the page cache and the threads
                times[kind].append(elapsed)
    median = lambda values: sorted(values)[len(values) // 2]
    return median(times["info"]), median(times["image"]), rounds


def row(name, ours, reference, reference_name, unit, target=None, higher_is_better=True, ratio=None):
    """One table row; `ratio` when it is not ours / reference (a median of paired ratios)."""
    if ratio is None:
        ratio = ours / reference if reference else float("inf")
    if target is None:
        goal, met = "—", "—"
    elif higher_is_better:
        goal, met = f"ours ≥ {target:.2f}× ref.", "yes" if ratio >= target else "**no**"
    else:
        goal, met = f"ours ≤ {target:.2f}× ref.", "yes" if ratio <= target else "**no**"
    print(f"| proxy | {name} | {ours:.1f} {unit} | {reference_name} | {reference:.1f} {unit} | {ratio:.3f}× | {goal} | {met} |", flush=True)


def nginx_workdir(prefix):
    """A temporary folder for a run with nginx (its temp folders made) and its `static` folder."""
    workdir = tempfile.mkdtemp(prefix=prefix)
    # nginx's workers run as nobody when it is started as root: they must read the static files.
    os.chmod(workdir, 0o755)
    static_dir = os.path.join(workdir, "static")
    os.makedirs(static_dir)
    for sub in ("nginx-body", "nginx-proxy", "nginx-fastcgi", "nginx-uwsgi", "nginx-scgi"):
        os.makedirs(os.path.join(workdir, sub))
    return workdir, static_dir


def photo_arguments(group):
    """The webimage binary and the photo folder of the command line, with the folder's photos by
    name; `None` (the group skipped, said on standard error) when the folder is absent."""
    binary, photos = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if not os.path.isdir(photos):
        print(f"  {group}: {sys.argv[2]} is absent; skipped", file=sys.stderr)
        return None
    return binary, photos, sorted(n for n in os.listdir(photos) if n.lower().endswith(EXTENSIONS))


def main():
    arguments = photo_arguments("proxy")
    if arguments is None:
        return
    binary, photos, names = arguments
    seconds = int(os.environ.get("PROXY_BENCH_SECONDS", "15"))
    workdir, static_dir = nginx_workdir("webimage-proxy-bench-")
    servers = Servers(binary, photos, workdir)
    try:
        ours_path = lambda n: f"/image?url={urllib.parse.quote('local:///' + n, safe='')}&w={WIDTH}&q={QUALITY}"
        cold = servers.start_ours("cold", ["--no-cache", "--thumbor-allow-unsafe"])
        warm = servers.start_ours("warm", ["--thumbor-allow-unsafe"])
        thumbor_path = lambda n: f"/unsafe/{WIDTH}x0/{n}"
        imgproxy_path = lambda n: f"/imgproxy/insecure/rs:fit:{WIDTH}:0/q:{QUALITY}/plain/local:///{urllib.parse.quote(n)}"
        # The static files are our own outputs: the same bytes the warm proxy serves.
        for n in names:
            body = fetch(warm + ours_path(n))
            with open(os.path.join(static_dir, n), "wb") as f:
                f.write(body)
        nginx_filter, nginx_static = servers.start_nginx(static_dir)
        thumbor = servers.start_thumbor()
        vips = servers.start_vips()
        # Every peer answers every photo before it is timed.
        for n in names:
            fetch(nginx_filter + "/" + n)
            fetch(thumbor + thumbor_path(n))
            fetch(vips + "/" + n)
            fetch(cold + ours_path(n))
            fetch(cold + "/thumbor" + thumbor_path(n))
            fetch(cold + imgproxy_path(n))
            fetch(warm + "/thumbor" + thumbor_path(n))
            fetch(warm + imgproxy_path(n))
            fetch(cold + ours_path(n) + "&format=avif")
            fetch(vips + "/" + n + "?avif")
        total = sum(os.path.getsize(os.path.join(static_dir, n)) for n in names)
        print(f"{len(names)} photos, {WIDTH} px wide, quality {QUALITY}; outputs {total / len(names) / 1024:.1f} KB on average; "
              f"wrk for {seconds} s per peer", file=sys.stderr)

        ours_paths = [ours_path(n) for n in names]
        results = {}
        cold_args = dict(seconds=seconds, connections=4, threads=2, workdir=workdir)
        results["ours cold"] = wrk(cold, ours_paths, **cold_args)
        results["nginx image_filter"] = wrk(nginx_filter, ["/" + n for n in names], **cold_args)
        results["thumbor"] = wrk(thumbor, [thumbor_path(n) for n in names], **cold_args)
        results["ours cold, thumbor URLs"] = wrk(cold, ["/thumbor" + thumbor_path(n) for n in names], **cold_args)
        results["ours cold, imgproxy URLs"] = wrk(cold, [imgproxy_path(n) for n in names], **cold_args)
        results["libvips server"] = wrk(vips, ["/" + n for n in names], **cold_args)
        results["ours cold, AVIF"] = wrk(cold, [ours_path(n) + "&format=avif" for n in names], **cold_args)
        results["ours cold, WebP"] = wrk(cold, [ours_path(n) + "&format=webp" for n in names], **cold_args)
        results["libvips server, AVIF"] = wrk(vips, ["/" + n + "?avif" for n in names], **cold_args)
        warm_args = dict(seconds=seconds, connections=32, threads=2, workdir=workdir)
        # CPU per request is the figure to watch (issue 29): requests/s moves with the machine.
        results["ours warm"] = wrk(warm, ours_paths, **warm_args, pid=servers.pids["warm"])
        results["nginx static"] = wrk(nginx_static, ["/" + n for n in names], **warm_args, pid=servers.pids["nginx"])
        results["ours warm, thumbor URLs"] = wrk(warm, ["/thumbor" + thumbor_path(n) for n in names], **warm_args)
        results["ours warm, imgproxy URLs"] = wrk(warm, [imgproxy_path(n) for n in names], **warm_args)
        for name, (rps, p50, p99, errors, cpu) in results.items():
            cpu_text = f", {cpu:.1f} µs CPU/request" if cpu is not None else ""
            print(f"  {name}: {rps:.1f} req/s, p50 {p50:.2f} ms, p99 {p99:.2f} ms, {errors} errors{cpu_text}", file=sys.stderr)

        print()
        print("| group | benchmark | ours | reference | ref. value | ours vs ref. | target | met |")
        print("|---|---|---:|---|---:|---:|---|---|")
        ours_cold, filt, thum = results["ours cold"], results["nginx image_filter"], results["thumbor"]
        ours_warm, static = results["ours warm"], results["nginx static"]
        row(f"cold, {len(names)} photos → {WIDTH} px wide, requests/s", ours_cold[0], filt[0], "nginx image_filter", "req/s", 2.0)
        row("cold, p50 latency", ours_cold[1], filt[1], "nginx image_filter", "ms")
        row("cold, p99 latency", ours_cold[2], filt[2], "nginx image_filter", "ms")
        row(f"cold, {len(names)} photos → {WIDTH} px wide, requests/s", ours_cold[0], thum[0], "thumbor 7 (2 processes)", "req/s", 5.0)
        row("cold, p50 latency", ours_cold[1], thum[1], "thumbor 7 (2 processes)", "ms")
        row("cold, p99 latency", ours_cold[2], thum[2], "thumbor 7 (2 processes)", "ms")
        row("warm (cached), requests/s", ours_warm[0], static[0], "nginx, the same bytes as static files", "req/s", 1.0)
        row("warm (cached), server CPU per request", ours_warm[4], static[4], "nginx, the same bytes as static files", "µs",
            1.5, higher_is_better=False)
        row("warm, p50 latency", ours_warm[1], static[1], "nginx, the same bytes as static files", "ms")
        row("warm, p99 latency", ours_warm[2], static[2], "nginx, the same bytes as static files", "ms")
        dialect_thumbor, dialect_imgproxy, vips_server = results["ours cold, thumbor URLs"], results["ours cold, imgproxy URLs"], results["libvips server"]
        row("cold, thumbor URLs through the thumbor dialect, requests/s", dialect_thumbor[0], thum[0], "thumbor 7.8 (2 processes), the same URLs", "req/s", 3.0)
        row("cold, imgproxy URLs through the imgproxy dialect, requests/s", dialect_imgproxy[0], vips_server[0], "pyvips server, thumbnail + JPEG (2 processes)", "req/s", 1.3)
        row("warm, thumbor URLs, requests/s", results["ours warm, thumbor URLs"][0], ours_warm[0], "warm /image URLs", "req/s", 0.9)
        row("warm, imgproxy URLs, requests/s", results["ours warm, imgproxy URLs"][0], ours_warm[0], "warm /image URLs", "req/s", 0.9)
        row("cold, AVIF output (libaom speed 10), requests/s", results["ours cold, AVIF"][0], results["ours cold, WebP"][0], "ours, WebP output", "req/s")
        row("cold, AVIF output, requests/s", results["ours cold, AVIF"][0], results["libvips server, AVIF"][0], "pyvips server, heifsave AV1 effort 0 (2 processes)", "req/s")
        info = info_against_thumbnail(servers, photos, names, workdir)
        if info is None:
            print("  proxy: /info against /image?w=64 skipped: Pillow is not installed (make bench installs it)", file=sys.stderr)
        else:
            info_ms, image_ms, rounds = info
            print(f"  /info of a {INFO_SIDE[0]}×{INFO_SIDE[1]} JPEG: {info_ms:.1f} ms; /image?w=64: {image_ms:.1f} ms "
                  f"(medians of {rounds}, cold); ratio {info_ms / image_ms:.3f}×", file=sys.stderr)
            row(f"cold /info of a 12 MP JPEG (median of {rounds}), ms", info_ms, image_ms,
                "cold /image?w=64 of the same JPEG", "ms", 1.0, higher_is_better=False)
        errors = sum(r[3] for r in results.values())
        if errors:
            print(f"proxy benchmark: {errors} failed requests", file=sys.stderr)
    finally:
        servers.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
