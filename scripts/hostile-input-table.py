#!/usr/bin/env python3
"""The hostile-input table of docs/reliability.md: `webimage convert` run on damaged and crafted
files of every format, each run under a 1 GiB address-space limit and a 10-second bound.

For each format: decompression bombs made here, every real file cut at each 1/20th of its
length, and 1,000 random single-byte mutations of the real files (seeded, so a run repeats).
Each run ends as a sane decode (exit 0 and a PNG written), a clean error (exit 1, our one-line
message last on standard error; a codec library's own lines before it are counted apart), a crash (a signal, any other exit, or exit 0 without output) or a hang (killed
at 10 s); the peak resident memory of the runs is reported. Exit status 1 when any run crashed
or hung.

Usage: scripts/hostile-input-table.py PATH/TO/webimage [--mutations 1000] [--jobs 2] [--formats AVIF,HEIC]
"""
import argparse
import base64
import os
import random
import struct
import subprocess
import sys
import tempfile
import zlib
from concurrent.futures import ThreadPoolExecutor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT_BYTES = 1 << 30
TIMEOUT = 10.0

SOURCES = {
    "JPEG": ["Demo/images/thumb-Kite.jpg", "Demo/images/hopper_orientation_6.jpg", "Tests/Fixtures/hopper-progressive-32.jpg",
             "Tests/Fixtures/hopper-cmyk-32.jpg", "Tests/Fixtures/hopper.jpg"],
    "PNG": ["Tests/Fixtures/hopper.png", "Tests/Fixtures/hopper-rgba-32.png", "Tests/Fixtures/tRNS_null_1x1.png"],
    "APNG": ["Demo/images/apng-delay.png", "Tests/Fixtures/apng-single_frame.png"],
    "GIF": ["Demo/images/chi-animated.gif", "Tests/Fixtures/hopper.gif", "Tests/Fixtures/dispose_bgnd.gif"],
    "WebP": ["Demo/images/flower.webp", "Tests/Fixtures/hopper-alpha-32.webp", "Tests/Fixtures/hopper-lossless-32.webp",
             "Tests/Fixtures/hopper-animated-16.webp"],
    "AVIF": ["Tests/Fixtures/hopper-32.avif", "Tests/Fixtures/avif-alpha.avif", "Tests/Fixtures/avif-10bit.avif",
             "Tests/Fixtures/avif-animated.avif", "Tests/Fixtures/avif-irot1.avif"],
    "HEIC": ["Tests/Fixtures/heic-gradient.heic", "Tests/Fixtures/heic-grid.heic", "Tests/Fixtures/heic-alpha.heic",
             "Tests/Fixtures/heic-10bit.heic", "Tests/Fixtures/heic-thumbnail.heic"],
    "JXL": ["Tests/Fixtures/jxl-lossy.jxl", "Tests/Fixtures/jxl-alpha.jxl", "Tests/Fixtures/jxl-16bit.jxl",
            "Tests/Fixtures/jxl-loops.jxl", "Tests/Fixtures/jxl-container.jxl", "Tests/Fixtures/jxl-orientation6.jxl"],
    "SVG": ["Tests/Fixtures/shapes.svg"],
    "MP4": ["Fuzz/seeds/video/h264.mp4", "Fuzz/seeds/video/hevc10.mp4", "Fuzz/seeds/video/rotated.mp4", "Fuzz/seeds/video/mjpeg.mov"],
    "WebM": ["Fuzz/seeds/video/vp9.webm", "Fuzz/seeds/video/av1.mkv"],
    "PDF": ["Fuzz/seeds/pdf/text.pdf", "Fuzz/seeds/pdf/shapes.pdf", "Fuzz/seeds/pdf/rotate.pdf", "Fuzz/seeds/pdf/pages.pdf",
            "Fuzz/seeds/pdf/flate-image.pdf", "Fuzz/seeds/pdf/dct-image.pdf"],
}


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bomb(width, height):
    """An RGBA PNG of zero rows: a few hundred kilobytes that inflate to width × height × 4."""
    row = b"\0" * (1 + width * 4)
    compressor = zlib.compressobj(9)
    data = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + png_chunk(b"IDAT", data) + png_chunk(b"IEND", b""))


