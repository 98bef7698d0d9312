#!/usr/bin/env bash
# The core's include graph has no cycle. A module is a header
# include/dperm/F/X.hpp with its src/core/F/X.cpp, F the concept's folder
# (either may be alone; PARTS below names the few .cpp files that implement
# another module's header); the module's name is F/X. Module F/X depends on
# G/Y when a file of F/X has #include "dperm/G/Y.hpp".
# A strongly connected component of two or more modules fails the check,
# named with one cycle through it and the include lines that close it,
# unless ALLOWED lists exactly that component.
#
# Before checking the tree, a self-test proves the check can fail: in a
# temporary copy, one real dependency X -> Y is closed into a cycle by an
# added include of X in Y's file, and the check must refuse it, naming X and
# Y; ALLOWED must then let exactly that cycle through.
#
# Usage: bash test/check_includes.sh [ROOT]   (ROOT: a tree with src/core
# and include/dperm; default: this repository).
set -euo pipefail
cd "$(dirname "$0")/.."

# Cycles that may stay, one per line: the component's modules, sorted, space-
# separated; say why beside each. None today (objective_approx includes
# objective_perturbation, not the other way round).
ALLOWED=""

# .cpp files without a header of their own, and the module whose header
# declares what they define. An algorithm may be one .cpp file alone (its
# SpecOf<Algorithm::kX> entry, registry.hpp): a module of its own that no
# file includes; so may a loss (its LossSpecOf<LossKind::kX> entry,
# losses/loss_spec.hpp).
PARTS="accounting/pld_gaussian:accounting/pld options/option_table:options/options algorithms/objective_perturbation_rdp:algorithms/objective_perturbation algorithms/objective_perturbation_solver:algorithms/objective_perturbation"  # pld.hpp declares the Gaussian PLD accountant; options.hpp the option table; objective_perturbation.hpp its RDP curve and its solver

