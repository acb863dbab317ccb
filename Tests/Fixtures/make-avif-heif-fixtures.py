#!/usr/bin/env python3
"""Regenerates the AVIF and HEIC fixtures (avif-*.avif, heic-*.heic) with the formats' own
reference encoders from Debian: avifenc (libavif-bin, AV1 by libaom) and heif-enc
(libheif-examples, HEVC by x265), plus exiftool (libimage-exiftool-perl) for the EXIF-only
orientation case.

Run by hand when a fixture needs to change (`python3 make-avif-heif-fixtures.py`); the tests
read the committed files and run only the reference *decoders* (avifdec, heif-convert).
The source images are drawn here, pixel by pixel, so that the tests can state what they must
look like:

- quadrants (48×32): red top left, green top right, blue bottom left, white bottom right;
  wider than tall, so a quarter turn shows in the dimensions and every flip in the colours.
- gradient (32×32): smooth ramps in R and G, B constant; with alpha, alpha falls from 255
  (left) to 0 (right).
"""
import os
import struct
import subprocess
import tempfile
import zlib

here = os.path.dirname(os.path.abspath(__file__))
work = tempfile.mkdtemp()

QUADRANTS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)]


def png(path, width, height, pixel, channels, depth=8):
    """Writes a PNG; `pixel(x, y)` returns `channels` samples of `depth` bits."""
    colour_type = {3: 2, 4: 6}[channels]
    fmt = ">" + ("H" if depth == 16 else "B") * channels
    rows = b"".join(b"\0" + b"".join(struct.pack(fmt, *pixel(x, y)) for x in range(width)) for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, colour_type, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(rows, 9)))
        f.write(chunk(b"IEND", b""))


