#!/usr/bin/env python3
"""libvips' attention crop of every corpus photo, the reference of the `smartcrop` group:
for each JPEG and PNG in PHOTOS_DIR, a square crop of its shorter side placed by pyvips'
`smartcrop(interesting="attention")`. Prints JSON: {name: [left, top, side]}.

Usage: smartcrop_reference.py PHOTOS_DIR
"""
import json
import os
import sys

os.environ["VIPS_CONCURRENCY"] = "1"
import pyvips  # noqa: E402


def main():
    photos = sys.argv[1]
    result = {}
    for name in sorted(os.listdir(photos)):
        if not name.lower().endswith((".jpg", ".jpeg", ".png")):
            continue
        image = pyvips.Image.new_from_file(os.path.join(photos, name))
        side = min(image.width, image.height)
        crop = image.smartcrop(side, side, interesting="attention")
        # xoffset/yoffset are where the input lies relative to the output: minus the crop's origin.
        result[name] = [-crop.xoffset, -crop.yoffset, side]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
