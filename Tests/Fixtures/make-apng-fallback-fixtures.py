#!/usr/bin/env python3
"""Writes the APNG fixtures of issue 26: `apng-two-frames.png`, a valid two-frame APNG, and
`apng-fallback-*.png`, the same file with one fault each that makes the decoder set the
animation aside and show the still default image (the rules: Sources/WebImageCore/Sniffing/
APNGChunks.swift). `webimage info` once read their acTL's frame count where the decoder showed
one frame; now both read the chunks through the same rules (ImageMetadataDecoderTests).

The pixels are `apng-delay.png`'s (Pillow's Tests/images/apng/delay.png, HPND): its IHDR, its
IDAT as the default image (frame 0) and its first fdAT as frame 1, re-chunked with new
sequence numbers and CRCs. Standard library only; run by hand: `python3 make-apng-fallback-fixtures.py`.
"""
import os
import struct
import zlib

here = os.path.dirname(os.path.abspath(__file__))


def chunks(data):
    """(type, data) of every chunk after the signature."""
    offset, out = 8, []
    while offset < len(data):
        length, = struct.unpack(">I", data[offset:offset + 4])
        out.append((data[offset + 4:offset + 8], data[offset + 8:offset + 8 + length]))
        offset += 12 + length
    return out


def chunk(kind, data, bad_crc=False):
    crc = zlib.crc32(kind + data) ^ (0xFFFFFFFF if bad_crc else 0)
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def actl(frames, plays=0, **options):
    return chunk(b"acTL", struct.pack(">II", frames, plays), **options)


def fctl(sequence, width=128, height=64, x=0, y=0, **options):
    # delay 50/100 s, dispose none, blend over: apng-delay.png's first frame's.
    return chunk(b"fcTL", struct.pack(">IIIIIHHBB", sequence, width, height, x, y, 50, 100, 0, 1), **options)


def fdat(sequence, payload):
    return chunk(b"fdAT", struct.pack(">I", sequence) + payload)


source = dict()
with open(os.path.join(here, "apng-delay.png"), "rb") as f:
    for kind, data in chunks(f.read()):
        source.setdefault(kind, data)  # the first of each: IHDR, IDAT, the first fdAT
ihdr = chunk(b"IHDR", source[b"IHDR"])
idat = chunk(b"IDAT", source[b"IDAT"])
frame1 = source[b"fdAT"][4:]  # without its sequence number
iend = chunk(b"IEND", b"")

files = {
    # The control: frame 0 the default image, frame 1 from fdAT; sequence numbers 0, 1, 2.
    "apng-two-frames.png": [actl(2), fctl(0), idat, fctl(1), fdat(2, frame1)],
    # fdAT numbered 3 where 2 was due.
    "apng-fallback-sequence-gap.png": [actl(2), fctl(0), idat, fctl(1), fdat(3, frame1)],
    # acTL declares 3 frames; the complete file has 2 fcTL chunks.
    "apng-fallback-fewer-frames.png": [actl(3), fctl(0), idat, fctl(1), fdat(2, frame1)],
    # The default image's fcTL is 0 pixels wide.
    "apng-fallback-empty-fctl.png": [actl(2), fctl(0, width=0), idat, fctl(1), fdat(2, frame1)],
    # The default image's fcTL covers a 64x64 corner of the 128x64 canvas.
    "apng-fallback-partial-fctl.png": [actl(2), fctl(0, width=64), idat, fctl(1), fdat(2, frame1)],
    # Two fcTL chunks before the image data (the count, 2, agrees with acTL).
    "apng-fallback-two-fctl-before-idat.png": [actl(2), fctl(0), fctl(1), idat],
    # An fdAT before the image data.
    "apng-fallback-fdat-before-idat.png": [actl(2), fctl(0), fdat(1, frame1), idat, fctl(2), fdat(3, frame1)],
    # acTL's CRC does not match its bytes.
    "apng-fallback-actl-crc.png": [actl(2, bad_crc=True), fctl(0), idat, fctl(1), fdat(2, frame1)],
    # The default image's fcTL's CRC does not match its bytes.
    "apng-fallback-fctl-crc.png": [actl(2), fctl(0, bad_crc=True), idat, fctl(1), fdat(2, frame1)],
    # A second acTL, after the image data.
    "apng-fallback-second-actl.png": [actl(2), fctl(0), idat, fctl(1), fdat(2, frame1), actl(2)],
    # num_plays of 2^31, past the APNG limit of 2^31 - 1.
    "apng-fallback-too-many-plays.png": [actl(2, plays=0x80000000), fctl(0), idat, fctl(1), fdat(2, frame1)],
}
for name, body in files.items():
    with open(os.path.join(here, name), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + ihdr + b"".join(body) + iend)
