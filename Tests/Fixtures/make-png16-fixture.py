#!/usr/bin/env python3
"""Writes png-16bit-rounding.png: an 8×8 16-bit RGBA PNG whose samples tell rounding from
truncation when they are reduced to 8 bits.

Most samples are k × 257 + 160 for some k below 56: the nearest 8-bit value, v × 255 / 65535
= k + 0.62…, rounds to k + 1, while the high byte (what png_set_strip_16 and Pillow keep) is k.
Every fourth pixel's samples are exact multiples of 257 (k × 257 → k either way), and alpha
runs over both kinds, so the alpha channel is covered too. Run by hand:
`python3 make-png16-fixture.py`; the test (PNGDecoderTests) reads the committed file.
"""
import os
import struct
import zlib

here = os.path.dirname(os.path.abspath(__file__))
WIDTH = HEIGHT = 8


def sample(index, channel):
    k = (index * 7 + channel * 11) % 56
    return k * 257 if index % 4 == 3 else k * 257 + 160


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


rows = b"".join(
    b"\0" + b"".join(struct.pack(">HHHH", *(sample(y * WIDTH + x, c) for c in range(4))) for x in range(WIDTH))
    for y in range(HEIGHT))
with open(os.path.join(here, "png-16bit-rounding.png"), "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n")
    f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", WIDTH, HEIGHT, 16, 6, 0, 0, 0)))
    f.write(chunk(b"IDAT", zlib.compress(rows, 9)))
    f.write(chunk(b"IEND", b""))
