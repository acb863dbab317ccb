#!/usr/bin/env python3
"""Lists the long functions of Sources/ (issue 26: none over 80 lines, at most 6 over 60).

Every `func`, `init` and `deinit` with a body is measured from the line of its keyword to the
line of its closing brace, inclusive; a nested function is listed on its own as well as counted
in the function around it. Braces are matched on the source with its comments and the contents
of its string literals (single-line, multi-line `\"\"\"`, raw `#"…"#`, interpolations included)
blanked out, so a brace in a string or a comment does not count. Computed properties and
closures are not measured on their own.

    python3 scripts/function-lengths.py             # the functions over 60 lines, longest first
    python3 scripts/function-lengths.py --min 40    # ... over 40
    python3 scripts/function-lengths.py --check     # exit 1 unless the targets hold

--check fails when a function is over --max lines (80) or more than --allowed (6) are over
--min (60).
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def blank(text):
    """`text` with comments and string-literal contents replaced by spaces (newlines kept), so
    that every brace, parenthesis and keyword left is code."""
    out = list(text)
    n = len(text)

    def wipe(start, end):
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    def code(i, closer):
        """Scans code from i; with closer=")" stops after the parenthesis that closes an
        interpolation. Returns the index after the stop."""
        depth = 0
        while i < n:
            c = text[i]
            if text.startswith("//", i):
                j = text.find("\n", i)
                j = n if j < 0 else j
                wipe(i, j)
                i = j
            elif text.startswith("/*", i):
                j, level = i + 2, 1
                while j < n and level:
                    if text.startswith("/*", j):
                        level, j = level + 1, j + 2
                    elif text.startswith("*/", j):
                        level, j = level - 1, j + 2
                    else:
                        j += 1
                wipe(i, j)
                i = j
            elif c == '"' or (c == "#" and re.match(r'#+"', text[i:i + 64])):
                i = string(i)
            elif c == "(":
                depth += 1
                i += 1
            elif c == ")":
                if closer == ")" and depth == 0:
                    return i + 1
                depth -= 1
                i += 1
            else:
                i += 1
        return i

    def string(i):
        """Scans the string literal starting at i (at its hashes or its quote); blanks its
        contents and returns the index after it."""
        hashes = 0
        while text[i + hashes] == "#":
            hashes += 1
        j = i + hashes
        multi = text.startswith('"""', j)
        quote = '"""' if multi else '"'
        j += len(quote)
        end_mark = quote + "#" * hashes
        escape = "\\" + "#" * hashes
        body_start = j
        while j < n:
            if text.startswith(escape, j):
                k = j + len(escape)
                if k < n and text[k] == "(":
                    wipe(body_start, j)
                    j = code(k + 1, ")")
                    wipe(k - len(escape), j)  # the interpolation's code is balanced; blank it too
                    body_start = j
                else:
                    j = k + 1
            elif text.startswith(end_mark, j):
                wipe(body_start, j)
                return j + len(end_mark)
            elif text[j] == "\n" and not multi:
                break  # unterminated: stop at the line's end
            else:
                j += 1
        wipe(body_start, j)
        return j

    code(0, None)
    return "".join(out)


TYPE_DECL = re.compile(r"\b(class|struct|enum|extension|actor|protocol)\s+([A-Za-z_][\w.]*)")
FUNC_DECL = re.compile(r"(?<![.\w])(func|init|deinit)\b")
# Words that start another declaration: seen before a `{`, the function has no body.
NEXT_DECL = re.compile(r"\b(func|init|deinit|var|let|case|subscript|typealias|associatedtype|"
                       r"class|struct|enum|extension|actor|protocol|import)\b")


