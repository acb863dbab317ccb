#!/usr/bin/env python3
"""Regenerates the JPEG XL fixtures (jxl-*.jxl) with the format's reference encoder from Debian,
cjxl 0.7 (libjxl-tools), from sources drawn here with Pillow; exiftool (libimage-exiftool-perl)
writes the EXIF orientation that cjxl turns into the codestream's orientation.

Run by hand when a fixture needs to change (`python3 make-jxl-fixtures.py`); the tests read the
committed files and run only the reference *decoder*, djxl. The sources:

- gradient (32×32): R = 8x, G = 8y, B = 128; with alpha, alpha falls from 255 (left) to 0 (right).
- grey-alpha (32×32): grey = 8x, alpha falling from 255 (top) by 8 a row.
- gradient16 (32×32, 16-bit): R = 2114x, G = 2114y, B = 32768, values no 8-bit sample can hold.
- hopper.png (128×128, a photograph) for the lossy file.
- quadrants (48×32): red top left, green top right, blue bottom left, white bottom right, stored
  with EXIF orientation 2 to 8 (the codestream then says how to turn it).
- three 16×16 frames, red, green, blue, shown 100, 250 and 40 ms (an APNG, which cjxl reads).
- jxl-loops.jxl: three 16×16 frames (red, green, blue) of 3, 6 and 1 ticks at 30000/1001 ticks
  per second, played 3 times, written by jxl-animate.c through libjxl's encoder (cjxl 0.7 keeps
  neither a tick rate nor a loop count from its inputs).
- jxl-bomb-9000.jxl: 9000×9000 transparent black, 3 KB (81 Mpx, inside the default pixel limit of
  100 Mpx), lossless at effort 1. Encoding it takes cjxl about 20 s and 6.5 GB of memory.
- jxl-announces-30000.jxl: jxl-lossless.jxl with its size header rewritten to 30000×30000 (the
  rest of the codestream shifted behind it): a header announcing a huge image over 32×32 data.
"""
import os
import subprocess
import tempfile

from PIL import Image

here = os.path.dirname(os.path.abspath(__file__))
work = tempfile.mkdtemp()
QUADRANTS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)]


def src(name):
    return os.path.join(work, name)


def out(name):
    return os.path.join(here, name)


def run(*args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def draw(mode, width, height, pixel):
    image = Image.new(mode, (width, height))
    image.putdata([pixel(x, y) for y in range(height) for x in range(width)])
    return image


draw("RGB", 32, 32, lambda x, y: (x * 8, y * 8, 128)).save(src("gradient.png"))
draw("RGBA", 32, 32, lambda x, y: (x * 8, y * 8, 128, 255 - x * 255 // 31)).save(src("gradient-alpha.png"))
draw("LA", 32, 32, lambda x, y: (x * 8, 255 - y * 8)).save(src("grey-alpha.png"))
draw("RGB", 48, 32, lambda x, y: QUADRANTS[(2 if y >= 16 else 0) + (1 if x >= 24 else 0)]).save(src("quadrants.png"))
frames = [Image.new("RGB", (16, 16), colour) for colour in QUADRANTS[:3]]
frames[0].save(src("frames.png"), save_all=True, append_images=frames[1:], duration=[100, 250, 40], loop=0)


def png16(path, width, height, pixel):
    """A 16-bit RGB PNG (Pillow writes no 16-bit RGB)."""
    import struct
    import zlib
    rows = b"".join(b"\0" + b"".join(struct.pack(">HHH", *pixel(x, y)) for x in range(width)) for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 16, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


png16(src("gradient16.png"), 32, 32, lambda x, y: (x * 2114, y * 2114, 32768))

cjxl = ["cjxl", "--num_threads=0", "--quiet"]
run(*cjxl, "-d", "0", src("gradient.png"), out("jxl-lossless.jxl"))
run(*cjxl, "-d", "0", "--container=1", src("gradient.png"), out("jxl-container.jxl"))
run(*cjxl, "-d", "1.5", os.path.join(here, "hopper.png"), out("jxl-lossy.jxl"))
run(*cjxl, "-d", "0", src("gradient-alpha.png"), out("jxl-alpha.jxl"))
run(*cjxl, "-d", "1", src("gradient-alpha.png"), out("jxl-alpha-lossy.jxl"))
run(*cjxl, "-d", "0", src("gradient16.png"), out("jxl-16bit.jxl"))
run(*cjxl, "-d", "0", src("grey-alpha.png"), out("jxl-grey-alpha.jxl"))
run(*cjxl, "-d", "0", src("frames.png"), out("jxl-animated.jxl"))
run("gcc", "-O1", "-o", src("jxl-animate"), os.path.join(here, "jxl-animate.c"), "-ljxl")
run(src("jxl-animate"), out("jxl-loops.jxl"))
for orientation in range(2, 9):
    oriented = src(f"quadrants{orientation}.png")
    Image.open(src("quadrants.png")).save(oriented)
    run("exiftool", "-q", "-overwrite_original", "-n", f"-Orientation={orientation}", oriented)
    run(*cjxl, "-d", "0", oriented, out(f"jxl-orientation{orientation}.jxl"))



def zeros_png(path, width, height):
    """An RGBA PNG of zero rows, compressed as it is written (a few hundred kilobytes)."""
    import struct
    import zlib
    compressor = zlib.compressobj(9)
    row = b"\0" * (1 + width * 4)
    data = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
                + chunk(b"IDAT", data) + chunk(b"IEND", b""))


zeros_png(src("zeros-9000.png"), 9000, 9000)
run(*cjxl, "-d", "0", "-e", "1", src("zeros-9000.png"), out("jxl-bomb-9000.jxl"))


def bits_of(data):
    return [(byte >> i) & 1 for byte in data for i in range(8)]


def bytes_of(bits):
    bits = bits + [0] * (-len(bits) % 8)
    return bytes(sum(bits[i + k] << k for k in range(8)) for i in range(0, len(bits), 8))


def announce_huge(codestream, side):
    """The bare codestream with its SizeHeader (ISO/IEC 18181-1 D.2, read least significant bit
    first) replaced by one stating side × side: not small, ysize as U32 selector 2 (18 bits, + 1),
    ratio 1 (xsize = ysize)."""
    assert codestream[:2] == b"\xff\x0a"
    bits = bits_of(codestream[2:])
    assert bits[0] == 1, "the source's size header is the small form"
    old_length = 1 + 5 + 3 + (5 if bits[6:9] == [0, 0, 0] else 0)
    value = side - 1
    new = [0, 0, 1] + [(value >> i) & 1 for i in range(18)] + [1, 0, 0]
    return b"\xff\x0a" + bytes_of(new + bits[old_length:])


with open(out("jxl-lossless.jxl"), "rb") as f:
    huge = announce_huge(f.read(), 30000)
with open(out("jxl-announces-30000.jxl"), "wb") as f:
    f.write(huge)
