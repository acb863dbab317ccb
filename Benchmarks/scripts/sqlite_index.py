#!/usr/bin/env python3
"""The SQLite alternative for the disk cache's index, measured for docs/benchmarks.md.

The disk cache needs: an index it can load at start, one small durable change per write that
other processes see, and misses answered in about a microsecond. This script measures what
SQLite (WAL mode, synchronous=NORMAL, as GRDB would configure it) costs for the first two, with
the same 100,000 entries the Swift benchmark uses. Python's sqlite3 module is a thin layer over
the same C library, so its per-call overhead (~1 µs) is small next to these figures.
"""
import os, sqlite3, tempfile, time, hashlib

def main():
    n = 100_000
    directory = tempfile.mkdtemp(prefix="webimage-sqlite-")
    path = os.path.join(directory, "index.sqlite")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE entries (digest BLOB PRIMARY KEY, size INTEGER, stored INTEGER, accessed INTEGER, expires INTEGER) WITHOUT ROWID")
    digests = [hashlib.sha256(f"https://images.example.com/feed/{i}.jpg".encode()).digest() for i in range(n)]

    # One transaction per put: what a cache that records each write durably pays.
    start = time.perf_counter()
    for i, digest in enumerate(digests[:20_000]):
        db.execute("INSERT OR REPLACE INTO entries VALUES (?, 1000, ?, ?, 0)", (digest, i, i))
    per_put_us = (time.perf_counter() - start) / 20_000 * 1e6
    db.execute("BEGIN")
    db.executemany("INSERT OR REPLACE INTO entries VALUES (?, 1000, ?, ?, 0)", [(d, i, i) for i, d in enumerate(digests)])
    db.execute("COMMIT")
    db.close()

    # Loading the whole index at start.
    start = time.perf_counter()
    db = sqlite3.connect(path)
    index = {row[0]: row[1:] for row in db.execute("SELECT digest, size, stored, accessed, expires FROM entries")}
    load_ms = (time.perf_counter() - start) * 1e3
    assert len(index) == n

    # A miss looked up in SQLite itself rather than in memory.
    absent = [hashlib.sha256(f"absent-{i}".encode()).digest() for i in range(50_000)]
    statement = "SELECT size FROM entries WHERE digest = ?"
    start = time.perf_counter()
    for digest in absent:
        db.execute(statement, (digest,)).fetchone()
    miss_us = (time.perf_counter() - start) / len(absent) * 1e6
    db.close()

    print(f"| SQLite (WAL, synchronous=NORMAL) | put, one transaction each | {per_put_us:.1f} µs |")
    print(f"| SQLite | load 100k rows into a dictionary at start | {load_ms:.1f} ms |")
    print(f"| SQLite | miss answered by a query (not in memory) | {miss_us:.2f} µs |")
    for name in os.listdir(directory):
        os.remove(os.path.join(directory, name))
    os.rmdir(directory)

if __name__ == "__main__":
    main()
