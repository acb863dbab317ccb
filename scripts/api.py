#!/usr/bin/env python3
"""The public API's baseline: every public declaration of the library products, one a line.

    scripts/api.py count   the declarations per module (deprecated ones apart)
    scripts/api.py write   record the surface in api/<graph>.txt
    scripts/api.py check   fail when the surface differs from api/ (CI, in `make docs`)

It reads the symbol graphs that `scripts/docs.sh --graphs` extracts (.build/docs/symbol-graphs):
WebImage's with WebImageCore, WebImageCodecs and WebImageHTTP folded in (the `WebImage`
product), WebImageServer, WebImageS3 and WebImageGTK. A line is the module a declaration is
written in, its kind, its path and its declaration as the compiler prints it, so a renamed
parameter, a changed type or a new default shows in the diff. Members the compiler synthesizes
(a protocol's default implementations) are left out; they follow from the declarations that
are in.

How the count counts: each such line is one declaration; a deprecated one (an `@available`
with `deprecated`) is counted apart, since it is on its way out. `count` also gives the
declarations written `public` in the sources (the measure issue 26 set its target in: enum cases
and members of extensions declared `public extension` have no keyword of their own), again
without the deprecated ones.

Every change to the surface is deliberate: a commit that changes it runs `scripts/api.py
write` and commits api/ beside the change, so that review sees the surface's diff, and the
CHANGELOG says why.
"""
import collections
import difflib
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
GRAPHS = ROOT / ".build/docs/symbol-graphs"
BASELINE = ROOT / "api"
PRODUCTS = ["WebImage", "WebImageServer", "WebImageS3", "WebImageGTK"]


def declarations(product):
    """(module, line, deprecated) for each public declaration in the product's graph."""
    path = GRAPHS / product / f"{product}.symbols.json"
    if not path.exists():
        sys.exit(f"api: no symbol graph at {path.relative_to(ROOT)}; run scripts/docs.sh --graphs first")
    graph = json.loads(path.read_text())
    result = []
    for symbol in graph["symbols"]:
        if "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
            continue
        uri = symbol.get("location", {}).get("uri", "")
        if "/Sources/" not in uri:
            continue
        module = uri.split("/Sources/", 1)[1].split("/", 1)[0]
        deprecated = any("deprecated" in item or item.get("isUnconditionallyDeprecated")
                         for item in symbol.get("availability", []))
        declaration = "".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", []))
        declaration = " ".join(declaration.split())
        path = ".".join(symbol["pathComponents"])
        kind = symbol["kind"]["identifier"].removeprefix("swift.")
        line = f"{module} {kind} {path}: {declaration}" + (" [deprecated]" if deprecated else "")
        result.append((module, line, deprecated))
    return sorted(result, key=lambda item: item[1])


def surface(product):
    return "".join(line + "\n" for _, line, _ in declarations(product))


MODULES = {"WebImage": ["WebImageCore", "WebImageCodecs", "WebImageHTTP", "WebImage"],
           "WebImageServer": ["WebImageServer"], "WebImageS3": ["WebImageS3"], "WebImageGTK": ["WebImageGTK"]}
PUBLIC = re.compile(r"^\s*(@[A-Za-z_]+(\([^)]*\))?\s+)*public (?!extension|import)")


def written_public(module):
    """(declarations, deprecated ones) written `public` in the module's sources."""
    declared = deprecated = 0
    for path in sorted((ROOT / "Sources" / module).rglob("*.swift")):
        lines = path.read_text().split("\n")
        for index, line in enumerate(lines):
            if PUBLIC.match(line):
                if "deprecated" in "\n".join(lines[max(0, index - 3):index + 1]):
                    deprecated += 1
                else:
                    declared += 1
    return declared, deprecated


def count():
    print("declarations in the symbol graphs:")
    total = 0
    for product in PRODUCTS:
        modules = collections.Counter()
        deprecated = collections.Counter()
        for module, _, is_deprecated in declarations(product):
            (deprecated if is_deprecated else modules)[module] += 1
        for module in sorted(modules.keys() | deprecated.keys()):
            print(f"{product:15} {module:15} {modules[module]:5}  (+{deprecated[module]} deprecated)")
        print(f"{product:15} {'all':15} {sum(modules.values()):5}  (+{sum(deprecated.values())} deprecated)")
        total += sum(modules.values())
    print(f"{'all products':31} {total:5}")
    print("declarations written `public` in the sources:")
    for product, modules in MODULES.items():
        sums = [written_public(module) for module in modules]
        for module, (declared, deprecated) in zip(modules, sums):
            print(f"{product:15} {module:15} {declared:5}  (+{deprecated} deprecated)")
        print(f"{product:15} {'all':15} {sum(d for d, _ in sums):5}  (+{sum(d for _, d in sums)} deprecated)")


def write():
    BASELINE.mkdir(exist_ok=True)
    for product in PRODUCTS:
        (BASELINE / f"{product}.txt").write_text(surface(product))
    print(f"api: wrote {', '.join(f'api/{p}.txt' for p in PRODUCTS)}")


def check():
    failed = False
    for product in PRODUCTS:
        recorded_path = BASELINE / f"{product}.txt"
        recorded = recorded_path.read_text() if recorded_path.exists() else ""
        current = surface(product)
        if recorded != current:
            failed = True
            diff = difflib.unified_diff(recorded.splitlines(), current.splitlines(),
                                        f"api/{product}.txt (recorded)", f"{product} (as built)", lineterm="", n=0)
            print("\n".join(diff))
    if failed:
        print("api: the public API differs from the baseline in api/. If the change is meant, run "
              "`bash scripts/docs.sh --graphs && python3 scripts/api.py write`, commit api/ with it and "
              "say why in the CHANGELOG.", file=sys.stderr)
        sys.exit(1)
    print(f"api: the public API matches api/ ({', '.join(PRODUCTS)})")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "check"
    {"count": count, "write": write, "check": check}.get(command, lambda: sys.exit(__doc__))()
