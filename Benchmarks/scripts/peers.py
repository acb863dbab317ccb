#!/usr/bin/env python3
"""Times the peers the codec benchmarks compare against: Pillow and pyvips.

Called by the Swift benchmark (group `codecs`) in the same `make bench` run, with the corpus
photos' directory; prints one JSON object mapping task names to median seconds per operation.
Single-threaded unless a task says otherwise: pyvips is imported with VIPS_CONCURRENCY=1 and the
two-core tasks run two worker processes.

With `--encode-server PHOTOS` it stays up instead, encoding on demand: see encode_server.
"""
import io, json, multiprocessing, os, statistics, sys, time
from concurrent.futures import ProcessPoolExecutor

os.environ["VIPS_CONCURRENCY"] = "1"
from PIL import Image, ImageFilter  # noqa: E402
import pyvips  # noqa: E402

def timed(fn, rounds=5, inner=1):
    fn()  # warm-up
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)

def encode_server(photos):
    """Encodes the 2560×1600 photo at quality 80 once per line read ("jpeg" or "webp") and
    answers with the thread CPU time it took, so that the Swift side can alternate its encodes
    with Pillow's."""
    im = pillow_decode(open(os.path.join(photos, "autumn-2560x1600-progressive.jpg"), "rb").read())
    kinds = {"jpeg": "JPEG", "webp": "WEBP"}
    for line in sys.stdin:
        kind = kinds[line.strip()]
        start = time.thread_time()
        im.save(io.BytesIO(), kind, quality=80)
        print(time.thread_time() - start, flush=True)

def pillow_decode(buf):
    im = Image.open(io.BytesIO(buf))
    im.load()
    return im

def pillow_thumbnail(buf, size=256):
    im = Image.open(io.BytesIO(buf))
    im.draft(im.mode, (size, size))
    im.thumbnail((size, size))
    return im

def pyvips_thumbnail(buf, size=256):
    return pyvips.Image.thumbnail_buffer(buf, size).write_to_memory()

def thumbnail_all(args):
    kind, paths = args
    for path in paths:
        buf = open(path, "rb").read()
        (pillow_thumbnail if kind == "pillow" else pyvips_thumbnail)(buf)

def thumbnail_one(args):
    thumbnail_all((args[0], [args[1]]))

def main():
    if sys.argv[1] == "--encode-server":
        encode_server(sys.argv[2])
        return
    photos = sys.argv[1]
    names = sorted(n for n in os.listdir(photos) if n.lower().endswith((".jpg", ".png", ".webp")))
    results = {}
    for name in names:
        buf = open(os.path.join(photos, name), "rb").read()
        big = os.path.getsize(os.path.join(photos, name)) > 1_000_000
        results[f"pillow.decode:{name}"] = timed(lambda: pillow_decode(buf), rounds=3 if big else 5)
        results[f"pillow.thumbnail:{name}"] = timed(lambda: pillow_thumbnail(buf), rounds=3 if big else 5)
        results[f"pyvips.thumbnail:{name}"] = timed(lambda: pyvips_thumbnail(buf), rounds=3 if big else 5)

    # Resize 2560×1600 → 640 wide with Lanczos, RGB and RGBA.
    for name, mode in (("autumn-2560x1600-progressive.jpg", "RGB"), ("elarun-2560x1600-rgba.png", "RGBA")):
        im = pillow_decode(open(os.path.join(photos, name), "rb").read()).convert(mode)
        results[f"pillow.resize640:{mode}"] = timed(lambda: im.resize((640, 400), Image.LANCZOS), rounds=7, inner=3)

    # Blur the encoders' photo (they are timed by encode_server, alternating with the Swift side).
    im = pillow_decode(open(os.path.join(photos, "autumn-2560x1600-progressive.jpg"), "rb").read())
    results["pillow.blur20"] = timed(lambda: im.filter(ImageFilter.GaussianBlur(20)), rounds=5)

    # Both cores: the whole photo set as 256 px thumbnails by two worker processes, scheduled as
    # the Swift side schedules its two threads: the largest file first, each worker taking the
    # next path when it is free (a path is all that crosses between the processes).
    paths = [os.path.join(photos, n) for n in names]
    largest_first = sorted(paths, key=os.path.getsize, reverse=True)
    # Spawned, not forked: forking after libvips has started its threads can deadlock.
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        for kind in ("pillow", "pyvips"):
            list(pool.map(thumbnail_one, [(kind, p) for p in largest_first]))  # warm-up
            samples = []
            for _ in range(3):
                start = time.perf_counter()
                list(pool.map(thumbnail_one, [(kind, p) for p in largest_first]))
                samples.append(time.perf_counter() - start)
            results[f"{kind}.thumbnail-set-2cores"] = statistics.median(samples)
    for kind in ("pillow", "pyvips"):
        start = time.perf_counter()
        thumbnail_all((kind, paths))
        results[f"{kind}.thumbnail-set-1core"] = time.perf_counter() - start

    json.dump(results, sys.stdout)

if __name__ == "__main__":
    main()
