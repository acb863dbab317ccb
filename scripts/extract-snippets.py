#!/usr/bin/env python3
"""Extracts every Swift example of the documentation into the `WebImageSnippets` target, so
that building it (which `make test` does) compiles them all against the public API.

Sources of examples:
  - README.md and the Markdown files of the DocC catalog (Sources/**/*.docc/**/*.md);
  - DocC comments (`///`) in Sources/WebImageCore, WebImageCodecs, WebImageHTTP, WebImage and
    WebImageServer, for public declarations only (an internal type's example cannot be
    written against the public API, and DocC does not publish it).

Each ```swift block becomes `func snippet_<source>_<n>() async throws { ... }` in
Tests/Snippets/Generated/<source>.swift, so blocks are independent and may `try` and `await`.
`#sourceLocation` lines point every compiler diagnostic at the block's line in the
documentation it came from. Names the examples take for granted (`url`, `manager`, `bytes`,
`show(_:)`, ...) are declared once in Tests/Snippets/Preamble.swift.

Names an example binds at its top level (`let x = ...`) are used once after it (`_ = x`), so
an example may show a value it does not go on to use without a compiler warning.

A block whose top level declares an `extension` or a `protocol` (which Swift does not allow
inside a function) is emitted at file scope instead, its statements-free body unchanged.

Package manifests: a fence written ```swift manifest is a whole Package.swift; it is not
compiled into the target (a manifest is not a program), but `--check-manifests` evaluates each
with `swift package dump-package` in a scratch folder, which `make test` runs too.

A complete program: a fence written ```swift program (the README's first example, at most one
in all the documentation) is written as it is to Tests/SnippetProgram/main.swift, the one file of
an executable target that depends on the WebImage product alone, with no preamble: it compiles
only if it compiles when pasted into an empty package's main.swift.

Opting out: a fence written ```swift ignore is shown as Swift by DocC but not compiled. Keep
these rare: only for fragments that are not code of a program (a Package.swift excerpt).

Usage: extract-snippets.py           regenerates Tests/Snippets/Generated (writes changed files only)
       extract-snippets.py --check   exits 1 when a generated file is missing, stale or extra
       extract-snippets.py --stats   prints how many blocks were compiled and opted out
       extract-snippets.py --check-manifests   evaluates every ```swift manifest block
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "Snippets", "Generated")
PROGRAM = os.path.join(ROOT, "Tests", "SnippetProgram", "main.swift")
MODULES = ["WebImageCore", "WebImageCodecs", "WebImageHTTP", "WebImage", "WebImageServer", "WebImageS3", "WebImageGTK"]

FENCE = re.compile(r"^(\s*)(`{3,})\s*([A-Za-z0-9_+-]*)\s*(.*?)\s*$")
DECL_KEYWORDS = re.compile(
    r"^\s*(?:(?:@\w+(?:\([^)]*\))?\s+)*)"
    r"(?:(?:public|open|internal|private|fileprivate|package|final|static|class|override|"
    r"mutating|nonmutating|nonisolated|indirect|convenience|required|lazy|weak|unowned|"
    r"consuming|borrowing|dynamic|distributed)\s+)*"
    r"(?:func|var|let|init|deinit|subscript|case|struct|class|enum|actor|protocol|extension|"
    r"typealias|associatedtype|macro|operator)\b"
)


class Block:
    def __init__(self, source, line, lines, info):
        self.source = source  # path relative to ROOT
        self.line = line      # 1-based line of the first code line
        self.lines = lines
        self.info = info      # words after `swift` on the fence


def markdown_blocks(path, rel):
    """```swift blocks of a Markdown file."""
    blocks = []
    with open(path, encoding="utf-8") as f:
        text = f.read().split("\n")
    i = 0
    while i < len(text):
        m = FENCE.match(text[i])
        if m and m.group(2):
            indent, ticks, lang, info = m.groups()
            start = i + 1
            j = start
            while j < len(text) and not text[j].strip().startswith(ticks):
                j += 1
            if lang == "swift":
                body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in text[start:j]]
                blocks.append(Block(rel, start + 1, body, info.split()))
            i = j + 1
        else:
            i += 1
    return blocks


def is_public_context(text, decl_index):
    """Whether the declaration at text[decl_index] is public API: marked public/open, or a
    requirement of a public protocol, or a member of a `public extension`."""
    decl = text[decl_index]
    if re.search(r"\b(public|open)\b", decl):
        return True
    if re.search(r"\b(private|fileprivate|internal|package)\b", decl):
        return False
    indent = len(decl) - len(decl.lstrip())
    if indent == 0:
        return False
    # The enclosing declaration: the nearest line above with less indentation that is code.
    for k in range(decl_index - 1, -1, -1):
        line = text[k]
        stripped = line.strip()
        if not stripped or stripped.startswith("//") or stripped.startswith("@"):
            continue
        if len(line) - len(line.lstrip()) < indent:
            return bool(re.search(r"\bpublic\s+(protocol|extension)\b", line))
    return False


def comment_blocks(path, rel):
    """```swift blocks of the `///` comments of a Swift file, with whether each documents a
    public declaration."""
    with open(path, encoding="utf-8") as f:
        text = f.read().split("\n")
    found = []
    i = 0
    while i < len(text):
        if not text[i].lstrip().startswith("///"):
            i += 1
            continue
        # One doc comment: consecutive /// lines.
        start = i
        while i < len(text) and text[i].lstrip().startswith("///"):
            i += 1
        comment = text[start:i]
        # The declaration it documents: the next line that is neither an attribute nor blank.
        k = i
        while k < len(text) and (not text[k].strip() or text[k].strip().startswith("@")
                                 or text[k].strip().startswith("//")):
            k += 1
        public = k < len(text) and DECL_KEYWORDS.match(text[k]) is not None and is_public_context(text, k)
        content = []
        for line in comment:
            s = line.lstrip()[3:]
            content.append(s[1:] if s.startswith(" ") else s)
        j = 0
        while j < len(content):
            m = FENCE.match(content[j])
            if m and m.group(2):
                indent, ticks, lang, info = m.groups()
                b = j + 1
                e = b
                while e < len(content) and not content[e].strip().startswith(ticks):
                    e += 1
                if lang == "swift":
                    body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in content[b:e]]
                    found.append((Block(rel, start + b + 1, body, info.split()), public))
                j = e + 1
            else:
                j += 1
    return found


def collect():
    """(blocks to compile, opted out, internal) per source, in a stable order."""
    sources = []
    sources.append(("README.md", markdown_blocks(os.path.join(ROOT, "README.md"), "README.md"), 0))
    for module in MODULES:
        base = os.path.join(ROOT, "Sources", module)
        for dirpath, dirnames, filenames in sorted(os.walk(base)):
            dirnames.sort()
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, ROOT)
                if name.endswith(".swift"):
                    pairs = comment_blocks(path, rel)
                    blocks = [b for b, public in pairs if public]
                    sources.append((rel, blocks, len(pairs) - len(blocks)))
                elif name.endswith(".md") and ".docc" in rel:
                    sources.append((rel, markdown_blocks(path, rel), 0))
    return sources


def identifier(rel):
    rel = re.sub(r"^Sources/", "", rel)
    rel = re.sub(r"\.(swift|md)$", "", rel)
    rel = rel.replace(".docc", "")
    return re.sub(r"[^A-Za-z0-9]+", "_", rel).strip("_")


TOP_LEVEL_ONLY = re.compile(r"^(?:public\s+|@\w+\s+)*(extension|protocol)\b")


def split_top_level(lines):
    """(file-scope declarations, the rest) of a block: column-0 `extension`/`protocol`
    declarations, each up to the line where its braces close, go to file scope."""
    file_scope, rest = [], []
    i = 0
    while i < len(lines):
        if TOP_LEVEL_ONLY.match(lines[i]):
            depth = 0
            j = i
            while True:
                depth += lines[j].count("{") - lines[j].count("}")
                j += 1
                if (depth <= 0 and "{" in "".join(lines[i:j])) or j >= len(lines):
                    break
            file_scope.append((i, lines[i:j]))
            i = j
        else:
            rest.append((i, lines[i]))
            i += 1
    return file_scope, rest


BINDING = re.compile(r"^(?:guard\s+)?(?:let|var)\s+(\(?[A-Za-z_][A-Za-z0-9_, ]*\)?)\s*[:=]")


def consumed_names(lines):
    """The names an example binds at its top level, which the generated function then uses
    (`_ = name`): an example may show a value without using it, and the compiler would warn
    that it was never used. Nothing is added after a final `return` or `throw`."""
    code = [l for l in lines if l.strip() and not l.strip().startswith("//")]
    if code and re.match(r"^(return|throw)\b", code[-1]):
        return []
    names = []
    for line in lines:
        m = BINDING.match(line)
        if m:
            for name in m.group(1).strip("()").split(","):
                name = name.strip()
                if name and name != "_" and name not in names:
                    names.append(name)
    return names


def render(rel, blocks):
    ident = identifier(rel)
    out = [
        f"// Generated by scripts/extract-snippets.py from {rel}: do not edit.",
        "// Each function is one ```swift block of the documentation; `make test` compiles them.",
        "import Foundation",
        "import WebImage",
        "import WebImageServer",
    ]
    # WebImageS3 is its own product (not re-exported by WebImage): only its examples import it.
    if rel.startswith("Sources/WebImageS3/"):
        out.append("import WebImageS3")
    # So is WebImageGTK, whose examples call GTK's C API too.
    if rel.startswith("Sources/WebImageGTK/"):
        out.append("import CGTK")
        out.append("import WebImageGTK")
    out.append("")
    for n, block in enumerate(blocks, 1):
        code = [l for l in block.lines]
        imports = [l for l in code if re.match(r"^import\s+\w+\s*$", l)]
        code = ["" if re.match(r"^import\s+\w+\s*$", l) else l for l in code]
        file_scope, rest = split_top_level(code)
        for offset, decl in file_scope:
            out.append(f'#sourceLocation(file: "{rel}", line: {block.line + offset})')
            out.extend(decl)
            out.append("#sourceLocation()")
        out.append(f"func snippet_{ident}_{n}() async throws {{")
        previous = None
        for offset, line in rest:
            if previous is None or offset != previous + 1:
                out.append(f'#sourceLocation(file: "{rel}", line: {block.line + offset})')
            out.append(("    " + line) if line.strip() else "")
            previous = offset
        out.append("#sourceLocation()")
        names = consumed_names([line for _, line in rest])
        if names:
            out.append(f"    _ = ({', '.join(names)})" if len(names) > 1 else f"    _ = {names[0]}")
        out.append("}")
        out.append("")
        for imp in imports:
            module = imp.split()[1]
            if module not in ("Foundation", "WebImage", "WebImageServer"):
                out.insert(5, imp)
    return "\n".join(out).rstrip("\n") + "\n"


def render_program(block):
    """main.swift of the program target: the ```swift program block as it is, or an empty
    program when the documentation has none."""
    out = ["// Generated by scripts/extract-snippets.py: do not edit. The documentation's one",
           "// ```swift program block, compiled alone with no preamble (a complete program)."]
    if block is None:
        return "\n".join(out) + "\n"
    out.append(f'#sourceLocation(file: "{block.source}", line: {block.line})')
    out.extend(block.lines)
    out.append("#sourceLocation()")
    return "\n".join(out) + "\n"


