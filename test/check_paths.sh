#!/usr/bin/env bash
# Every repository path a comment, doc or message names exists. Scanned: the
# text files of src/, include/, test/, bench/, scripts/, docs/, README.md,
# the Makefile and sql/dperm.sql (CSV and JSON data, images and logs aside;
# the shipped scripts sql/dperm--*.sql stay as they shipped). A path is
#   * dir/file.ext with a known extension (cpp hpp def md py sh sql out csv
#     json txt png control), or a directory under a top-level folder
#     (src/core/release/): it must name a file or folder of the tree, read
#     from the repository root, from the naming file's folder, or from the
#     folders comments abbreviate (src/core/, include/dperm/, include/,
#     src/pg/, src/, test/, bench/);
#   * a bare file name ending in .cpp, .hpp, .md, .py, .sh or .sql (in a
#     comment, or anywhere in a doc): some file of the tree has that name.
# A placeholder (<name>, {x}, *) matches any name: at least one file must
# match. Absolute paths (/tmp/x.sql), URLs and paths outside the tree
# (../shared/..., or a ../ that leaves it) are not checked; any other ../x is
# read from the naming file's folder. "The tree" is git's files (tracked, and
# untracked but not ignored), so a build product such as
# sql/dperm--0.7.0.sql counts only through ALLOW below.
#
# Before checking the tree, a self-test proves the check can fail: in a
# temporary copy, a file that comments name is removed and a comment naming
# a missing file is added; the check must refuse both, naming them.
#
# Usage: bash test/check_paths.sh [ROOT]   (default: this repository)
set -euo pipefail
cd "$(dirname "$0")/.."

# Names that need not exist in the tree: one per line, "FILES NAME", FILES a
# glob of the naming files, NAME a Python regular expression of the whole
# name; the reason is the comment above each.
ALLOW='
# the scripts of the current version, built from sql/dperm.sql and sql/upgrade/*.sql.in (DATA_built); ignored by git
* (sql/)?dperm--([0-9.]+--)?@VERSION@\.sql
# a path in the Citus tree (its layout), not ours
Makefile udfs/<fn>/latest\.sql
# pg_regress writes its output, and the figure files of some tests, to results/ (ignored)
* results/[a-z_]+\.(out|txt)
# files of other projects: TensorFlow Privacy, pgRouting
src/core/algorithms/bolton.cpp tensorflow_privacy/privacy/bolt_on/losses\.py|optimizers\.py
docs/style.md \*_driver\.cpp
# where the audit harness lived when these reports were run (their command lines)
bench/reports/audit_*.md test/unit/audit_harness\.hpp
# the throwaway loss of "How to add" (docs/architecture.md): the a/ and b/ names of the patch, and the file it adds
docs/examples/*.patch [ab]/.+
docs/architecture.md src/core/losses/logcosh\.cpp
'

version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" dperm.control)
ALLOW=${ALLOW//@VERSION@/${version//./\\.}}

# check ROOT FILE_LIST: prints every missing path as file:line: path; 1 if any.
check() {
  python3 - "$1" "$2" "$ALLOW" <<'PY'
import fnmatch, os, re, sys

root, list_file, allow_text = sys.argv[1], sys.argv[2], sys.argv[3]
allow = []
for line in allow_text.splitlines():
    if line.strip() and not line.lstrip().startswith("#"):
        files_glob, name = line.split(None, 1)
        allow.append((files_glob, re.compile(name.strip())))
with open(list_file, encoding="utf-8") as f:
    tree = sorted({line.rstrip("\n") for line in f if line.strip()})
tree = [p for p in tree if os.path.isfile(os.path.join(root, p))]
files = set(tree)
folders = set()
for p in tree:
    while "/" in p:
        p = os.path.dirname(p)
        folders.add(p)
names = files | folders
basenames = {os.path.basename(p) for p in tree}

SCANNED = re.compile(r"^(src|include|test|bench|scripts|docs|sql)/|^(README\.md|Makefile)$")
NOT_SCANNED = re.compile(r"\.(csv|json|png|log)$|^sql/dperm--")
EXT = r"(?:cpp|hpp|def|md|py|sh|sql|out|csv|json|txt|png|control)"
BARE = re.compile(r"\.(?:cpp|hpp|md|py|sh|sql)$")
SEG = r"[A-Za-z0-9_<>*{}-][A-Za-z0-9_.<>*{}-]*"
# Not after a character that continues a name, a path, a URL, a variable or
# an #include <...>; not before one that continues the name (x.csv.gz).
LEAD = r"(?<![A-Za-z0-9_./<>*{}$~:@%#^)\\-])"
TAIL = r"(?![A-Za-z0-9_/]|\.[A-Za-z0-9_])"
PATH = re.compile(LEAD + r"((?:\.\./|\./)*" + SEG + r"(?:/" + SEG + r")*\." + EXT + r")" + TAIL)
FOLDER = re.compile(LEAD + r"((?:src|include|test|bench|scripts|docs|sql)(?:/" + SEG + r")+/)" + TAIL)
BASES = ["src/core", "include/dperm", "include", "src/pg", "src", "test", "bench"]
COMMENT = {  # where a comment starts, per language (bare names count only there)
    ".cpp": re.compile(r"//|^\s*/?\*"), ".hpp": re.compile(r"//|^\s*/?\*"),
    ".def": re.compile(r"//|^\s*/?\*"), ".sh": re.compile(r"(?:^|\s)#"),
    ".py": re.compile(r"(?:^|\s)#"), ".sql": re.compile(r"--"),
}

