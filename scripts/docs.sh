#!/usr/bin/env bash
# `make docs`: the two DocC catalogs, the WebImage product's (Sources/WebImage/WebImage.docc)
# and the image proxy's (Sources/WebImageServer/WebImageServer.docc), built with warnings as
# errors, so a broken link, a symbol reference that does not resolve or an undocumented
# parameter fails CI. Output: .build/docs/WebImage.doccarchive, WebImageServer.doccarchive.
#
# Why not `swift package generate-documentation` (swift-docc-plugin)? The WebImage target only
# re-exports WebImageCore, WebImageCodecs and WebImageHTTP, and the symbol graph SwiftPM makes
# for it holds just the few declarations of its own: the articles could link none of the types a
# user of `import WebImage` sees. swift-symbolgraph-extract can fold re-exported modules into the
# module's graph (-experimental-allowed-reexported-modules), which the plugin cannot ask for; so
# this script builds the module, extracts its graph with that flag, and runs docc itself.
#
# The same graphs are the public API's record: scripts/api.py compares them with api/*.txt, the
# committed baseline, and fails on any difference the commit did not also record there.
#
#   scripts/docs.sh           both catalogs, then the API check
#   scripts/docs.sh --graphs  the symbol graphs alone (for scripts/api.py count|write|check)
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
DOCC=${DOCC:-$(command -v docc || echo "$(dirname "$(readlink -f "$(command -v "$SWIFT")")")/docc")}
out=.build/docs
graphs=$out/symbol-graphs

graphs_only=false
[ "${1:-}" = --graphs ] && graphs_only=true

"$SWIFT" build --target WebImage
"$SWIFT" build --target WebImageServer
"$SWIFT" build --target WebImageGTK
bin=$("$SWIFT" build --show-bin-path)

# What loading the module needs: the C modules' maps (ours and the dependencies') and the
# dependencies' C headers.
clang_args=()
# A `NAME-tool.build` folder is the same module built for a build tool (a package plugin's
# executable): its map defines the module again, which clang refuses.
for map in Sources/C/*/module.modulemap "$bin"/*.build/module.modulemap; do
  case $map in *-tool.build/*) continue ;; esac
  clang_args+=(-Xcc "-fmodule-map-file=$PWD/${map#$PWD/}")
done
while IFS= read -r include; do clang_args+=(-Xcc "-I$PWD/$include"); done \
  < <(find .build/checkouts Sources -type d -name include -not -path '*/Tests/*')
# System libraries whose headers are not in the default paths (librsvg's include glib's,
# cairo's and gdk-pixbuf's): the flags SwiftPM takes from their pkg-config files.
for package in librsvg-2.0 gtk4; do
  for flag in $(pkg-config --cflags-only-I "$package"); do clang_args+=(-Xcc "$flag"); done
done

# graph MODULE [REEXPORTED]: the module's symbol graph, with the re-exported modules folded in.
graph() {
  local module=$1 reexported=${2:-}
  local graph_dir=$graphs/$module
  local reexport=()
  [ -n "$reexported" ] && reexport=(-experimental-allowed-reexported-modules="$reexported")
  rm -rf "$graph_dir" && mkdir -p "$graph_dir"
  "$SWIFT" symbolgraph-extract -module-name "$module" -target "$(uname -m)-unknown-linux-gnu" \
    -I "$bin/Modules" -output-dir "$graph_dir" -minimum-access-level public -skip-inherited-docs \
    "${reexport[@]}" "${clang_args[@]}"
}

# catalog MODULE: its catalog over its graph.
catalog() {
  local module=$1 graph_dir=$graphs/$1
  "$DOCC" convert "Sources/$module/$module.docc" \
    --additional-symbol-graph-dir "$graph_dir" \
    --fallback-display-name "$module" --fallback-bundle-identifier "swift-web-image.$module" \
    --output-path "$out/$module.doccarchive" \
    --warnings-as-errors
  echo "docs: $out/$module.doccarchive"
}

graph WebImage WebImageCore,WebImageCodecs,WebImageHTTP
graph WebImageServer
graph WebImageS3
graph WebImageGTK
if $graphs_only; then exit 0; fi

catalog WebImage
catalog WebImageServer
python3 scripts/api.py check