# check ROOT ALLOWED: prints the cycles of ROOT's graph; 1 if one is not allowed.
check() {
  python3 - "$1" "$2" "$PARTS" <<'PY'
import os, re, sys

root, allowed_text, parts_text = sys.argv[1], sys.argv[2], sys.argv[3]
parts = dict(p.split(":") for p in parts_text.split())
allowed = {frozenset(line.split()) for line in allowed_text.splitlines() if line.strip()}
include = re.compile(r'^\s*#\s*include\s*["<]dperm/([A-Za-z0-9_/]+)\.hpp[">]')

files = []  # (module, path)
for d, ext in (("include/dperm", ".hpp"), ("src/core", ".cpp")):
    for folder, _, names in sorted(os.walk(os.path.join(root, d))):
        for name in sorted(names):
            if name.endswith(ext):
                path = os.path.relpath(os.path.join(folder, name), root)
                module = os.path.relpath(os.path.join(folder, name), os.path.join(root, d))
                files.append((module[: -len(ext)], path))
headers = {m for m, p in files if p.endswith(".hpp")}
edges = {}  # module -> {module: "path:line"}
bad = False
for module, path in files:
    if path.endswith(".cpp") and module not in headers:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
            algorithm = "SpecOf<Algorithm::" in text or "LossSpecOf<LossKind::" in text
        if module in parts:
            module = parts[module]
        elif not algorithm:  # an algorithm or a loss alone is a module nothing includes
            print(f"check_includes: {path} has no header: add include/dperm/{module}.hpp "
                  "or name its module in PARTS (test/check_includes.sh)")
            bad = True
            continue
    edges.setdefault(module, {})
    with open(os.path.join(root, path), encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            m = include.match(line)
            if m and m.group(1) != module:
                edges[module].setdefault(m.group(1), f"{path}:{number}")
                edges.setdefault(m.group(1), {})

# Tarjan's strongly connected components (iterative).
index, low, on_stack, stack, components = {}, {}, set(), [], []
for start in sorted(edges):
    if start in index:
        continue
    work = [(start, iter(sorted(edges[start])))]
    index[start] = low[start] = len(index)
    stack.append(start); on_stack.add(start)
    while work:
        v, it = work[-1]
        w = next(it, None)
        if w is not None:
            if w not in index:
                index[w] = low[w] = len(index)
                stack.append(w); on_stack.add(w)
                work.append((w, iter(sorted(edges[w]))))
            elif w in on_stack:
                low[v] = min(low[v], index[w])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop(); on_stack.discard(w); component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

def one_cycle(component):
    """A shortest cycle through the component's first module (BFS)."""
    first = min(component)
    parent, queue = {first: None}, [first]
    for v in queue:
        for w in sorted(edges[v]):
            if w == first:
                path = [v]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return path[::-1] + [first]
            if w in component and w not in parent:
                parent[w] = v
                queue.append(w)

for component in components:
    cycle = one_cycle(component)
    status = "allowed" if frozenset(component) in allowed else "FAIL"
    bad |= status == "FAIL"
    print(f"check_includes: {status}: include cycle {' -> '.join(cycle)}"
          f" (component of {len(component)}: {' '.join(sorted(component))})")
    for a, b in zip(cycle, cycle[1:]):
        print(f"  {a} -> {b}: {edges[a][b]}")
n_edges = sum(len(v) for v in edges.values())
if not bad:
    print(f"check_includes: ok ({len(edges)} modules, {n_edges} dependencies, "
          f"{len(components)} allowed cycle(s))")
sys.exit(1 if bad else 0)
PY
}

root=${1:-.}
status=0
result=$(check "$root" "$ALLOWED") || status=$?
if [ $status != 0 ]; then echo "$result"; exit 1; fi

# Self-test on a copy of the (acyclic) tree: close a real dependency X -> Y.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src" "$tmp/include"
cp -r "$root/src/core" "$tmp/src/core"
cp -r "$root/include/dperm" "$tmp/include/dperm"
# X -> Y: the first .cpp (in a concept's folder) with a header of its own
# that includes another module's header (util/errors.hpp aside); Y's header
# then includes X's.
read -r x y < <(cd "$tmp/src/core" && for f in $(find . -name '*.cpp' | sort); do
  x=${f#./}; x=${x%.cpp}
  [ -f "$tmp/include/dperm/$x.hpp" ] || continue
  y=$(sed -n 's/^#include "dperm\/\([a-z0-9_/]*\)\.hpp".*/\1/p' "$f" | grep -vx -e "$x" -e util/errors | head -1 || true)
  [ -n "$y" ] && { echo "$x $y"; break; }
done)
[ -n "${x:-}" ] && [ -n "${y:-}" ] || { echo "check_includes: self-test found no dependency to close"; exit 1; }
sed -i "0,/^#include/s//#include \"dperm\/${x//\//\\/}.hpp\"\n#include/" "$tmp/include/dperm/$y.hpp"
if out=$(check "$tmp" "$ALLOWED"); then
  echo "check_includes: self-test: an added cycle $x -> $y -> $x was not refused"; echo "$out"; exit 1
fi
if ! grep -q "FAIL: include cycle .*\b$x\b" <<<"$out" || ! grep -q "FAIL: include cycle .*\b$y\b" <<<"$out"; then
  echo "check_includes: self-test: the refusal does not name $x and $y"; echo "$out"; exit 1
fi
component=$(sed -n 's/.*FAIL: include cycle .*(component of [0-9]*: \(.*\))$/\1/p' <<<"$out")
if ! check "$tmp" "$ALLOWED"$'\n'"$component" >/dev/null; then
  echo "check_includes: self-test: ALLOWED did not let the listed cycle ($component) through"; exit 1
fi
echo "check_includes: self-test ok (an added $x <-> $y cycle is refused and named; ALLOWED lets it through)"
echo "$result"
