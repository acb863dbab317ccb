#!/usr/bin/env python3
"""The colour-management fixtures (Tests/Fixtures/color) and their references.

Each input is a small image tagged with a real ICC profile from Debian's colord-data, written by
the format's own encoder (Pillow for PNG, JPEG and WebP; avifenc for AVIF; heif-enc for HEIC; cjxl
for JPEG XL).
Each reference, `NAME.srgb.png` (no profile), is what an independent pipeline makes of the input:
the format's reference decoder (Pillow; avifdec; heif-convert; djxl), then Pillow's ImageCms
(lcms2) from the embedded profile to sRGB, perceptual intent. The tests decode the inputs with
our decoders and compare. Run again only to change the fixtures; commit what it writes.

Usage: scripts/make-color-fixtures.py   (needs colord-data, libgs-common, Pillow, libavif-bin,
libheif-examples, libjxl-tools)
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
    """Pillow's (lcms2's) conversion of `image`'s values from `icc` to sRGB (grey to RGB)."""
    source = ImageCms.ImageCmsProfile(io.BytesIO(icc))
    srgb = ImageCms.createProfile("sRGB")
    converted = ImageCms.profileToProfile(image, source, srgb, renderingIntent=ImageCms.Intent.PERCEPTUAL,
                                          outputMode="RGB" if image.mode == "L" else image.mode)
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


def cmyk_fixture(name, image, icc):
    """A CMYK JPEG with its CMYK profile, as print workflows make them: `image` separated from
    sRGB through `icc` (Pillow's ImageCms), saved by Pillow (Adobe's inverted CMYK, with the APP14
    marker); the reference is Pillow's decode converted from `icc` to sRGB."""
    srgb = ImageCms.createProfile("sRGB")
    separated = ImageCms.profileToProfile(image, srgb, ImageCms.ImageCmsProfile(io.BytesIO(icc)),
                                          renderingIntent=ImageCms.Intent.PERCEPTUAL, outputMode="CMYK")
    path = os.path.join(OUT, name)
    separated.save(path, icc_profile=icc, quality=100)
    decoded = Image.open(path)
    decoded.load()
    assert decoded.mode == "CMYK" and decoded.info.get("icc_profile") == icc, f"{name}: not a tagged CMYK JPEG"
    converted = ImageCms.profileToProfile(decoded, ImageCms.ImageCmsProfile(io.BytesIO(icc)), srgb,
                                          renderingIntent=ImageCms.Intent.PERCEPTUAL, outputMode="RGB")
    converted.info.pop("icc_profile", None)
    save_reference(name, converted)


PRIMARIES = {  # H.273 colour primaries: red, green, blue x, y; every white is D65
    1: [(0.640, 0.330), (0.300, 0.600), (0.150, 0.060)],
    9: [(0.708, 0.292), (0.170, 0.797), (0.131, 0.046)],
    12: [(0.680, 0.320), (0.265, 0.690), (0.150, 0.060)],
}


def rgb_to_xyz(primaries, white=(0.3127, 0.3290)):
    import numpy as np
    xyz = np.array([[x / y, 1, (1 - x - y) / y] for x, y in primaries]).T
    w = np.array([white[0] / white[1], 1, (1 - white[0] - white[1]) / white[1]])
    return xyz * np.linalg.solve(xyz, w)


def nclx_to_srgb(image, primaries, gamma=None, white=(0.3127, 0.3290)):
    """The colorimetric conversion (what lcms2's perceptual intent is for matrix-shaper
    profiles) of values in `primaries` (code points, or x, y triples) with the sRGB curve (or
    the power `gamma`) to sRGB, clipped, by the textbook matrices (a Bradford adaptation when
    the white is not D65): an independent reference for the profiles the decoders build."""
    import numpy as np
    v = np.asarray(image.convert("RGB")).astype(np.float64) / 255
    if gamma is None:
        linear = np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)
    else:
        linear = v ** gamma
    source = PRIMARIES[primaries] if isinstance(primaries, int) else primaries
    matrix = np.linalg.inv(rgb_to_xyz(PRIMARIES[1])) @ bradford(white) @ rgb_to_xyz(source, white)
    out = np.clip(linear @ matrix.T, 0, 1)
    encoded = np.where(out <= 0.0031308, out * 12.92, 1.055 * out ** (1 / 2.4) - 0.055)
    return Image.fromarray(np.round(encoded * 255).astype(np.uint8), "RGB")


def bradford(white, target=(0.3127, 0.3290)):
    """The Bradford adaptation from `white` to `target` (identity when they are the same)."""
    import numpy as np
    m = np.array([[0.8951, 0.2664, -0.1614], [-0.7502, 1.7135, 0.0367], [0.0389, -0.0685, 1.0296]])
    xyz = lambda w: np.array([w[0] / w[1], 1, (1 - w[0] - w[1]) / w[1]])
    scale = (m @ xyz(target)) / (m @ xyz(white))
    return np.linalg.inv(m) @ np.diag(scale) @ m


