#!/usr/bin/env python3
"""Checks README.md against what it promises a newcomer:

  - it is at most 12,288 bytes (a five-minute read; the rest is in the DocC catalogs);
  - its install lists are scripts/deps.sh's: the ```sh block that starts "# To build" installs
    exactly `build_packages`, the one that starts "# To run" exactly `runtime_packages`;
  - with --binary PATH (a built `webimage`), every shared library the binary links comes from
    a package of the run list, one of their dependencies, or Debian's base system, so that a
    deployment image built from the README's list starts.

Exits 1 with the differences.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = 12288


def deps_lists():
    script = 'source scripts/deps.sh --lists; echo "${build_packages[*]}"; echo "${runtime_packages[*]}"'
    out = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    build, runtime = out.strip().split("\n")
    return build.split(), runtime.split()


def readme_list(text, heading):
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        if block.startswith(heading):
            command = block.replace("\\\n", " ")
            m = re.search(r"apt-get install\s+([^\n]*)", command)
            if m:
                return [w for w in m.group(1).split() if not w.startswith("-")]
    return None


def package_of(path):
    out = subprocess.run(["dpkg", "-S", os.path.realpath(path)], capture_output=True, text=True)
    return out.stdout.split(":")[0].strip() if out.returncode == 0 else None


def closure(packages):
    """The installed packages the given ones depend on, recursively."""
    seen, todo = set(), list(packages)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        out = subprocess.run(["dpkg-query", "-W", "-f", "${Depends},${Pre-Depends}", name],
                             capture_output=True, text=True).stdout
        for item in out.split(","):
            for alternative in item.split("|"):
                dep = re.sub(r"\(.*?\)", "", alternative).strip().split(":")[0]
                if dep:
                    todo.append(dep)
    return seen


def base_system(name):
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Priority} ${Essential}", name], capture_output=True, text=True).stdout
    return out.startswith("required") or out.startswith("important") or out.endswith("yes")


def check_binary(binary, runtime):
    problems = []
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]",
                        subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout)
    resolved = {}
    for line in subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", line) or re.match(r"\s*((/\S+))", line)
        if m:
            resolved[m.group(1)] = m.group(2)
            resolved[os.path.basename(m.group(1))] = m.group(2)
    covered = closure(runtime)
    for library in needed:
        path = resolved.get(library)
        if path is None:
            problems.append(f"{binary} links {library}, which ldd does not find")
            continue
        package = package_of(path)
        if package is None:
            continue  # the Swift runtime, from the toolchain (swift:slim or --static-swift-stdlib)
        if package not in covered and not base_system(package):
            problems.append(f"{binary} links {library} from {package}, which the README's run list does not install")
    return problems, len(needed)


def main():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    problems = []
    size = len(text.encode("utf-8"))
    if size > LIMIT:
        problems.append(f"README.md is {size} bytes; at most {LIMIT} (move detail into the DocC catalogs)")
    build, runtime = deps_lists()
    for heading, expected in (("# To build", build), ("# To run", runtime)):
        listed = readme_list(text, heading)
        if listed is None:
            problems.append(f"README.md has no ```sh block starting with {heading!r} and an apt-get install")
        elif listed != expected:
            missing = [p for p in expected if p not in listed]
            extra = [p for p in listed if p not in expected]
            problems.append(f"README.md's {heading[2:]!r} list differs from scripts/deps.sh: missing {missing}, not in deps.sh {extra}"
                            + ("" if missing or extra else " (order)"))
    checked = ""
    if "--binary" in sys.argv:
        binary = sys.argv[sys.argv.index("--binary") + 1]
        binary_problems, count = check_binary(binary, runtime)
        problems += binary_problems
        checked = f", and the {count} libraries webimage links"
    if problems:
        for problem in problems:
            print("check-readme: " + problem, file=sys.stderr)
        return 1
    print(f"check-readme: README.md is {size} bytes; its install lists match scripts/deps.sh{checked}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
