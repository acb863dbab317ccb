#!/usr/bin/env bash
# Builds and runs the RGBA -> YUV 4:2:0 comparison (main.c: wi_webp.c's SSE2 conversion beside
# libyuv's ABGRToI420 and libwebp's WebPPictureImportRGBA; docs/benchmarks.md, "RGBA to YUV for
# the WebP encoder"). From the repository's root:
#   make bench-yuv [PHOTO=file.jpg|file.png] [ROUNDS=30]
#   bash Benchmarks/rgba-to-yuv/run.sh [file.jpg|file.png] [rounds]
# C only (no Swift build): a C compiler and the -dev packages `make deps` installs.
set -euo pipefail
cd "$(dirname "$0")/../.."
photo="${1:-${PHOTO:-../shared/corpus/photos/autumn-2560x1600-progressive.jpg}}"
rounds="${2:-${ROUNDS:-30}}"
out="${BENCH_OUT:-bench-results}"
mkdir -p "$out"
${CC:-cc} -O2 -std=gnu11 -I Sources/C/CCodecShims/include Benchmarks/rgba-to-yuv/main.c \
  -o "$out/rgba-to-yuv" -lyuv -lwebp -lturbojpeg -lpng -lm
echo "$(${CC:-cc} --version | head -1); $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$out/rgba-to-yuv" "$photo" "$rounds"
