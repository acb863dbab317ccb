#!/usr/bin/env bash
# `make docs`: the WebImage product's DocC documentation (Sources/WebImage/WebImage.docc),
# built with warnings as errors, so a broken link, a symbol reference that does not resolve or
# an undocumented parameter fails CI. Output: .build/docs/WebImage.doccarchive.
#
# Why not `swift package generate-documentation` (swift-docc-plugin)? The WebImage target only
# re-exports WebImageCore, WebImageCodecs and WebImageHTTP, and the symbol graph SwiftPM makes
# for it holds just the few declarations of its own: the articles could link none of the types a
# user of `import WebImage` sees. swift-symbolgraph-extract can fold re-exported modules into the
# module's graph (-experimental-allowed-reexported-modules), which the plugin cannot ask for; so
# this script builds the module, extracts its graph with that flag, and runs docc itself.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
DOCC=${DOCC:-$(command -v docc || echo "$(dirname "$(readlink -f "$(command -v "$SWIFT")")")/docc")}
out=.build/docs
graphs=$out/symbol-graphs

"$SWIFT" build --target WebImage
bin=$("$SWIFT" build --show-bin-path)

# What loading the module needs: the C modules' maps (ours and the dependencies') and the
# dependencies' C headers.
clang_args=()
for map in Sources/C*/module.modulemap "$bin"/*.build/module.modulemap; do
  clang_args+=(-Xcc "-fmodule-map-file=$PWD/${map#$PWD/}")
done
while IFS= read -r include; do clang_args+=(-Xcc "-I$PWD/$include"); done \
  < <(find .build/checkouts Sources -type d -name include -not -path '*/Tests/*')
# System libraries whose headers are not in the default paths (librsvg's include glib's,
# cairo's and gdk-pixbuf's): the flags SwiftPM takes from their pkg-config files.
for package in librsvg-2.0; do
  for flag in $(pkg-config --cflags-only-I "$package"); do clang_args+=(-Xcc "$flag"); done
done

rm -rf "$graphs" && mkdir -p "$graphs"
"$SWIFT" symbolgraph-extract -module-name WebImage -target "$(uname -m)-unknown-linux-gnu" \
  -I "$bin/Modules" -output-dir "$graphs" -minimum-access-level public -skip-inherited-docs \
  -experimental-allowed-reexported-modules=WebImageCore,WebImageCodecs,WebImageHTTP \
  "${clang_args[@]}"

"$DOCC" convert Sources/WebImage/WebImage.docc \
  --additional-symbol-graph-dir "$graphs" \
  --fallback-display-name WebImage --fallback-bundle-identifier swift-web-image.WebImage \
  --output-path "$out/WebImage.doccarchive" \
  --warnings-as-errors
echo "docs: $out/WebImage.doccarchive"
