// The documentation's examples (Generated/, from scripts/extract-snippets.py) are compiled, never
// run: each is a function nobody calls. Building this target is the check.