def quadrant(x, y, width=48, height=32):
    return QUADRANTS[(2 if y >= height // 2 else 0) + (1 if x >= width // 2 else 0)]


def run(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)


def src(name):
    return os.path.join(work, name)


def out(name):
    return os.path.join(here, name)


png(src("quadrants.png"), 48, 32, quadrant, 3)
png(src("gradient.png"), 32, 32, lambda x, y: (x * 8, y * 8, 128), 3)
png(src("gradient-alpha.png"), 32, 32, lambda x, y: (x * 8, y * 8, 128, 255 - x * 255 // 31), 4)
png(src("gradient16.png"), 32, 32, lambda x, y: (x * 2114, y * 2114, 32768), 3, depth=16)
for i, colour in enumerate([(255, 0, 0), (0, 255, 0), (0, 0, 255)]):
    png(src(f"frame{i}.png"), 16, 16, lambda x, y, c=colour: c, 3)

# AVIF: lossless where the test checks colours exactly, 4:4:4 elsewhere so that chroma is not
# subsampled (the reference comparison is then about the decoder, not the encoder).
avif = ["avifenc", "--codec", "aom", "--speed", "8", "--jobs", "1"]
run(*avif, "--lossless", src("gradient.png"), out("avif-gradient.avif"))
run(*avif, "--yuv", "444", "--min", "10", "--max", "20", src("gradient-alpha.png"), out("avif-alpha.avif"))
run(*avif, "--yuv", "444", "--depth", "10", "--min", "10", "--max", "20", src("gradient16.png"), out("avif-10bit.avif"))
run(*avif, "--yuv", "420", "--depth", "12", "--min", "10", "--max", "20", src("gradient16.png"), out("avif-12bit-420.avif"))
for angle in (1, 2, 3):
    run(*avif, "--lossless", "--irot", str(angle), src("quadrants.png"), out(f"avif-irot{angle}.avif"))
for mode in (0, 1):
    run(*avif, "--lossless", "--imir", str(mode), src("quadrants.png"), out(f"avif-imir{mode}.avif"))
# irot 1 then imir: EXIF orientations 5 (imir 0, top-bottom: a transpose) and 7 (imir 1,
# left-right: a transverse).
for mode in (0, 1):
    run(*avif, "--lossless", "--irot", "1", "--imir", str(mode), src("quadrants.png"), out(f"avif-irot1-imir{mode}.avif"))
# Crop to the top-left quadrant (24×16 at 0,0): all red.
run(*avif, "--lossless", "--crop", "0,0,24,16", src("quadrants.png"), out("avif-clap.avif"))
# A three-frame sequence, red, green, blue; timescale 1000 Hz, 100 ms + 250 ms + 40 ms.
run(*avif, "--lossless", "--timescale", "1000",
    "--duration", "100", src("frame0.png"), "--duration", "250", src("frame1.png"),
    "--duration", "40", src("frame2.png"), out("avif-animated.avif"))

# A grid of 2 × 4 tiles of 64 × 64 (libavif decodes a grid incrementally, a row of tiles at a time).
png(src("grid.png"), 128, 256, lambda x, y: (x * 2, y, (x + y) % 256), 3)
run(*avif, "--yuv", "444", "--min", "10", "--max", "20", "--grid", "2x4", src("grid.png"), out("avif-grid.avif"))

heif = ["heif-enc", "--quality", "90"]
run(*heif, "-p", "chroma=444", "-o", out("heic-gradient.heic"), src("gradient.png"))
run(*heif, "-p", "chroma=444", "-o", out("heic-alpha.heic"), src("gradient-alpha.png"))
run(*heif, "-p", "chroma=444", "--bit-depth", "10", "-o", out("heic-10bit.heic"), src("gradient16.png"))
# With a 96 px thumbnail item beside a 192×128 primary image (the quadrants, scaled by 4).
png(src("quadrants-big.png"), 192, 128, lambda x, y: quadrant(x, y, 192, 128), 3)
run(*heif, "-t", "96", "-o", out("heic-thumbnail.heic"), src("quadrants-big.png"))
# Orientation 6 in the EXIF only, no irot: must NOT be applied.
run(*heif, "-o", out("heic-exif6.heic"), src("quadrants.png"))
run("exiftool", "-q", "-overwrite_original", "-n", "-Orientation=6", out("heic-exif6.heic"))
# irot/imir written by libheif from an orientation (heif-orient.c): 6 = irot 270° anticlockwise
# (a quarter turn clockwise to view), 3 = irot 180°, 8 = irot 90° anticlockwise, 2 = imir
# left-right, 4 = imir top-bottom, 5 and 7 = a rotation and a mirror (transpose, transverse).
# No EXIF is written.
run("gcc", "-O1", "-o", src("heif-orient"), os.path.join(here, "heif-orient.c"), "-lheif")
for orientation in (2, 3, 4, 5, 6, 7, 8):
    run(src("heif-orient"), str(orientation), out(f"heic-orientation{orientation}.heic"))
# What phones write: irot for orientation 6 and an EXIF Orientation tag too, here a different
# one (8), so that applying the tag as well as the boxes shows.
run(src("heif-orient"), "6", out("heic-orientation6-exif8.heic"), "8")
# A 48×32 primary image with a 24×16 thumbnail item in the inverse colours (cyan, magenta /
# yellow, black): a decode shows which of the two it used.
run(src("heif-orient"), "1", out("heic-thumbnail-inverse.heic"), "0", "24")

# A 2×1 grid HEIC (heif-enc 1.15 writes every image as a 1×1 grid; this one has two tiles):
# two 64×64 tiles, red on the left and blue on the right, each encoded by heif-enc, then their
# HEVC bitstreams and hvcC boxes put behind one `grid` item of 128×64 by hand.
def boxes(data, start, end):
    """(type, payload start, box end) of each box between start and end."""
    while start + 8 <= end:
        size, kind = struct.unpack(">I4s", data[start:start + 8])
        yield kind, start + 8, start + size
        start += size


def box(kind, payload, full=None):
    head = b"" if full is None else struct.pack(">I", full[0] << 24 | full[1])
    return struct.pack(">I", 8 + len(head) + len(payload)) + kind + head + payload


def tile(colour, name):
    png(src(name + ".png"), 64, 64, lambda x, y: colour, 3)
    run(*heif, "-p", "chroma=444", "-o", src(name + ".heic"), src(name + ".png"))
    data = open(src(name + ".heic"), "rb").read()
    top = {kind: (s, e) for kind, s, e in boxes(data, 0, len(data))}
    meta = top[b"meta"]
    iprp = next((s, e) for kind, s, e in boxes(data, meta[0] + 4, meta[1]) if kind == b"iprp")
    ipco = next((s, e) for kind, s, e in boxes(data, *iprp) if kind == b"ipco")
    hvcc = next(data[s - 8:e] for kind, s, e in boxes(data, *ipco) if kind == b"hvcC")
    mdat = top[b"mdat"]
    return data[:top[b"ftyp"][1]], hvcc, data[mdat[0]:mdat[1]]


ftyp, hvcc_left, left = tile((255, 0, 0), "tile-left")
_, hvcc_right, right = tile((0, 0, 255), "tile-right")


def grid_meta(mdat_start):
    hdlr = box(b"hdlr", struct.pack(">I4s12sB", 0, b"pict", b"", 0), (0, 0))
    pitm = box(b"pitm", struct.pack(">H", 3), (0, 0))
    # iloc version 1: 4-byte offsets and lengths, no base offset; the grid's 8 bytes in idat.
    # Each: item, construction method (0 file, 1 idat), data reference 0, one extent.
    entries = struct.pack(">HHHHII", 1, 0, 0, 1, mdat_start, len(left))
    entries += struct.pack(">HHHHII", 2, 0, 0, 1, mdat_start + len(left), len(right))
    entries += struct.pack(">HHHHII", 3, 1, 0, 1, 0, 8)
    iloc = box(b"iloc", struct.pack(">BBH", 0x44, 0x00, 3) + entries, (1, 0))

    def infe(item, kind, hidden):
        return box(b"infe", struct.pack(">HH4s", item, 0, kind) + b"\0", (2, 1 if hidden else 0))

    iinf = box(b"iinf", struct.pack(">H", 3) + infe(1, b"hvc1", True) + infe(2, b"hvc1", True) + infe(3, b"grid", False), (0, 0))
    iref = box(b"iref", box(b"dimg", struct.pack(">HHHH", 3, 2, 1, 2)), (0, 0))
    idat = box(b"idat", struct.pack(">BBBBHH", 0, 0, 0, 1, 128, 64))
    ipco = box(b"ipco", hvcc_left + box(b"ispe", struct.pack(">II", 64, 64), (0, 0)) + hvcc_right
               + box(b"ispe", struct.pack(">II", 128, 64), (0, 0)))
    ipma = box(b"ipma", struct.pack(">I", 3) + struct.pack(">HBBB", 1, 2, 0x81, 0x02)
               + struct.pack(">HBBB", 2, 2, 0x83, 0x02) + struct.pack(">HBB", 3, 1, 0x04), (0, 0))
    return box(b"meta", hdlr + pitm + iloc + iinf + iref + idat + box(b"iprp", ipco + ipma), (0, 0))


meta_length = len(grid_meta(0))
meta = grid_meta(len(ftyp) + meta_length + 8)
with open(out("heic-grid.heic"), "wb") as f:
    f.write(ftyp + meta + box(b"mdat", left + right))