def glob_of(name):
    """A glob for a name with placeholders (<x>, {x}, *, X, FILE), or None."""
    g = re.sub(r"<[^<>/]*>|\{[^{}/]*\}", "*", name)
    g = re.sub(r"(?<![A-Za-z0-9])[A-Z]{1,6}(?![A-Za-z0-9])", "*", g)
    return re.sub(r"\*+", "*", g) if "*" in g else None

def exists(name, here):
    name = name.rstrip("/")
    glob = glob_of(name)
    if "/" not in name:
        if glob:
            return any(fnmatch.fnmatchcase(b, glob) for b in basenames)
        return name in basenames
    if re.match(r"(\.\./)+shared/", name):
        return True  # ../shared, beside the repository (DPERM_SHARED): not ours to check
    # ../x is read from the naming file's folder only; other names from
    # there, the root and the folders comments abbreviate.
    bases = [here] if name.startswith("../") else [here, ""] + BASES
    for base in bases:
        path = os.path.normpath(os.path.join(base, name))
        if path.startswith(".."):
            return True  # outside the tree (../shared/...): not ours to check
        if glob:
            pat = os.path.normpath(os.path.join(base, glob))
            if any(fnmatch.fnmatchcase(p, pat) for p in names):
                return True
        elif path in names:
            return True
    return False

missing = 0
checked = 0
for rel in tree:
    if not SCANNED.search(rel) or NOT_SCANNED.search(rel):
        continue
    try:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except UnicodeDecodeError:
        continue
    here = os.path.dirname(rel)
    comment = COMMENT.get(os.path.splitext(rel)[1])
    in_docstring = False
    for number, line in enumerate(lines, 1):
        # Where comments start on this line (bare names are checked there only).
        if comment is None or in_docstring:
            from_col = 0
        else:
            m = comment.search(line)
            from_col = m.start() if m else len(line) + 1
        if rel.endswith(".py") and line.count('"""') % 2 == 1:
            if not in_docstring:
                from_col = min(from_col, line.index('"""'))
            in_docstring = not in_docstring
        found = [(m.group(1), m.start(1)) for m in PATH.finditer(line)]
        found += [(m.group(1), m.start(1)) for m in FOLDER.finditer(line)]
        for name, col in found:
            if name.startswith("<") and ">" not in name:
                continue  # #include <boost/...>
            if re.match(r"\{[^{}/]*\}/", name):
                continue  # a path a program makes at run time: f"{d}/x.sql"
            if re.search(r">\s*$", line[:col]):
                continue  # an output file the reader names: ... > table.md
            if "/" not in name.rstrip("/") and (not BARE.search(name) or col < from_col):
                continue
            checked += 1
            if any(fnmatch.fnmatchcase(rel, g) and r.fullmatch(name) for g, r in allow):
                continue
            if exists(name, here):
                continue
            print(f"{rel}:{number}: {name}")
            missing += 1
if missing:
    print(f"check_paths: {missing} name(s) of missing files or folders (above)")
else:
    print(f"check_paths: ok ({checked} path names in comments, docs and messages; all exist)")
sys.exit(1 if missing else 0)
PY
}

# tree_list ROOT OUT: the files of ROOT's tree, one per line.
tree_list() {
  if git -C "$1" rev-parse --show-toplevel >/dev/null 2>&1 &&
     [ "$(cd "$1" && git rev-parse --show-toplevel)" = "$(cd "$1" && pwd -P)" ]; then
    git -C "$1" ls-files --cached --others --exclude-standard >"$2"
  else
    (cd "$1" && find . -type f | sed 's|^\./||') >"$2"
  fi
}

root=${1:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tree_list "$root" "$tmp/files"
status=0
result=$(check "$root" "$tmp/files") || status=$?
if [ $status != 0 ]; then echo "$result"; exit 1; fi

# Self-test on a copy of the scanned folders: remove a file that a comment
# names by its path, and name a file that never existed.
mkdir "$tmp/copy"
grep -E '^(src|include|test|bench|scripts|docs|sql)/|^(README\.md|Makefile)$' "$tmp/files" |
  (cd "$root" && while read -r f; do [ -f "$f" ] && echo "$f"; done | xargs cp --parents -t "$tmp/copy")
victim=include/dperm/util/errors.hpp
[ -f "$tmp/copy/$victim" ] || { echo "check_paths: self-test: $victim is gone; pick another"; exit 1; }
rm "$tmp/copy/$victim"
planted=src/core/nowhere/planted_by_check_paths
echo "// see $planted.cpp" >>"$tmp/copy/src/core/util/errors.cpp"
tree_list "$tmp/copy" "$tmp/copy_files"
if out=$(check "$tmp/copy" "$tmp/copy_files"); then
  echo "check_paths: self-test: a removed file and a planted name were not refused"; echo "$out"; exit 1
fi
if ! grep -q ": $victim\$" <<<"$out" || ! grep -q "^src/core/util/errors.cpp:[0-9]*: $planted.cpp\$" <<<"$out"; then
  echo "check_paths: self-test: the refusal does not name $victim and the planted name"; echo "$out"; exit 1
fi
echo "check_paths: self-test ok (names of a removed file and of a missing file are refused: $(grep -c . <<<"$out") lines)"
echo "$result"
