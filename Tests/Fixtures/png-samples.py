#!/usr/bin/env python3
"""Prints the samples of a non-interlaced 8- or 16-bit RGB/RGBA PNG (what avifdec and
heif-convert write) so that the AVIF/HEIF tests compare against the reference decoders' output
without reading it through this library's own PNG decoder. Output: a line
"WIDTH HEIGHT CHANNELS BITDEPTH", then every sample as decimal, space-separated."""
import struct
import sys
import zlib

data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat = 8, b""
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
assert interlace == 0 and colour in (2, 6) and depth in (8, 16)
channels = 3 if colour == 2 else 4
bpp = channels * depth // 8
stride = width * bpp
raw = zlib.decompress(idat)
rows, previous = [], bytearray(stride)
for y in range(height):
    kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = previous[i]
        c = previous[i - bpp] if i >= bpp else 0
        if kind == 1: line[i] = (line[i] + a) & 255
        elif kind == 2: line[i] = (line[i] + b) & 255
        elif kind == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif kind == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(bytes(line))
    previous = line
pixels = b"".join(rows)
samples = pixels if depth == 8 else struct.unpack(">%dH" % (len(pixels) // 2), pixels)
print(width, height, channels, depth)
print(" ".join(map(str, samples)))
