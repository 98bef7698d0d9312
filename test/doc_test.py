#!/usr/bin/env python3
"""Runs every ```sql block of README.md and docs/*.md against a real server.

Run by test/doc_test.sh inside `pg_virtualenv -t` (dperm installed). Each
file gets a fresh database; its blocks run in order, each block in one psql
session (ON_ERROR_STOP, verbose errors), so a block sees the tables the
blocks before it created. A block fails the test when a statement errors,
and the failure names file:line of the statement and the error.

Markers, an HTML comment on the line right before the fence (invisible when
rendered):

  <!-- doc-test: expect-error SQLSTATE -->  the block must fail, with that
                                           SQLSTATE (it is an example of a
                                           refusal); any other outcome fails
  <!-- doc-test: skip REASON -->           not run (the block needs what a
                                           plain cluster lacks: pg_cron,
                                           Citus); REASON is required and
                                           printed

Blocks that read the real datasets (bank, adult, creditcard, wine, bike, psid,
fashion: a `FROM name` or a quoted 'name' the file has not created) get them
loaded first with bench/load_datasets.py from $DPERM_SHARED/data/raw.
python3 standard library only.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATASETS = ("bank", "adult", "creditcard", "wine", "bike", "fashion", "psid")
MARKER = re.compile(r"^<!--\s*doc-test:\s*(expect-error|skip)\b\s*(.*?)\s*-->\s*$")


def blocks(path):
    """(line of the first SQL line, sql, marker, argument) per ```sql block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sql":
            start = i + 1
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            if j == len(lines):
                sys.exit(f"{path}:{i + 1}: unterminated ```sql block")
            prev = lines[i - 1] if i > 0 else ""
            m = MARKER.match(prev.strip())
            marker, arg = (m.group(1), m.group(2)) if m else (None, "")
            if prev.strip().startswith("<!-- doc-test") and not m:
                sys.exit(f"{path}:{i}: unknown doc-test marker: {prev.strip()}")
            if marker == "skip" and not arg:
                sys.exit(f"{path}:{i}: doc-test skip needs a reason")
            out.append((start + 1, "\n".join(lines[start:j]) + "\n", marker, arg))
            i = j
        i += 1
    return out


def psql(db, sql_file):
    return subprocess.run(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose",
         "-f", sql_file, "-d", db],
        capture_output=True, text=True)


def first_error(stderr, first_line, sql_file):
    """(doc line, SQLSTATE, message) of the first error psql reports."""
    m = re.search(re.escape(sql_file) + r":(\d+): ERROR:\s+([0-9A-Z]{5}): (.*)", stderr)
    if not m:
        m2 = re.search(r"ERROR:\s+([0-9A-Z]{5}): (.*)", stderr)
        if m2:
            return first_line, m2.group(1), m2.group(2)
        return first_line, None, stderr.strip()
    return first_line + int(m.group(1)) - 1, m.group(2), m.group(3)


def needed_datasets(sql, created):
    names = set()
    for name in DATASETS:
        if name in created:
            continue
        if re.search(r"\b(FROM|JOIN)\s+" + name + r"\b", sql, re.I) or \
                re.search(r"'" + name + r"'", sql):
            names.add(name)
    return sorted(names)


def run_file(path, data_dir):
    rel = os.path.relpath(path, ROOT)
    db = "doctest_" + re.sub(r"[^a-z0-9]", "_", rel.lower())
    subprocess.run(["dropdb", "--if-exists", db], capture_output=True)
    subprocess.run(["createdb", db], check=True)
    created, loaded = set(), set()
    ran = skipped = failed = 0
    for line, sql, marker, arg in blocks(path):
        if marker == "skip":
            print(f"  skip {rel}:{line}: {arg}")
            skipped += 1
            continue
        for name in needed_datasets(sql, created | loaded):
            r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "load_datasets.py"),
                                "--load", name, "--data-dir", data_dir, "--psql-args", f"-d {db}"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL {rel}:{line}: cannot load dataset {name}: {r.stderr.strip()}")
                return ran, skipped, failed + 1
            loaded.add(name)
        created |= {m.lower() for m in re.findall(r"CREATE\s+TABLE\s+(\w+)", sql, re.I)}
        with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
            f.write(sql)
            sql_file = f.name
        try:
            r = psql(db, sql_file)
        finally:
            os.unlink(sql_file)
        ran += 1
        if marker == "expect-error":
            if r.returncode == 0:
                print(f"FAIL {rel}:{line}: the block should fail with {arg or 'an error'} but ran")
                failed += 1
                continue
            at, code, msg = first_error(r.stderr, line, sql_file)
            if arg and code != arg:
                print(f"FAIL {rel}:{at}: expected SQLSTATE {arg}, got {code}: {msg}")
                failed += 1
            else:
                print(f"  ok   {rel}:{line} (fails as documented: {code} {msg})")
            continue
        if r.returncode != 0:
            at, code, msg = first_error(r.stderr, line, sql_file)
            print(f"FAIL {rel}:{at}: {code or ''} {msg}")
            failed += 1
        else:
            print(f"  ok   {rel}:{line}")
    subprocess.run(["dropdb", "--if-exists", db], capture_output=True)
    return ran, skipped, failed


def main():
    files = sys.argv[1:] or [os.path.join(ROOT, "README.md")] + sorted(
        glob.glob(os.path.join(ROOT, "docs", "*.md")))
    shared = os.environ.get("DPERM_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))
    data_dir = os.environ.get("DPERM_DATA_DIR", os.path.join(shared, "data", "raw"))
    total = [0, 0, 0]
    for path in files:
        ran, skipped, failed = run_file(os.path.abspath(path), data_dir)
        total = [total[0] + ran, total[1] + skipped, total[2] + failed]
    print(f"doc_test: {total[0]} sql blocks run, {total[1]} skipped, {total[2]} failed "
          f"({len(files)} files)")
    return 1 if total[2] else 0


if __name__ == "__main__":
    sys.exit(main())
