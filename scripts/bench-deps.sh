#!/usr/bin/env bash
# Installs the benchmark peers from PyPI (Pillow, and pyvips with its self-contained libvips
# wheel) when they are missing. Quiet when everything is present.
set -euo pipefail
if python3 -c 'import PIL, pyvips' 2>/dev/null; then exit 0; fi
echo "bench-deps: installing Pillow and pyvips from PyPI" >&2
python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore pillow pyvips pyvips-binary
