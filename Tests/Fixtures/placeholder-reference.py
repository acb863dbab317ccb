#!/usr/bin/env python3
"""The placeholder hashes' reference implementations, for PlaceholderReferenceTests:
thumbhash-python (a port of Evan Wallace's ThumbHash) and blurhash (a port of Wolt's BlurHash),
both from PyPI (scripts/deps.sh --test installs them; thumbhash imports Pillow).

    placeholder-reference.py --check         exit 0 when both packages import, 3 otherwise
    placeholder-reference.py REQUEST.json    the answers to a request, as JSON on stdout

A request is {"items": [ITEM, ...]}, answered by a list in the same order:

    {"op": "thumbhash-encode", "width": W, "height": H, "rgba": BASE64}   -> {"hash": BASE64}
    {"op": "thumbhash-decode", "hash": BASE64}                           -> {"width": W, "height": H, "rgba": BASE64}
    {"op": "blurhash-encode", "width": W, "height": H, "rgba": BASE64, "x": NX, "y": NY}
                                                                         -> {"hash": STRING}
    {"op": "blurhash-decode", "hash": STRING, "width": W, "height": H, "punch": P}
                                                                         -> {"width": W, "height": H, "rgba": BASE64}

Pixels are straight-alpha RGBA, 4 bytes a pixel, rows top to bottom, in base64. BlurHash
ignores alpha (its encoder reads R, G, B) and decodes opaque pixels (alpha 255 here).
"""
import base64
import json
import sys

try:
    import blurhash
    from thumbhash.decode import thumbhash_to_rgba
    from thumbhash.encode import rgba_to_thumbhash
except ImportError as error:
    print(f"placeholder-reference: {error}", file=sys.stderr)
    sys.exit(3)


def answer(item):
    op = item["op"]
    if op == "thumbhash-encode":
        rgba = list(base64.b64decode(item["rgba"]))
        return {"hash": base64.b64encode(rgba_to_thumbhash(item["width"], item["height"], rgba)).decode()}
    if op == "thumbhash-decode":
        width, height, rgba = thumbhash_to_rgba(base64.b64decode(item["hash"]))
        return {"width": width, "height": height, "rgba": base64.b64encode(bytes(rgba)).decode()}
    if op == "blurhash-encode":
        width, height = item["width"], item["height"]
        rgba = base64.b64decode(item["rgba"])
        rows = [[list(rgba[(y * width + x) * 4:(y * width + x) * 4 + 3]) for x in range(width)] for y in range(height)]
        return {"hash": blurhash.encode(rows, components_x=item["x"], components_y=item["y"])}
    if op == "blurhash-decode":
        width, height = item["width"], item["height"]
        rows = blurhash.decode(item["hash"], width, height, punch=item.get("punch", 1.0))
        rgba = bytes(value for row in rows for pixel in row for value in pixel + [255])
        return {"width": width, "height": height, "rgba": base64.b64encode(rgba).decode()}
    raise ValueError(f"unknown op {op}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        sys.exit(0)
    with open(sys.argv[1]) as f:
        request = json.load(f)
    json.dump([answer(item) for item in request["items"]], sys.stdout)
