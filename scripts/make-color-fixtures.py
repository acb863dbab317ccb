#!/usr/bin/env python3
"""The colour-management fixtures (Tests/Fixtures/color) and their references.

Each input is a small image tagged with a real ICC profile from Debian's colord-data, written by
the format's own encoder (Pillow for PNG, JPEG and WebP; avifenc for AVIF; heif-enc for HEIC; cjxl
for JPEG XL).
Each reference, `NAME.srgb.png` (no profile), is what an independent pipeline makes of the input:
the format's reference decoder (Pillow; avifdec; heif-convert; djxl), then Pillow's ImageCms
(lcms2) from the embedded profile to sRGB, perceptual intent. The tests decode the inputs with
our decoders and compare. Run again only to change the fixtures; commit what it writes.

Usage: scripts/make-color-fixtures.py   (needs colord-data, Pillow, libavif-bin, libheif-examples,
libjxl-tools)
"""
import io
import os
import subprocess
import tempfile

from PIL import Image, ImageCms

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "Tests/Fixtures/color")
PROFILES = "/usr/share/color/icc/colord"


def profile(name):
    with open(os.path.join(PROFILES, name), "rb") as f:
        return f.read()


def gradient(width=48, height=32, alpha=False):
    """Saturated hues left to right, darker downwards; alpha falling to the right if asked."""
    image = Image.new("RGBA" if alpha else "RGB", (width, height))
    for y in range(height):
        for x in range(width):
            hue = x * 6 / width
            sector, f = int(hue), hue - int(hue)
            v = 255 - y * 160 // height
            q, t = int(v * (1 - f)), int(v * f)
            rgb = [(v, t, 0), (q, v, 0), (0, v, t), (0, q, v), (t, 0, v), (v, 0, q)][sector % 6]
            image.putpixel((x, y), rgb + ((255 - x * 200 // width,) if alpha else ()))
    return image


def to_srgb(image, icc):
    """Pillow's (lcms2's) conversion of `image`'s values from `icc` to sRGB."""
    source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
    srgb = ImageCms.createProfile("sRGB")
    converted = ImageCms.profileToProfile(image, source, srgb, renderingIntent=ImageCms.Intent.PERCEPTUAL,
                                          outputMode=image.mode)
    converted.info.pop("icc_profile", None)
    return converted


def save_reference(name, image):
    image.save(os.path.join(OUT, name + ".srgb.png"))


def pillow_fixture(name, image, icc, **save):
    path = os.path.join(OUT, name)
    image.save(path, icc_profile=icc, **save)
    decoded = Image.open(path)
    decoded.load()
    assert decoded.info.get("icc_profile") == icc, f"{name}: the profile was not embedded"
    save_reference(name, to_srgb(decoded.convert(image.mode), icc))


def tool_fixture(name, image, icc, encode, decode):
    """An input written by a reference encoder from a tagged PNG, its reference decoded by the
    format's reference decoder (which keeps the values and the profile) and converted by Pillow."""
    with tempfile.TemporaryDirectory() as folder:
        source, decoded = os.path.join(folder, "in.png"), os.path.join(folder, "out.png")
        image.save(source, icc_profile=icc)
        path = os.path.join(OUT, name)
        subprocess.run(encode(source, path), check=True, capture_output=True)
        subprocess.run(decode(path, decoded), check=True, capture_output=True)
        reference = Image.open(decoded)
        reference.load()
        save_reference(name, to_srgb(reference.convert(image.mode), icc))


def jxl_fixture(name, image, icc, distance):
    """A JPEG XL input written by cjxl from a tagged PNG at butteraugli `distance` (0: lossless).
    Its reference is djxl's output converted by Pillow from the profile djxl embeds, which
    states the colour space djxl wrote (for a lossy file, the one libjxl turned XYB into)."""
    with tempfile.TemporaryDirectory() as folder:
        source, decoded = os.path.join(folder, "in.png"), os.path.join(folder, "out.png")
        image.save(source, icc_profile=icc)
        path = os.path.join(OUT, name)
        subprocess.run(["cjxl", "--num_threads=0", "-d", str(distance), source, path], check=True, capture_output=True)
        subprocess.run(["djxl", "--num_threads=0", path, decoded], check=True, capture_output=True)
        reference = Image.open(decoded)
        reference.load()
        written = reference.info.get("icc_profile")
        assert written, f"{name}: djxl wrote no profile"
        save_reference(name, to_srgb(reference.convert(image.mode), written))


def main():
    os.makedirs(OUT, exist_ok=True)
    green = Image.new("RGB", (8, 8), (0, 255, 0))
    # A profile that swaps red and green: a green pixel tagged with it is red.
    pillow_fixture("swapped-green.png", green, profile("SwappedRedAndGreen.icc"))
    pillow_fixture("swapped-green.jpg", green, profile("SwappedRedAndGreen.icc"), quality=100, subsampling=0)
    pillow_fixture("gradient-adobergb.png", gradient(), profile("AdobeRGB1998.icc"))
    pillow_fixture("gradient-prophoto-alpha.png", gradient(alpha=True), profile("ProPhotoRGB.icc"))
    pillow_fixture("gradient-adobergb.jpg", gradient(), profile("AdobeRGB1998.icc"), quality=95)
    pillow_fixture("gradient-widegamut.webp", gradient(), profile("WideGamutRGB.icc"), lossless=True)
    tool_fixture("gradient-adobergb.avif", gradient(), profile("AdobeRGB1998.icc"),
                 lambda i, o: ["avifenc", "--lossless", "-s", "8", i, o],
                 lambda i, o: ["avifdec", i, o])
    tool_fixture("gradient-prophoto.heic", gradient(), profile("ProPhotoRGB.icc"),
                 lambda i, o: ["heif-enc", "-L", "-p", "chroma=444", i, "-o", o],
                 lambda i, o: ["heif-convert", i, o])
    jxl_fixture("gradient-adobergb.jxl", gradient(), profile("AdobeRGB1998.icc"), 0)
    jxl_fixture("gradient-widegamut-lossy.jxl", gradient(), profile("WideGamutRGB.icc"), 1)
    jxl_fixture("gradient-prophoto-alpha.jxl", gradient(alpha=True), profile("ProPhotoRGB.icc"), 0)


if __name__ == "__main__":
    main()