def png_chunk_fixture(name, image, chunks, reference):
    """A PNG carrying colour chunks (cICP, gAMA, cHRM) written by Pillow before the image data."""
    from PIL import PngImagePlugin
    info = PngImagePlugin.PngInfo()
    for kind, data in chunks:
        info.add(kind, data)
    path = os.path.join(OUT, name)
    image.save(path, pnginfo=info)
    save_reference(name, reference(Image.open(path)))


def nclx_fixture(name, image, primaries, encode, decode):
    """An input whose colour space is only its nclx code points (`primaries`, the sRGB curve),
    losslessly coded by the reference encoder; the reference is the reference decoder's values
    (as stored) through nclx_to_srgb."""
    with tempfile.TemporaryDirectory() as folder:
        source, decoded = os.path.join(folder, "in.png"), os.path.join(folder, "out.png")
        image.save(source)
        path = os.path.join(OUT, name)
        subprocess.run(encode(source, path), check=True, capture_output=True)
        subprocess.run(decode(path, decoded), check=True, capture_output=True)
        reference = Image.open(decoded)
        reference.load()
        save_reference(name, nclx_to_srgb(reference, primaries))


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
    # Ghostscript's linear grey profile (libgs-common): grey 128 is sRGB's 188.
    with open("/usr/share/color/icc/ghostscript/ps_gray.icc", "rb") as f:
        grey = f.read()
    pillow_fixture("gradient-gray-linear.jpg", gradient().convert("L"), grey, quality=100)
    pillow_fixture("gradient-gray-linear.png", gradient().convert("L"), grey)
    # Ghostscript's default CMYK profile (Debian's libgs-common), a SWOP-like press.
    with open("/usr/share/color/icc/ghostscript/default_cmyk.icc", "rb") as f:
        cmyk_fixture("gradient-cmyk.jpg", gradient(), f.read())
    tool_fixture("gradient-adobergb.avif", gradient(), profile("AdobeRGB1998.icc"),
                 lambda i, o: ["avifenc", "--lossless", "-s", "8", i, o],
                 lambda i, o: ["avifdec", i, o])
    tool_fixture("gradient-prophoto.heic", gradient(), profile("ProPhotoRGB.icc"),
                 lambda i, o: ["heif-enc", "-L", "-p", "chroma=444", i, "-o", o],
                 lambda i, o: ["heif-convert", i, o])
    # Tagged by nclx code points alone: Display P3 (12) and BT.2020 (9), sRGB curve (13).
    nclx_fixture("gradient-p3-nclx.avif", gradient(), 12,
                 lambda i, o: ["avifenc", "--lossless", "-s", "8", "--cicp", "12/13/0", i, o],
                 lambda i, o: ["avifdec", i, o])
    # PNG's own colour chunks: cICP code points (Display P3), and gAMA with cHRM (Adobe RGB's
    # primaries, a 2.2 gamma), each without an iCCP.
    import struct
    png_chunk_fixture("gradient-p3-cicp.png", gradient(), [(b"cICP", bytes([12, 13, 0, 1]))],
                      lambda im: nclx_to_srgb(im, 12))
    adobe = [(0.64, 0.33), (0.21, 0.71), (0.15, 0.06)]
    chrm = struct.pack(">8I", *[round(v * 100000) for point in [(0.3127, 0.3290)] + adobe for v in point])
    png_chunk_fixture("gradient-adobergb-chrm.png", gradient(), [(b"gAMA", struct.pack(">I", 45455)), (b"cHRM", chrm)],
                      lambda im: nclx_to_srgb(im, adobe, gamma=100000 / 45455))
    # heif-enc 1.15 writes no nclx box whatever its options say, so the HEIF decoder's nclx path
    # is tested on these AVIF files (libheif reads AVIF too).
    nclx_fixture("gradient-bt2020-nclx.avif", gradient(), 9,
                 lambda i, o: ["avifenc", "--lossless", "-s", "8", "--cicp", "9/13/0", i, o],
                 lambda i, o: ["avifdec", i, o])
    jxl_fixture("gradient-adobergb.jxl", gradient(), profile("AdobeRGB1998.icc"), 0)
    jxl_fixture("gradient-widegamut-lossy.jxl", gradient(), profile("WideGamutRGB.icc"), 1)
    jxl_fixture("gradient-prophoto-alpha.jxl", gradient(alpha=True), profile("ProPhotoRGB.icc"), 0)


if __name__ == "__main__":
    main()
