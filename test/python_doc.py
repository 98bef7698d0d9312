#!/usr/bin/env python3
"""Runs every ```python block of a Markdown file, in order, in one
interpreter (one namespace, as a notebook's cells), with the working
directory $DPERM_PY_OUT (where the walk-through writes its pictures). A
block that raises fails the run, naming file:line. test/python.sh runs it
on docs/python.md against a server with dperm and bank_raw.
"""
import os
import sys
import traceback


def blocks(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            if j == len(lines):
                sys.exit(f"{path}:{i + 1}: unterminated ```python block")
            out.append((i + 2, "\n".join(lines[i + 1:j]) + "\n"))
            i = j
        i += 1
    return out


def main(path):
    path = os.path.abspath(path)
    rel = os.path.relpath(path)
    os.chdir(os.environ.get("DPERM_PY_OUT", "."))
    namespace = {"__name__": "__doc_test__"}
    found = blocks(path)
    for line, code in found:
        try:
            # Line numbers of the traceback are the file's.
            exec(compile("\n" * (line - 1) + code, path, "exec"), namespace)
        except Exception:
            traceback.print_exc()
            print(f"FAIL {rel}:{line}: the block raised")
            return 1
    print(f"python_doc: {len(found)} python blocks of {rel} ran")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