def jpeg_bomb():
    """A baseline JPEG header claiming 65,500 × 65,500 pixels, with almost no data."""
    with open(os.path.join(REPO, "Tests/Fixtures/hopper.jpg"), "rb") as f:
        data = bytearray(f.read())
    index = data.find(b"\xff\xc0")
    struct.pack_into(">HH", data, index + 5, 65500, 65500)
    return bytes(data[: index + 600])


def webp_animation(width, height, frames):
    """An animated WebP of `frames` 1×1 lossless frames on a width × height canvas."""
    pixel = bytes([0x56, 0x50, 0x38, 0x4C, 0x0F, 0, 0, 0, 0x2F, 0, 0, 0, 0, 0x07, 0x10, 0xFD, 0x8F, 0xFE, 0x07, 0x22, 0xA2, 0xFF, 0x01, 0])
    le24 = lambda v: struct.pack("<I", v)[:3]
    frame = le24(0) * 4 + le24(40) + b"\x02" + pixel
    anmf = b"ANMF" + struct.pack("<I", len(frame)) + frame
    body = b"WEBP" + b"VP8X" + struct.pack("<I", 10) + b"\x02\0\0\0" + le24(width - 1) + le24(height - 1)
    body += b"ANIM" + struct.pack("<I", 6) + b"\0" * 6
    return b"RIFF" + struct.pack("<I", len(body) + len(anmf) * frames) + body + anmf * frames


def apng_animation(width, height, frames):
    """An RGBA APNG of a width × height canvas of zeros (its default image is the first frame)
    and `frames` - 1 more frames of one pixel each: the work bomb of the WebP one, in APNG."""
    row = b"\0" * (1 + width * 4)
    compressor = zlib.compressobj(9)
    canvas = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    pixel = zlib.compress(b"\0\0\0\0\0", 9)
    def fctl(sequence, w, h):
        return png_chunk(b"fcTL", struct.pack(">IIIIIHHBB", sequence, w, h, 0, 0, 1, 100, 0, 0))
    chunks = [png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)),
              png_chunk(b"acTL", struct.pack(">II", frames, 0)), fctl(0, width, height), png_chunk(b"IDAT", canvas)]
    sequence = 1
    for _ in range(frames - 1):
        chunks.append(fctl(sequence, 1, 1))
        chunks.append(png_chunk(b"fdAT", struct.pack(">I", sequence + 1) + pixel))
        sequence += 2
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks) + png_chunk(b"IEND", b"")


