#!/usr/bin/env python3
"""Video posters and PDF pages beside their own tools (issue 27), whole processes, one run:

- the poster of a 1080p H.264 clip at 300 px: `webimage convert clip.mp4 out.jpg --resize 300`
  against `ffmpeg -i clip.mp4 -frames:v 1 -vf scale=300:-1 out.jpg` (target: ≤ 1.0×);
- the first page of a 20-page PDF at 300 px: `webimage convert doc.pdf out.jpg --resize 300`
  against `pdftocairo -jpeg -f 1 -l 1 -scale-to 300 doc.pdf out` (target: ≤ 1.0×);
- a cold proxy request for the clip's poster against a cold request for a 12 MP JPEG's
  thumbnail, both at 300 px from `webimage serve --no-cache --allow-video` (target: ≤ 2.0×);
- a 3 s animated WebP preview of the clip at 10 frames a second, 300 px: `webimage convert
  --clip 3 --fps 10` against ffmpeg's `fps` and `scale` filters into `libwebp_anim` (a figure,
  no target).

Each pair is run MEDIA_BENCH_ROUNDS times (default 15) alternating, after two warm-up rounds;
the medians are compared. Prints Markdown table rows like the other groups.

    python3 Benchmarks/scripts/media_bench.py .build/release/webimage ../shared/corpus/photos
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy_bench import Servers, fetch, twelve_megapixel_jpeg  # noqa: E402

ROUNDS = int(os.environ.get("MEDIA_BENCH_ROUNDS", "15"))


def make_clip(path):
    """Ten seconds of 1080p H.264 at 30 frames a second, a key frame every 2 s (x264's
    `medium` preset, yuv420p): what a phone or a screen recorder uploads."""
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30:duration=10",
                    "-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "60", path], check=True)


def pdf_page(index):
    """One A4 page's content stream: a title in Helvetica, lines of text, and shapes."""
    lines = ["BT /F1 28 Tf 56 770 Td (Page %d of 20) Tj ET" % (index + 1)]
    for row in range(40):
        lines.append("BT /F1 10 Tf 56 %d Td (Line %d: the quick brown fox jumps over the lazy dog, %d.) Tj ET"
                     % (730 - row * 15, row + 1, index))
    for k in range(12):
        lines.append("%.2f %.2f %.2f rg %d %d 60 40 re f" % ((k * 0.08) % 1, 0.3, (1 - k * 0.07) % 1, 40 + k * 44, 80))
    lines.append("0 0 1 RG 3 w 56 60 m 540 140 l S")
    return "\n".join(lines).encode()


def make_pdf(path, pages=20):
    """A 20-page PDF 1.4 of text and vector shapes, written by hand (offsets in its xref)."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", None, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for index in range(pages):
        content = pdf_page(index)
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
        content_number = len(objects)
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % content_number)
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Count %d /Kids [%s] >>" % (pages, b" ".join(b"%d 0 R" % k for k in kids))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    with open(path, "wb") as f:
        f.write(out)


def median(values):
    return sorted(values)[len(values) // 2]


def timed_pair(first, second):
    """Median seconds of the two commands (or callables), alternating."""
    times = ([], [])
    for round_index in range(ROUNDS + 2):
        order = (0, 1) if round_index % 2 == 0 else (1, 0)
        for which in order:
            job = (first, second)[which]
            started = time.perf_counter()
            if callable(job):
                job()
            else:
                subprocess.run(job, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if round_index >= 2:
                times[which].append(time.perf_counter() - started)
    return median(times[0]), median(times[1])


def row(name, ours, reference, reference_name, target=None):
    ratio = ours / reference
    met = "—" if target is None else "yes" if ratio <= target else "**no**"
    goal = "—" if target is None else f"ours ≤ {target:.2f}× ref."
    print(f"| media | {name} | {ours * 1000:.1f} ms | {reference_name} | {reference * 1000:.1f} ms | {ratio:.3f}× "
          f"| {goal} | {met} |", flush=True)


def main():
    binary = os.path.abspath(sys.argv[1])
    photos = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
    missing = [tool for tool in ("ffmpeg", "pdftocairo") if shutil.which(tool) is None]
    if missing:
        print(f"  media: {', '.join(missing)} not installed (make deps); skipped", file=sys.stderr)
        return
    workdir = tempfile.mkdtemp(prefix="webimage-media-bench-")
    try:
        clip, pdf = os.path.join(workdir, "clip.mp4"), os.path.join(workdir, "doc.pdf")
        make_clip(clip)
        make_pdf(pdf)
        out = lambda name: os.path.join(workdir, name)
        print("| group | case | ours | reference | reference's | ratio | target | met |")
        print("|---|---|---|---|---|---|---|---|")
        ours, ffmpeg = timed_pair([binary, "convert", clip, out("poster.jpg"), "--resize", "300"],
                                  ["ffmpeg", "-v", "error", "-y", "-i", clip, "-frames:v", "1", "-vf", "scale=300:-1", out("ffmpeg.jpg")])
        row("poster of a 1080p H.264 clip at 300 px (whole process)", ours, ffmpeg, "ffmpeg -frames:v 1", 1.0)
        ours, poppler = timed_pair([binary, "convert", pdf, out("page.jpg"), "--resize", "300"],
                                   ["pdftocairo", "-jpeg", "-f", "1", "-l", "1", "-scale-to", "300", pdf, out("poppler")])
        row("page 1 of a 20-page PDF at 300 px (whole process)", ours, poppler, "pdftocairo -jpeg", 1.0)
        # The same animation from both: 30 frames (3 s from the key frame at 2 s, 10 a second),
        # 300 px wide, animated WebP at quality 80, looping forever. No target: a figure.
        ours, ffmpeg = timed_pair([binary, "convert", clip, out("clip.webp"), "--time", "2", "--clip", "3", "--fps", "10", "--resize", "300"],
                                  ["ffmpeg", "-v", "error", "-y", "-ss", "2", "-t", "3", "-i", clip, "-vf", "fps=10,scale=300:-1",
                                   "-c:v", "libwebp_anim", "-quality", "80", "-loop", "0", out("ffmpeg.webp")])
        row("3 s animated WebP preview at 10 frames a second, 300 px (whole process)", ours, ffmpeg, "ffmpeg libwebp_anim", None)
        if photos is None or not os.path.isdir(photos):
            print("  media: no photo folder; the proxy row is skipped", file=sys.stderr)
            return
        origin = os.path.join(workdir, "origin")
        os.makedirs(origin)
        shutil.copy(clip, os.path.join(origin, "clip.mp4"))
        twelve = twelve_megapixel_jpeg(photos, sorted(os.listdir(photos)), origin)
        if twelve is None:
            print("  media: Pillow is missing (it makes the 12 MP JPEG); the proxy row is skipped", file=sys.stderr)
            return
        servers = Servers(binary, photos, workdir)
        try:
            base = servers.start_ours("media", ["--no-cache", "--allow-video"], origin=origin)
            path = lambda name: f"{base}/image?url={urllib.parse.quote('local:///' + name, safe='')}&w=300&format=jpeg"
            poster, photo = timed_pair(lambda: fetch(path("clip.mp4")), lambda: fetch(path(twelve)))
            row("cold proxy request: a video poster against a 12 MP JPEG thumbnail, 300 px", poster, photo, "12 MP JPEG", 2.0)
        finally:
            servers.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
