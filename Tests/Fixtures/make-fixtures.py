#!/usr/bin/env python3
"""Regenerates the Pillow-made fixtures in this folder from the corpus's hopper.png.

Run once by hand (`pip install Pillow`, then `python3 make-fixtures.py`) when a fixture
needs to change; the tests only read the committed files and never need Pillow.
Every image is scaled down to 32 px so the repository stays small.
"""
import os
from PIL import Image

here = os.path.dirname(os.path.abspath(__file__))
corpus = os.path.join(here, "..", "..", "..", "shared", "corpus", "edge")
hopper = Image.open(os.path.join(corpus, "hopper.png")).convert("RGB").resize((32, 32), Image.LANCZOS)
# An alpha channel that fades from opaque (left) to transparent (right).
alpha = Image.linear_gradient("L").rotate(90).resize((32, 32))
hopper_rgba = hopper.copy()
hopper_rgba.putalpha(alpha)


def out(name):
    return os.path.join(here, name)


hopper.save(out("hopper-32.tif"))                                   # uncompressed, little-endian (II)
hopper_rgba.save(out("hopper-rgba-32.tif"))                         # ExtraSamples = 2 (unassociated alpha)
hopper.save(out("hopper-32.bmp"))                                   # BITMAPINFOHEADER, 24 bpp
hopper.save(out("hopper-32.ico"), sizes=[(16, 16), (32, 32)])       # two entries, PNG-compressed
hopper.save(out("hopper-32.avif"), quality=50)
hopper.save(out("hopper-lossless-32.webp"), lossless=True)          # VP8L
hopper_rgba.save(out("hopper-alpha-32.webp"), quality=80)           # VP8X + ALPH + VP8
# Animated WebP: three 16 px frames (VP8X with the animation flag, ANIM, ANMF chunks).
frames = [hopper.resize((16, 16)).rotate(angle) for angle in (0, 90, 180)]
frames[0].save(out("hopper-animated-16.webp"), save_all=True, append_images=frames[1:],
               duration=100, loop=0, quality=60)
# Big-endian TIFF (MM): Pillow writes 16-bit big-endian grey that way. High byte = grey level.
grey = hopper.convert("L").tobytes()
Image.frombytes("I;16B", (32, 32), bytes(b for v in grey for b in (v, 0))).save(out("hopper-gray16be-32.tif"))
hopper_rgba.save(out("hopper-rgba-32.png"))                         # colour type 6
hopper.save(out("hopper-progressive-32.jpg"), progressive=True, quality=75)  # SOF2
hopper.convert("CMYK").save(out("hopper-cmyk-32.jpg"), quality=90)  # Adobe APP14, transform 0 (inverted CMYK)

# Decoded pixels for the processing tests, which run without any decoder: binary Netpbm files
# (a one-line text header, then the raw bytes) under pixels/.
os.makedirs(out("pixels"), exist_ok=True)
# A 240×180 crop of flower.jpg (a real photo: petals, leaves, fine veins), as decoded RGB.
flower = Image.open(os.path.join(corpus, "flower.jpg")).convert("RGB").crop((120, 60, 360, 240))
flower.save(out("pixels/flower-240x180.ppm"))                      # P6
# Pillow's own Lanczos 4× reduction of it, the cross-check for our filter.
flower.resize((60, 45), Image.LANCZOS).save(out("pixels/flower-240x180-lanczos-60x45.ppm"))
# transparent.png (dice with soft, anti-aliased alpha edges over transparent black), as RGBA.
transparent = Image.open(os.path.join(corpus, "transparent.png")).convert("RGBA")
with open(out("pixels/transparent-200x150.pam"), "wb") as file:  # P7: Pillow writes no RGBA PAM
    file.write(b"P7\nWIDTH %d\nHEIGHT %d\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n" % transparent.size)
    file.write(transparent.tobytes())
