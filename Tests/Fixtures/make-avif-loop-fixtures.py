#!/usr/bin/env python3
"""Makes the AVIF loop-count fixtures from avif-animated.avif (avifenc's three-frame sequence,
made by make-avif-heif-fixtures.py; run that first if it changes).

avifenc 0.11 writes no edit list, so the repetition an animated AVIF states in its tracks'
`edts/elst` (ISO/IEC 23008-12 §9.6.1) is added here: one edit of the whole sequence
(segment_duration = the movie's duration, 390 ticks at 1000 Hz) in every track, with

- avif-loop-once.avif: no repeat flag: plays once;
- avif-loop-3.avif: the repeat flag, the tracks' duration three segments: plays 3 times
  (libavif 1.x's repetitionCount 2);
- avif-loop-infinite.avif: the repeat flag, the tracks' duration indefinite (all ones): forever.

The boxes the edit list moves are fixed: the sizes of `trak` and `moov`, and every offset into
`mdat`, which follows `moov`: the tracks' `stco`/`co64` chunk offsets and the `meta` box's `iloc`
extents (avifenc also stores the first frame as the primary item). `mvhd`'s duration follows the
tracks'. Each output is checked to decode, frame by frame, to exactly avifdec's output for the
source. Run by hand: `python3 make-avif-loop-fixtures.py`.
"""
import filecmp
import os
import struct
import subprocess
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
source = open(os.path.join(here, "avif-animated.avif"), "rb").read()
CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts"}
INDEFINITE = (1 << 64) - 1


def boxes(data, start, end):
    """(type, box start, payload start, box end) of each box between start and end."""
    while start + 8 <= end:
        size, kind = struct.unpack(">I4s", data[start:start + 8])
        assert size >= 8, "no 64-bit or open-ended boxes in avifenc's output"
        yield kind, start, start + 8, start + size
        start += size


def box(kind, payload):
    return struct.pack(">I4s", 8 + len(payload), kind) + payload


def elst(repeats, segment):
    # Version 0, flags (bit 0: repeat), one entry: segment_duration, media_time 0, rate 1.0.
    return box(b"edts", box(b"elst", struct.pack(">BxxBIIiHH", 0, 1 if repeats else 0, 1, segment, 0, 1, 0)))


def duration_field(data, kind, payload):
    """Where mvhd's or tkhd's duration is (after the times and the timescale or track ID), and
    its width: 8 bytes in version 1, 4 in version 0."""
    wide = data[payload] == 1
    return payload + (28 if wide else 20) - (4 if kind == b"mvhd" else 0), 8 if wide else 4


def get_duration(data, kind, payload):
    at, width = duration_field(data, kind, payload)
    return int.from_bytes(data[at:at + width], "big")


def set_duration(data, kind, payload, duration):
    at, width = duration_field(data, kind, payload)
    data[at:at + width] = min(duration, (1 << (8 * width)) - 1).to_bytes(width, "big")


def shift_iloc(data, payload, end, delta):
    """Adds delta to every file offset (construction method 0) in an iloc box."""
    version = data[payload]
    sizes, sizes2 = data[payload + 4], data[payload + 5]
    offset_size, length_size, base_size = sizes >> 4, sizes & 15, sizes2 >> 4
    index_size = (sizes2 & 15) if version in (1, 2) else 0
    at = payload + 6
    count, at = (struct.unpack(">H", data[at:at + 2])[0], at + 2) if version < 2 else (struct.unpack(">I", data[at:at + 4])[0], at + 4)
    fmt = {4: ">I", 8: ">Q"}
    for _ in range(count):
        at += 2 if version < 2 else 4
        method = 0
        if version in (1, 2):
            method = struct.unpack(">H", data[at:at + 2])[0] & 15
            at += 2
        at += 2  # data reference index
        if method == 0 and base_size:
            base = struct.unpack(fmt[base_size], data[at:at + base_size])[0]
            data[at:at + base_size] = struct.pack(fmt[base_size], base + delta)
        shift_extents = method == 0 and not base_size
        at += base_size
        extents = struct.unpack(">H", data[at:at + 2])[0]
        at += 2
        for _ in range(extents):
            at += index_size
            if shift_extents:
                value = struct.unpack(fmt[offset_size], data[at:at + offset_size])[0]
                data[at:at + offset_size] = struct.pack(fmt[offset_size], value + delta)
            at += offset_size + length_size
    assert at <= end