def svg(body, width=64, height=48, prologue=""):
    return (prologue + f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">{body}</svg>').encode()


def svg_entity_bomb():
    """Billion laughs: ten levels of entities, each ten of the one below, in a text element."""
    entities = '<!ENTITY a0 "lollollollollollollollollollol">' + "".join(
        f'<!ENTITY a{level} "' + f"&a{level - 1};" * 10 + '">' for level in range(1, 10))
    return svg('<text y="20">&a9;</text>', prologue=f'<?xml version="1.0"?><!DOCTYPE svg [{entities}]>')


def pdf(pages, objects=(), trailer=""):
    """A PDF of `pages` (each a page dictionary's entries, `%d` standing for its content
    stream's object number, and its content) and more `objects` (numbered from 3 + 2 × pages),
    with a true cross-reference table."""
    bodies = [None, None]
    kids = []
    for entries, content in pages:
        bodies.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
        bodies.append(b"<< /Type /Page /Parent 2 0 R " + entries.replace(b"%d", b"%d" % len(bodies)) + b" >>")
        kids.append(len(bodies))
    bodies += list(objects)
    bodies[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    bodies[1] = b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % kid for kid in kids) + b"] /Count %d >>" % len(kids)
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(bodies, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(bodies) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R " % (len(bodies) + 1) + trailer.encode() + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def pdf_page(width, height, content=b"1 0 0 rg 10 10 20 20 re f", resources=b""):
    return (b"/MediaBox [0 0 %d %d] /Contents %%d 0 R /Resources << %s >>" % (width, height, resources), content)


def pdf_form_bomb(depth):
    """`depth` forms, each drawing the next twice: 2^depth squares from a few kilobytes."""
    forms = [b"<< /Type /XObject /Subtype /Form /BBox [0 0 100 100] /Length 27 >>\nstream\n0.5 0 0 rg 10 10 20 20 re f\nendstream"]
    for level in range(depth):
        forms.append(b"<< /Type /XObject /Subtype /Form /BBox [0 0 100 100] /Resources << /XObject << /X %d 0 R >> >> /Length 11 >>\n"
                     b"stream\n/X Do /X Do\nendstream" % (5 + level))
    return pdf([pdf_page(100, 100, b"/X Do", b"/XObject << /X %d 0 R >>" % (4 + depth + 1))], forms)


def pdf_image_bomb(side):
    """A page drawing one DeviceGray image of side × side zeros, Flate-compressed (a thousandth
    of its size)."""
    compressor = zlib.compressobj(9)
    row = b"\0" * side
    data = b"".join(compressor.compress(row) for _ in range(side)) + compressor.flush()
    image = (b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 "
             b"/Filter /FlateDecode /Length %d >>\nstream\n" % (side, side, len(data)) + data + b"\nendstream")
    return pdf([pdf_page(100, 100, b"q 100 0 0 100 0 0 cm /I Do Q", b"/XObject << /I 5 0 R >>")], [image])


def pdf_encrypted():
    """An /Encrypt dictionary (RC4, revision 2) no empty password opens."""
    encrypt = b"<< /Filter /Standard /V 1 /R 2 /O <" + b"11" * 32 + b"> /U <" + b"22" * 32 + b"> /P -4 >>"
    return pdf([pdf_page(100, 100)], [encrypt], trailer="/Encrypt 5 0 R /ID [<" + "ab" * 16 + "> <" + "ab" * 16 + ">]")


def mp4_patched(box, offset, value, size=4):
    """The H.264 seed with the big-endian field `offset` bytes after the type of its first `box`
    set to `value`: what the file claims, not what it holds."""
    data = bytearray(fixture("Fuzz/seeds/video/h264.mp4"))
    at = data.rindex(box) + len(box) + offset  # the last: `avc1` is also among ftyp's brands
    data[at:at + size] = value.to_bytes(size, "big")
    return bytes(data)


def hls_playlist():
    """A playlist whose segments are a file and a URL: FFmpeg would open both if asked to."""
    return b"#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nfile:///etc/passwd\n#EXTINF:2,\nhttp://127.0.0.1:9/a.ts\n#EXT-X-ENDLIST\n"


def isobmff_claiming(path, width, height):
    """A real AVIF or HEIC whose every `ispe` box (the image size the container states) claims
    width × height: what a decoder must refuse before it allocates."""
    with open(os.path.join(REPO, path), "rb") as f:
        data = bytearray(f.read())
    index = data.find(b"ispe")
    while index >= 0:
        struct.pack_into(">II", data, index + 8, width, height)
        index = data.find(b"ispe", index + 4)
    return bytes(data)


def avif_grid(rows, columns, width, height):
    """An AVIF grid of rows × columns tiles declaring a width × height canvas, every tile the
    first 64 px tile of Tests/Fixtures/avif-grid.avif (hostile-input finding 1: 100 × 100 tiles
    under 96 × 64, 450 KB, took libavif 0.11 past 4 GB before it looked at the grid)."""
    data = fixture("Tests/Fixtures/avif-grid.avif")
    av1c = data.find(b"av1C") - 4
    av1c_box = data[av1c:av1c + struct.unpack(">I", data[av1c:av1c + 4])[0]]
    iloc = data.find(b"iloc") - 4
    offset, length = struct.unpack(">II", data[iloc + 36:iloc + 44])  # item 2, the first tile
    payload = data[offset:offset + length]
    tiles = rows * columns

    def box(kind, payload):
        return struct.pack(">I", 8 + len(payload)) + kind + payload

    def full(kind, version, payload):
        return box(kind, bytes([version, 0, 0, 0]) + payload)

    def meta(payload_offset):
        locations = bytes([0x44, 0]) + struct.pack(">HHHHHII", tiles + 1, 1, 1, 0, 1, 0, 8)
        locations += b"".join(struct.pack(">HHHHII", 2 + i, 0, 0, 1, payload_offset, len(payload)) for i in range(tiles))
        entries = full(b"infe", 2, struct.pack(">HH", 1, 0) + b"grid\0")
        entries += b"".join(full(b"infe", 2, struct.pack(">HH", 2 + i, 0) + b"av01\0") for i in range(tiles))
        references = struct.pack(">HH", 1, tiles) + b"".join(struct.pack(">H", 2 + i) for i in range(tiles))
        properties = box(b"ipco", full(b"ispe", 0, struct.pack(">II", width, height)) + full(b"ispe", 0, struct.pack(">II", 64, 64))
                         + av1c_box + full(b"pixi", 0, bytes([3, 8, 8, 8])))
        associations = struct.pack(">IH", tiles + 1, 1) + bytes([2, 1, 4])
        associations += b"".join(struct.pack(">H", 2 + i) + bytes([3, 2, 0x83, 4]) for i in range(tiles))
        children = (full(b"hdlr", 0, b"\0" * 4 + b"pict" + b"\0" * 13) + full(b"pitm", 0, struct.pack(">H", 1))
                    + full(b"iloc", 1, locations) + full(b"iinf", 0, struct.pack(">H", tiles + 1) + entries)
                    + full(b"iref", 0, box(b"dimg", references))
                    + box(b"idat", bytes([0, 0, rows - 1, columns - 1]) + struct.pack(">HH", width, height))
                    + box(b"iprp", properties + full(b"ipma", 0, associations)))
        return full(b"meta", 0, children)

    ftyp = box(b"ftyp", b"avif" + b"\0" * 4 + b"avifmif1miaf")
    size = len(meta(0))
    return ftyp + meta(len(ftyp) + size + 8) + box(b"mdat", payload)


def fixture(path):
    with open(os.path.join(REPO, path), "rb") as f:
        return f.read()


def gif_many_frames(frames):
    """A 2×2 GIF with `frames` frames: long animations upscaled by a resize."""
    header = b"GIF89a" + struct.pack("<HH", 2, 2) + b"\x80\0\0" + b"\0\0\0\xff\xff\xff"
    image = b"\x21\xf9\x04\0\x04\0\0\0" + b"\x2c" + struct.pack("<HHHH", 0, 0, 2, 2) + b"\0" + b"\x02\x02\x44\x01\0"
    return header + image * frames + b"\x3b"


BOMBS = {
    "JPEG": [("65500×65500 header", jpeg_bomb, [])],
    "PNG": [("30000×30000 of zeros", lambda: png_bomb(30000, 30000), []), ("9000×9000 of zeros", lambda: png_bomb(9000, 9000), [])],
    "APNG": [("4096² canvas, 3,000 frames, 64 px", lambda: apng_animation(4096, 4096, 3000), ["--resize", "64x64"]),
             ("200,000 frames of 1×1", lambda: apng_animation(1, 1, 200000), [])],
    "GIF": [("LZW bomb fixture", lambda: open(os.path.join(REPO, "Tests/Fixtures/decompression_bomb.gif"), "rb").read(), []),
            ("10,000 frames resized to 256 px", lambda: gif_many_frames(10000), ["--resize", "256x256"])],
    "WebP": [("4096² canvas, 3,000 frames, 64 px", lambda: webp_animation(4096, 4096, 3000), ["--resize", "64x64"]),
             ("200,000 frames of 1×1", lambda: webp_animation(1, 1, 200000), [])],
    "AVIF": [("ispe claiming 60000×60000", lambda: isobmff_claiming("Tests/Fixtures/hopper-32.avif", 60000, 60000), []),
             ("animation, ispe claiming 16384×16384", lambda: isobmff_claiming("Tests/Fixtures/avif-animated.avif", 16384, 16384), []),
             ("grid of 100×100 tiles under 96×64", lambda: avif_grid(100, 100, 96, 64), []),
             ("grid of 60×60 tiles under 96×64", lambda: avif_grid(60, 60, 96, 64), []),
             ("grid of 64×64 tiles, 4096×4096", lambda: avif_grid(64, 64, 4096, 4096), [])],
    "HEIC": [("ispe claiming 60000×60000", lambda: isobmff_claiming("Tests/Fixtures/heic-gradient.heic", 60000, 60000), []),
             ("grid, ispe claiming 60000×60000", lambda: isobmff_claiming("Tests/Fixtures/heic-grid.heic", 60000, 60000), [])],
    "JXL": [("size header claiming 30000×30000", lambda: fixture("Tests/Fixtures/jxl-announces-30000.jxl"), []),
            ("9000×9000 of zeros, 3 KB", lambda: fixture("Tests/Fixtures/jxl-bomb-9000.jxl"), [])],
    "SVG": [("billion laughs", svg_entity_bomb, []),
            ("100000×100000 canvas", lambda: svg('<rect width="100" height="100"/>', 100000, 100000), []),
            ("feTurbulence numOctaves 100000", lambda: svg('<filter id="t"><feTurbulence baseFrequency="0.05" numOctaves="100000"/></filter>'
                                                           '<rect width="64" height="48" filter="url(#t)"/>'), []),
            ("20,000 text elements", lambda: svg("".join(f'<text x="{i % 60}" y="{i % 40}">x</text>' for i in range(20000))), []),
            ("dashed path of 100,000 segments", lambda: svg('<path stroke="black" stroke-dasharray="0.01 0.01" d="M0 0'
                                                            + "".join(f" L{i % 64} {i * 7 % 48}" for i in range(100000)) + '"/>'), []),
            ("embedded 20000×20000 PNG", lambda: svg('<image width="64" height="48" href="data:image/png;base64,'
                                                     + base64.b64encode(png_bomb(20000, 20000)).decode() + '"/>'), [])],
    # The visual sample entry's width and height follow its type by 28 bytes; stts's first count by 12.
    "MP4": [("sample entry claiming 65535×65535", lambda: mp4_patched(b"avc1", 24, 0xFFFF_FFFF), []),
            ("stts claiming 1,000,000 frames", lambda: mp4_patched(b"stts", 8, 1_000_000), []),
            ("mvhd claiming 1,000 hours", lambda: mp4_patched(b"mvhd", 16, 3_600_000_000), []),
            ("an HLS playlist naming a file and a URL", hls_playlist, [])],
    "WebM": [("EBML header alone", lambda: fixture("Fuzz/seeds/video/vp9.webm")[:40], [])],
    "PDF": [("forms drawing 2^28 squares", lambda: pdf_form_bomb(28), []),
            ("1,000,000 pt square page", lambda: pdf([pdf_page(1000000, 1000000)]), []),
            ("14,000 pt square page", lambda: pdf([pdf_page(14000, 14000)]), []),
            ("page tree claiming 1,000,000,000 pages", lambda: pdf([pdf_page(100, 100)]).replace(b"/Count 1 ", b"/Count 1000000000 "), []),
            ("20,000 pages", lambda: pdf([pdf_page(10, 10)] * 20000), []),
            ("image of 30000×30000 zeros", lambda: pdf_image_bomb(30000), []),
            ("encrypted", pdf_encrypted, [])],
}


def run(webimage, data, extra, workdir, index):
    """One conversion under the limits: its outcome and its peak resident memory.

    GNU time measures the peak: it forks from its own small process, so the figure is the
    converter's own (a child forked from this Python process would inherit its high-water
    mark). prlimit sets the address-space limit."""
    source = os.path.join(workdir, f"in-{index}")
    output = os.path.join(workdir, f"out-{index}.png")
    usage = os.path.join(workdir, f"rss-{index}")
    with open(source, "wb") as f:
        f.write(data)
    command = ["/usr/bin/time", "-f", "%M %U %S", "-o", usage, "prlimit", f"--as={LIMIT_BYTES}", "--",
               webimage, "convert", source, output] + extra
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, stderr = process.communicate(timeout=TIMEOUT)
        report = open(usage).read().split()
        # The last line: peak RSS in KiB, then user and system CPU seconds (the renderer child's
        # included: the converter waits for it).
        figures = report[-3:]
        rss = int(figures[0]) * 1024 if len(figures) == 3 and figures[0].isdigit() else 0
        cpu = float(figures[1]) + float(figures[2]) if len(figures) == 3 and figures[0].isdigit() else 0.0
        if "signal" in " ".join(report) or process.returncode not in (0, 1):
            outcome = "crash"
        elif process.returncode == 0:
            outcome = "decoded" if os.path.exists(output) and os.path.getsize(output) > 0 else "crash"
        else:
            # A clean error is our one line, last; lines before it are a codec library's own
            # messages (dav1d's default logger, which Debian's libavif 0.11 leaves on), counted apart.
            lines = stderr.decode(errors="replace").splitlines()
            outcome = "error" if lines and lines[-1].startswith("webimage convert: ") else "crash"
            if outcome == "error" and len(lines) > 1:
                outcome = "error+library"
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        process.communicate()
        outcome, rss, cpu = "hang", 0, float(TIMEOUT)
    for path in (source, output, usage):
        if os.path.exists(path):
            os.remove(path)
    return outcome, rss, cpu


def cases(fmt, mutations, rng):
    files = [open(os.path.join(REPO, path), "rb").read() for path in SOURCES[fmt]]
    yield from (("bomb", make(), extra) for _, make, extra in BOMBS[fmt])
    for data in files:
        for k in range(1, 20):
            yield ("truncation", data[: len(data) * k // 20], [])
    for _ in range(mutations):
        data = bytearray(rng.choice(files))
        position = rng.randrange(len(data))
        data[position] = (data[position] + rng.randrange(1, 256)) % 256
        yield ("mutation", bytes(data), [])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("webimage")
    parser.add_argument("--mutations", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--formats", default=",".join(SOURCES), help="comma-separated, of: " + ", ".join(SOURCES))
    args = parser.parse_args()
    formats = args.formats.split(",")
    print("| format | kind | runs | sane decodes | clean errors | of which a library also wrote to stderr | crashes | hangs | over 5 s of CPU | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    totals = {"crash": 0, "hang": 0}
    with tempfile.TemporaryDirectory() as workdir, ThreadPoolExecutor(args.jobs) as pool:
        for fmt in formats:
            # One generator per format, seeded from its name: a format's rows repeat whichever
            # formats are run with it.
            rng = random.Random(f"20261124-{fmt}")
            work = list(cases(fmt, args.mutations, rng))
            results = list(pool.map(lambda item: (item[1][0], run(args.webimage, item[1][1], item[1][2], workdir, f"{fmt}-{item[0]}")),
                                     enumerate(work)))
            for kind in ("bomb", "truncation", "mutation"):
                rows = [outcome for k, outcome in results if k == kind]
                if not rows:
                    continue
                count = lambda name: sum(1 for outcome, _, _ in rows if outcome == name)
                peak = max(rss for _, rss, _ in rows)
                slow = sum(1 for _, _, cpu in rows if cpu > 5)
                totals["crash"] += count("crash")
                totals["hang"] += count("hang")
                errors = count("error") + count("error+library")
                print(f"| {fmt} | {kind} | {len(rows)} | {count('decoded')} | {errors} | {count('error+library')} | {count('crash')} | {count('hang')} | {slow} | {peak / 2**20:.0f} MiB |")
            sys.stdout.flush()
    print(f"\ncrashes: {totals['crash']}, hangs: {totals['hang']}")
    return 1 if totals["crash"] or totals["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
