#!/usr/bin/env bash
# Installs the benchmark peers when they are missing: Pillow, pyvips (with its self-contained
# libvips wheel), thumbor and opentelemetry-proto from PyPI; from Debian nginx (the origin of the pipeline
# benchmarks) with its image_filter module, wrk (the proxy's load) and libspng. Quiet when
# everything is present.
set -euo pipefail
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
export DEBIAN_FRONTEND=noninteractive

# Debian packages, with the package lists updated once if the first try fails.
apt_install() {
    $sudo_cmd apt-get install -y -q --no-install-recommends "$@" >/dev/null 2>&1 \
        || { $sudo_cmd apt-get update -q >/dev/null && $sudo_cmd apt-get install -y -q --no-install-recommends "$@" >/dev/null; }
}

if ! python3 -c 'import PIL, pyvips' 2>/dev/null; then
    echo "bench-deps: installing Pillow and pyvips from PyPI" >&2
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore pillow pyvips pyvips-binary
fi
# Debian's libvips (with Debian's libheif, so HEIC decodes): the formats group's reference, which
# pyvips loads instead of the wheel's (Benchmarks/scripts/formats_peers.py); numpy for its DSSIM.
if ! python3 -c 'import ctypes, numpy; ctypes.CDLL("libvips.so.42")' 2>/dev/null; then
    echo "bench-deps: installing libvips42 from Debian and numpy from PyPI" >&2
    apt_install libvips42
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore numpy
fi
if ! command -v thumbor >/dev/null 2>&1; then
    echo "bench-deps: installing thumbor from PyPI" >&2
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore thumbor
fi
# The tracing group's OTLP receiver (Tests/Fixtures/otlp-receiver.py) decodes with it.
if ! python3 -c 'import opentelemetry.proto' 2>/dev/null; then
    echo "bench-deps: installing opentelemetry-proto from PyPI" >&2
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore opentelemetry-proto
fi
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    echo "bench-deps: installing nginx from Debian" >&2
    apt_install nginx-light
    # The package starts a system-wide nginx on port 80; the benchmarks run their own.
    $sudo_cmd nginx -s stop >/dev/null 2>&1 || true
fi
if ! command -v wrk >/dev/null 2>&1 || [ ! -e /usr/lib/nginx/modules/ngx_http_image_filter_module.so ]; then
    echo "bench-deps: installing wrk and nginx's image_filter module from Debian" >&2
    apt_install wrk libnginx-mod-http-image-filter
    $sudo_cmd nginx -s stop >/dev/null 2>&1 || true
fi
# libspng, for the PNG decoders' comparison of the cold group (Benchmarks/scripts/png_decoders.c).
if [ ! -e /usr/include/spng.h ]; then
    echo "bench-deps: installing libspng-dev from Debian" >&2
    apt_install libspng-dev
fi
