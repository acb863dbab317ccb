#!/usr/bin/env bash
# The gallery in a real browser: starts `webimage serve` over Demo/images on a free loopback
# port, loads / in headless Chromium (from Debian, installed when missing), checks that every
# thumbnail loaded (the page counts them on <body data-images-loaded="N/M">), and saves a
# screenshot to docs/gallery.png. Usage: scripts/check-gallery.sh [WEBIMAGE_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."

binary=${1:-}
if [ -z "$binary" ]; then
  swift build --product webimage >/dev/null
  binary="$(swift build --show-bin-path)/webimage"
fi
if ! command -v chromium >/dev/null 2>&1; then
  echo "check-gallery: installing chromium from Debian" >&2
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends chromium >/dev/null
fi

work=$(mktemp -d)
server=""
cleanup() { [ -n "$server" ] && kill -TERM "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

"$binary" serve --port 0 --origin-dir Demo/images --cache-dir "$work/cache" --log-level warning >"$work/out" 2>"$work/err" &
server=$!
for _ in $(seq 1 200); do
  address=$(grep -o -m1 'http://127\.0\.0\.1:[0-9]*' "$work/out" || true)
  [ -n "$address" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$work/err" >&2; exit 1; }
  sleep 0.1
done
[ -n "${address:-}" ] || { echo "check-gallery: the server did not start" >&2; exit 1; }

# A window tall enough that no thumbnail is below the fold (they load lazily); the virtual time
# budget lets the page finish its requests before the DOM is read.
browser=(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1600
         --virtual-time-budget=30000)
# Twice, each with a browser profile of its own (so with an empty HTTP cache): first every
# thumbnail is made (the router's path), then every one is a variant in memory, answered on the
# event loop (CachedVariantHandler).
for pass in made cached; do
  dom=$(timeout 120 "${browser[@]}" --user-data-dir="$work/profile-$pass" --dump-dom "$address/" 2>/dev/null)
  counts=$(grep -o 'data-images-loaded="[0-9]*/[0-9]*"' <<<"$dom" | grep -o '[0-9]*/[0-9]*' || true)
  loaded=${counts%/*}; total=${counts#*/}
  if [ -z "$counts" ] || [ "$total" -eq 0 ] || [ "$loaded" -ne "$total" ]; then
    echo "check-gallery: ${counts:-no count} thumbnails loaded ($pass)" >&2; exit 1
  fi
  # Chromium takes AVIF: every caption names the format and size it was served in.
  described=$(grep -o 'class="served">avif · [0-9.]* KB' <<<"$dom" | wc -l)
  if [ "$described" -ne "$total" ]; then
    echo "check-gallery: $described of $total thumbnails described as AVIF ($pass)" >&2; exit 1
  fi
done
answered=$(curl -s "$address/metrics" | grep -o '^webimage_proxy_event_loop_answers_total [0-9]*' | grep -o '[0-9]*$' || true)
if [ "${answered:-0}" -lt "$total" ]; then
  echo "check-gallery: only ${answered:-0} thumbnails answered from memory on the second load" >&2; exit 1
fi
timeout 120 "${browser[@]}" --user-data-dir="$work/profile-screenshot" --window-size=1280,640 --screenshot="$work/gallery.png" "$address/" >/dev/null 2>&1
mkdir -p docs && cp "$work/gallery.png" docs/gallery.png
echo "check-gallery: $loaded of $total thumbnails loaded in Chromium as AVIF, made then from memory ($answered answered on the event loop); screenshot in docs/gallery.png"