def check_manifests(manifests):
    """Evaluates each manifest block in a scratch package; 1 if any fails."""
    swift = os.environ.get("SWIFT", "swift")
    failed = 0
    for b in manifests:
        with tempfile.TemporaryDirectory() as scratch:
            with open(os.path.join(scratch, "Package.swift"), "w", encoding="utf-8") as f:
                f.write("\n".join(b.lines) + "\n")
            run = subprocess.run([swift, "package", "dump-package", "--package-path", scratch],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                failed += 1
                print(f"{b.source}:{b.line}: the Package.swift example does not evaluate:", file=sys.stderr)
                print(run.stderr or run.stdout, file=sys.stderr)
    if not failed:
        print(f"extract-snippets: {len(manifests)} Package.swift example(s) evaluate")
    return 1 if failed else 0


def main():
    check = "--check" in sys.argv
    stats = "--stats" in sys.argv
    wanted = {}
    compiled = opted_out = internal = 0
    opt_outs = []
    manifests = []
    programs = []
    for rel, blocks, internal_count in collect():
        internal += internal_count
        kept = []
        for b in blocks:
            if "ignore" in b.info:
                opted_out += 1
                opt_outs.append(f"{b.source}:{b.line - 1}")
            elif "manifest" in b.info:
                manifests.append(b)
            elif "program" in b.info:
                programs.append(b)
            else:
                kept.append(b)
        compiled += len(kept)
        if kept:
            wanted[identifier(rel) + ".swift"] = render(rel, kept)
    if len(programs) > 1:
        places = ", ".join(f"{b.source}:{b.line - 1}" for b in programs)
        print(f"extract-snippets: more than one ```swift program block ({places}); there is one program target", file=sys.stderr)
        return 1
    compiled += len(programs)
    if "--check-manifests" in sys.argv:
        return check_manifests(manifests)
    if stats:
        print(f"snippets: {compiled} compiled, {len(manifests)} Package.swift evaluated, "
              f"{opted_out} opted out (```swift ignore), {internal} on internal declarations not compiled")
        for o in opt_outs:
            print(f"  opted out: {o}")
        return 0
    present = set(os.listdir(OUT)) if os.path.isdir(OUT) else set()
    stale = []
    program = render_program(programs[0] if programs else None)
    old_program = open(PROGRAM, encoding="utf-8").read() if os.path.exists(PROGRAM) else None
    if old_program != program:
        stale.append("../SnippetProgram/main.swift")
        if not check:
            os.makedirs(os.path.dirname(PROGRAM), exist_ok=True)
            with open(PROGRAM, "w", encoding="utf-8") as f:
                f.write(program)
    for name, text in sorted(wanted.items()):
        path = os.path.join(OUT, name)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != text:
            stale.append(name)
            if not check:
                os.makedirs(OUT, exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    extra = sorted(n for n in present if n.endswith(".swift") and n not in wanted)
    if not check:
        for name in extra:
            os.remove(os.path.join(OUT, name))
        return 0
    if stale or extra:
        for name in stale:
            print(f"extract-snippets: Tests/Snippets/Generated/{name} is not up to date", file=sys.stderr)
        for name in extra:
            print(f"extract-snippets: Tests/Snippets/Generated/{name} has no source any more", file=sys.stderr)
        print("extract-snippets: run `make snippets` and commit the result", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
