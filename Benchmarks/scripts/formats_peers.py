#!/usr/bin/env python3
"""The reference side of the `formats` benchmark group: libvips over Debian's libheif.

pyvips is loaded against Debian's libvips (libvips42) rather than the pyvips-binary wheel,
whose libheif has no HEVC decoder: so both sides decode HEIC with the same libheif and libde265,
and the gap is each side's own overhead. AVIF goes through libheif on their side and libavif on
ours (libaom encodes on both). One thread (VIPS_CONCURRENCY=1), as our side measures one.

  formats_peers.py prepare DIR PHOTOS COUNT
      writes DIR/NAME.heic and DIR/NAME.avif for the first COUNT JPEG photos (libvips' heifsave,
      Q 80) and DIR/NAME-512.png, a 512 px thumbnail, the input of the AVIF encode comparison.
  formats_peers.py time DIR
      prints JSON: libvips' median seconds per decode and per 256 px thumbnail of each file, and,
      for each NAME-512.png with our NAME-ours.avif beside it, libvips' AVIF encode at the Q
      that gives the same size (within 5 %, effort 0, the fastest) and the DSSIM of both files
      against the PNG (see dssim()).
"""
import json, os, statistics, sys, time

os.environ["VIPS_CONCURRENCY"] = "1"
sys.modules["_libvips"] = None  # not the wheel's libvips: Debian's (see above)
import numpy as np  # noqa: E402
import pyvips  # noqa: E402


def timed(fn, rounds=5):
    fn()
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def prepare(directory, photos, count):
    names = sorted(n for n in os.listdir(photos) if n.lower().endswith(".jpg"))[:count]
    for name in names:
        stem = os.path.splitext(name)[0]
        image = pyvips.Image.new_from_file(os.path.join(photos, name))
        image.heifsave(os.path.join(directory, stem + ".heic"), compression="hevc", Q=80)
        image.heifsave(os.path.join(directory, stem + ".avif"), compression="av1", Q=80, effort=0)
        pyvips.Image.thumbnail(os.path.join(photos, name), 512).pngsave(os.path.join(directory, stem + "-512.png"))


def luma(image):
    """Rec. 601 luma of an sRGB pyvips image, as floats."""
    pixels = np.ndarray(buffer=image.extract_band(0, n=3).write_to_memory(), dtype=np.uint8,
                        shape=[image.height, image.width, 3]).astype(np.float64)
    return pixels @ np.array([0.299, 0.587, 0.114])


def blur(plane, sigma=1.5, radius=5):
    taps = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    taps /= taps.sum()
    rows = np.apply_along_axis(lambda r: np.convolve(r, taps, mode="valid"), 1, plane)
    return np.apply_along_axis(lambda c: np.convolve(c, taps, mode="valid"), 0, rows)


def dssim(a, b):
    """DSSIM = 1 / SSIM - 1 on luma, SSIM with an 11-tap Gaussian window (sigma 1.5), the
    constants of Wang et al. 2004. Written here because no DSSIM or SSIMULACRA2 tool is on
    Debian or PyPI for this machine; lower is better, 0 is identical."""
    x, y = luma(a), luma(b)
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    mx, my = blur(x), blur(y)
    sxx, syy, sxy = blur(x * x) - mx * mx, blur(y * y) - my * my, blur(x * y) - mx * my
    ssim = ((2 * mx * my + c1) * (2 * sxy + c2)) / ((mx * mx + my * my + c1) * (sxx + syy + c2))
    return 1 / ssim.mean() - 1


def encode_at_size(reference, target):
    """libvips' AVIF of `reference` at the Q whose size is nearest `target` bytes."""
    low, high, best = 1, 100, None
    while low <= high:
        q = (low + high) // 2
        data = reference.heifsave_buffer(compression="av1", Q=q, effort=0)
        if best is None or abs(len(data) - target) < abs(len(best[1]) - target):
            best = (q, data)
        if len(data) < target:
            low = q + 1
        else:
            high = q - 1
    return best


def time_all(directory):
    results = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if name.endswith((".heic", ".avif")) and not name.endswith("-ours.avif"):
            data = open(path, "rb").read()
            results["decode:" + name] = timed(lambda: pyvips.Image.new_from_buffer(data, "", access="sequential").write_to_memory())
            results["thumbnail:" + name] = timed(lambda: pyvips.Image.thumbnail_buffer(data, 256).write_to_memory())
        elif name.endswith("-512.png"):
            stem = name[:-len("-512.png")]
            ours = os.path.join(directory, stem + "-ours.avif")
            if not os.path.exists(ours):
                continue
            reference = pyvips.Image.new_from_file(path).copy_memory()
            q, theirs = encode_at_size(reference, os.path.getsize(ours))
            results["encode:" + stem] = timed(lambda: reference.heifsave_buffer(compression="av1", Q=q, effort=0), rounds=9)  # as many rounds as ours
            results["encode-bytes:" + stem] = len(theirs)
            results["dssim-theirs:" + stem] = dssim(reference, pyvips.Image.new_from_buffer(theirs, ""))
            results["dssim-ours:" + stem] = dssim(reference, pyvips.Image.new_from_file(ours))
    results["libvips"] = float(pyvips.version(0) * 100 + pyvips.version(1))
    return results


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        print(json.dumps(time_all(sys.argv[2])))