def matching_brace(clean, i):
    depth = 0
    for j in range(i, len(clean)):
        if clean[j] == "{":
            depth += 1
        elif clean[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return None


def labels(params):
    """The argument labels of a parameter list's text, as in `apply(option:)`."""
    result, depth, part = [], 0, ""
    for c in params.replace("->", "  ") + ",":
        if c in "([<{":
            depth += 1
        elif c in ")]>}":
            depth -= 1
        if c == "," and depth == 0:
            words = re.findall(r"[A-Za-z_]\w*", part.split(":")[0]) if ":" in part else []
            if words:
                result.append(words[0] + ":")
            part = ""
        else:
            part += c
    return "".join(result)


def functions(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    clean = blank(text)
    line_of = lambda k: clean.count("\n", 0, k) + 1

    # The type each brace-delimited scope belongs to, for the functions' qualified names.
    scopes = []  # (start, end, name)
    for m in TYPE_DECL.finditer(clean):
        open_brace = clean.find("{", m.end())
        if open_brace < 0:
            continue
        between = clean[m.end():open_brace]
        if NEXT_DECL.search(between) or "}" in between:
            continue
        close = matching_brace(clean, open_brace)
        if close is not None:
            scopes.append((open_brace, close, m.group(2)))

    found = []
    for m in FUNC_DECL.finditer(clean):
        keyword = m.group(1)
        k, depth, brace = m.end(), 0, None
        while k < len(clean):
            c = clean[k]
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif depth == 0 and c == "{":
                brace = k
                break
            elif depth == 0 and c == "}":
                break
            elif depth == 0 and c.isalpha() and (k == 0 or not (clean[k - 1].isalnum() or clean[k - 1] == "_")) \
                    and NEXT_DECL.match(clean, k):
                break
            k += 1
        if brace is None:
            continue  # a requirement, without a body
        close = matching_brace(clean, brace)
        if close is None:
            continue
        signature = clean[m.end():brace]
        if keyword == "func":
            name_match = re.match(r"\s*([^\s(<]+)", signature)
            name = name_match.group(1) if name_match else "?"
        else:
            name = keyword + (signature.lstrip()[:1] if signature.lstrip()[:1] in "?!" else "")
        if keyword != "deinit":
            p = signature.find("(")
            if p >= 0:
                level, q = 0, p
                for q in range(p, len(signature)):
                    if signature[q] == "(":
                        level += 1
                    elif signature[q] == ")":
                        level -= 1
                        if level == 0:
                            break
                name = name.rstrip("?!") if keyword == "init" else name
                name += "(" + labels(signature[p + 1:q]) + ")"
        owners = [s for s in scopes if s[0] < m.start() < s[1]]
        if owners:
            name = max(owners, key=lambda s: s[0])[2] + "." + name
        first, last = line_of(m.start()), line_of(close)
        found.append((last - first + 1, os.path.relpath(path, ROOT), first, name))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min", type=int, default=60, help="list the functions over this many lines (60)")
    parser.add_argument("--max", type=int, default=80, help="--check: none may be over this many lines (80)")
    parser.add_argument("--allowed", type=int, default=6, help="--check: how many may be over --min (6)")
    parser.add_argument("--check", action="store_true", help="exit 1 unless the targets hold")
    parser.add_argument("paths", nargs="*", default=[os.path.join(ROOT, "Sources")])
    args = parser.parse_args()

    files = []
    for p in args.paths:
        if os.path.isfile(p):
            files.append(p)
        for base, _, names in os.walk(p):
            files += [os.path.join(base, n) for n in names if n.endswith(".swift")]
    found = sorted((f for path in sorted(files) for f in functions(path)), key=lambda f: (-f[0], f[1], f[2]))

    over_min = [f for f in found if f[0] > args.min]
    over_max = [f for f in found if f[0] > args.max]
    for length, path, line, name in over_min:
        print(f"{length:4}  {path}:{line}  {name}")
    print(f"{len(over_min)} function(s) over {args.min} lines, {len(over_max)} over {args.max}"
          f" ({len(found)} measured)")
    if args.check and (over_max or len(over_min) > args.allowed):
        print(f"function-lengths: the target is none over {args.max} lines and at most {args.allowed} over"
              f" {args.min}; split the longest along their phases (issue 26)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