def with_edit_list(repeats, plays):
    """The source with one edit of the whole sequence in every track, repeating or not, and the
    tracks' duration `plays` segments (all ones for None: indefinite)."""
    data = bytearray(source)
    top = {kind: (start, payload, end) for kind, start, payload, end in boxes(data, 0, len(data))}
    moov_start, moov_payload, moov_end = top[b"moov"]
    assert top[b"mdat"][0] >= moov_end, "mdat follows moov"
    mvhd = next(p for k, s, p, e in boxes(data, moov_payload, moov_end) if k == b"mvhd")
    segment = get_duration(data, b"mvhd", mvhd)
    edit = elst(repeats, segment)
    duration = INDEFINITE if plays is None else segment * plays
    traks = [(s, p, e) for k, s, p, e in boxes(data, moov_payload, moov_end) if k == b"trak"]
    delta = len(edit) * len(traks)

    # Offsets and durations first, while the layout is the source's.
    set_duration(data, b"mvhd", mvhd, duration)
    for _, payload, end in traks:
        for kind, _, p, e in boxes(data, payload, end):
            if kind == b"tkhd":
                set_duration(data, kind, p, duration)
        stack = [(payload, end)]
        while stack:
            start, stop = stack.pop()
            for kind, _, p, e in boxes(data, start, stop):
                if kind in CONTAINERS:
                    stack.append((p, e))
                elif kind in (b"stco", b"co64"):
                    wide = kind == b"co64"
                    count = struct.unpack(">I", data[p + 4:p + 8])[0]
                    for i in range(count):
                        at = p + 8 + i * (8 if wide else 4)
                        fmt = ">Q" if wide else ">I"
                        width = 8 if wide else 4
                        data[at:at + width] = struct.pack(fmt, struct.unpack(fmt, data[at:at + width])[0] + delta)
    meta = top[b"meta"]
    iloc = next((p, e) for k, s, p, e in boxes(data, meta[1] + 4, meta[2]) if k == b"iloc")
    shift_iloc(data, iloc[0], iloc[1], delta)

    # Then the edit list into every track, before its mdia, and the sizes that grow.
    out = bytearray(data[:moov_payload])
    out[moov_start:moov_start + 4] = struct.pack(">I", moov_end - moov_start + delta)
    cursor = moov_payload
    for start, payload, end in traks:
        out += data[cursor:start]
        mdia = next(s for k, s, p, e in boxes(data, payload, end) if k == b"mdia")
        out += struct.pack(">I", end - start + len(edit)) + data[start + 4:mdia] + edit + data[mdia:end]
        cursor = end
    out += data[cursor:]
    assert len(out) == len(data) + delta
    return bytes(out)


work = tempfile.mkdtemp()


def frames(path):
    """avifdec's PNG of each of the three frames."""
    outputs = []
    for index in range(3):
        png = os.path.join(work, f"{os.path.basename(path)}-{index}.png")
        subprocess.run(["avifdec", "--jobs", "1", "--index", str(index), path, png], check=True, stdout=subprocess.DEVNULL)
        outputs.append(png)
    return outputs


reference = frames(os.path.join(here, "avif-animated.avif"))
for name, repeats, plays in (("avif-loop-once.avif", False, 1), ("avif-loop-3.avif", True, 3), ("avif-loop-infinite.avif", True, None)):
    path = os.path.join(here, name)
    with open(path, "wb") as f:
        f.write(with_edit_list(repeats, plays))
    assert all(filecmp.cmp(a, b, shallow=False) for a, b in zip(frames(path), reference)), f"{name} decodes differently"
