#!/usr/bin/env bash
# No include cycle, in three graphs:
#
#  1. The core's modules. A module is a header include/dperm/F/X.hpp with its
#     src/core/F/X.cpp, F the concept's folder (either may be alone; PARTS
#     below names the few .cpp files that implement another module's
#     header); the module's name is F/X. Module F/X depends on G/Y when a
#     file of F/X has #include "dperm/G/Y.hpp".
#  2. The core's folders. Folder F depends on folder G when a file of
#     include/dperm/F or src/core/F includes "dperm/G/..." (any file: a .def
#     list too). Every cycle fails: the folders are layers.
#  3. src/pg. A module is a .cpp with the .hpp of the same base name,
#     anywhere under src/pg (either may be alone); its name is that base
#     name. #include "P" names the file P relative to the including file's
#     folder, else relative to src/pg (the build has -Isrc/pg); an include
#     that names no file under src/pg (PostgreSQL's, the core's) is no
#     dependency. Modules are checked as in 1, and so are the rooms: a
#     room is a folder of src/pg ("." for src/pg itself), and room R
#     depends on room S when a file of R includes a file of S.
#
# A strongly connected component of two or more modules (or folders, or
# rooms) fails the check, named with one cycle through it and the include
# lines that close it, unless ALLOWED (core modules) or ALLOWED_PG (src/pg
# modules and rooms) lists exactly that component.
#
# Before checking the tree, self-tests prove that each check can fail, in
# temporary copies: a real core dependency X -> Y closed into a cycle (an
# added include of X in Y's header) must be refused naming X and Y, and
# ALLOWED must then let exactly that cycle through; likewise a real src/pg
# dependency with ALLOWED_PG; a header added to a core folder F and included
# from a folder G that F depends on must be refused as a folder cycle (with
# no module cycle); two real src/pg dependencies X -> Y and Z -> W moved
# into rooms {X, W} and {Y, Z} must be refused as a room cycle (with no new
# module cycle), and ALLOWED_PG must let it through.
#
# Usage: bash test/check_includes.sh [ROOT]   (ROOT: a tree with src/core,
# include/dperm and src/pg; default: this repository).
set -euo pipefail
cd "$(dirname "$0")/.."

# Core module cycles that may stay, one per line: the component's modules,
# sorted, space-separated; say why beside each. None today (objective_approx
# includes objective_perturbation, not the other way round).
ALLOWED=""

# src/pg cycles that may stay, one component per line, its names sorted and
# space-separated: modules by base name, rooms by folder with a trailing /
# ("./" for src/pg itself); say why beside each. A line that matches no
# component fails the check, so the list cannot go stale. For cycles the
# src/pg rooms move (issue 45) is to remove: none left on main since the
# request45 merge (the flat src/pg had models <-> model_cron, release <->
# streaming, aggregate <-> pass_aggregate, relations -> ledger_writer ->
# internal_sql -> relations and ledger <-> ledger_writer <->
# persistent_ledger_writer when this check began).
ALLOWED_PG=""

# .cpp files without a header of their own, and the module whose header
# declares what they define. An algorithm may be one .cpp file alone (its
# SpecOf<Algorithm::kX> entry, registry.hpp): a module of its own that no
# file includes; so may a loss (its LossSpecOf<LossKind::kX> entry,
# losses/loss_spec.hpp).
PARTS="accounting/pld_gaussian:accounting/pld options/option_table:options/options options/option_reference:options/options algorithms/objective_perturbation_rdp:algorithms/objective_perturbation algorithms/objective_perturbation_solver:algorithms/objective_perturbation"  # pld.hpp declares the Gaussian PLD accountant; options.hpp the option table and what it generates; objective_perturbation.hpp its RDP curve and its solver

# The graphs, their check and the self-tests' edits of src/pg, in one
# program: python3 -c "$GRAPHS" MODE ARGS (modes below).
read -r -d '' GRAPHS <<'PY' || true
import os, re, sys

def files_under(root, d, exts):
    """(path relative to d, path relative to root) of d's files, sorted."""
    out = []
    for folder, dirs, names in os.walk(os.path.join(root, d)):
        dirs.sort()
        for name in names:
            if name.endswith(exts):
                full = os.path.join(folder, name)
                out.append((os.path.relpath(full, os.path.join(root, d)), os.path.relpath(full, root)))
    return sorted(out)

def add_edge(edges, a, b, where):
    edges.setdefault(a, {})
    edges.setdefault(b, {})
    if a != b:
        edges[a].setdefault(b, where)

def components_of(edges):
    """Tarjan's strongly connected components of two or more nodes (iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
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
                    found.append(component)
    return found

def one_cycle(edges, component):
    """A shortest cycle through the component's first node (BFS)."""
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

def report(what, edges, allowed, name=lambda n: n):
    """Prints the graph's cycles; returns (ok, number of allowed cycles)."""
    ok, n_allowed = True, 0
    for component in components_of(edges):
        names = frozenset(name(n) for n in component)
        status = "allowed" if names in allowed else "FAIL"
        ok &= status == "allowed"
        n_allowed += status == "allowed"
        cycle = one_cycle(edges, component)
        print(f"check_includes: {status}: {what} cycle {' -> '.join(name(n) for n in cycle)}"
              f" (component of {len(component)}: {' '.join(sorted(names))})")
        for a, b in zip(cycle, cycle[1:]):
            print(f"  {name(a)} -> {name(b)}: {edges[a][b]}")
    return ok, n_allowed

def stale(what, allowed, components):
    """Fails (False) on each allowed line that is no component any more."""
    ok = True
    for line in sorted(allowed - components, key=sorted):
        print(f"check_includes: FAIL: {what} lists {' '.join(sorted(line))}, which is no cycle: delete it")
        ok = False
    return ok

def layers(edges):
    """The nodes of an acyclic graph bottom up: each layer after those it depends on."""
    order, done = [], set()
    while len(done) < len(edges):
        ready = sorted(v for v in edges if v not in done and set(edges[v]) <= done)
        order.append(ready); done.update(ready)
    return order

def allowed_set(text):
    return {frozenset(line.split()) for line in text.splitlines() if line.strip()}

def check_core(root, allowed, parts):
    include = re.compile(r'^\s*#\s*include\s*["<]dperm/([A-Za-z0-9_/]+)\.hpp[">]')
    include_folder = re.compile(r'^\s*#\s*include\s*["<]dperm/([A-Za-z0-9_]+)/')
    files = []  # (module, path)
    for d, ext in (("include/dperm", (".hpp", ".def")), ("src/core", (".cpp",))):
        for rel, path in files_under(root, d, ext):
            files.append((rel.rsplit(".", 1)[0], path))
    headers = {m for m, p in files if p.endswith(".hpp")}
    ok, edges, folders = True, {}, {}
    for module, path in files:
        folder = module.split("/")[0] if "/" in module else "."
        folders.setdefault(folder, {})
        with open(os.path.join(root, path), encoding="utf-8") as f:
            lines = f.read().splitlines()
        for number, line in enumerate(lines, 1):
            m = include_folder.match(line)
            if m:
                add_edge(folders, folder, m.group(1), f"{path}:{number}")
        if path.endswith(".def"):
            continue  # a list: in the folder graph only
        if path.endswith(".cpp") and module not in headers:
            text = "\n".join(lines)
            algorithm = "SpecOf<Algorithm::" in text or "LossSpecOf<LossKind::" in text
            if module in parts:
                module = parts[module]
            elif not algorithm:  # an algorithm or a loss alone is a module nothing includes
                print(f"check_includes: {path} has no header: add include/dperm/{module}.hpp "
                      "or name its module in PARTS (test/check_includes.sh)")
                ok = False
                continue
        edges.setdefault(module, {})
        for number, line in enumerate(lines, 1):
            m = include.match(line)
            if m and m.group(1) != module:
                add_edge(edges, module, m.group(1), f"{path}:{number}")
    good, n_allowed = report("include", edges, allowed)
    good &= stale("ALLOWED", allowed, {frozenset(c) for c in components_of(edges)})
    if good:
        print(f"check_includes: core ok ({len(edges)} modules, {sum(map(len, edges.values()))} "
              f"dependencies, {n_allowed} allowed cycle(s))")
    good_folders, _ = report("folder", folders, set())
    if good_folders:
        print(f"check_includes: core folders ok ({len(folders)} folders, "
              f"{sum(map(len, folders.values()))} dependencies; bottom up: "
              f"{' | '.join(' '.join(layer) for layer in layers(folders))})")
    return ok and good and good_folders

def pg_includes(root):
    """src/pg's files (relative to src/pg) and their resolved includes:
    {file: [(line number, text, target file)]}; the base names used twice."""
    pg = os.path.normpath(os.path.join(root, "src/pg"))
    quoted = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
    files = [rel for rel, _ in files_under(root, "src/pg", (".cpp", ".hpp"))]
    resolved = {}
    for rel in files:
        resolved[rel] = []
        with open(os.path.join(pg, rel), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = quoted.match(line)
                if not m:
                    continue
                for base in (os.path.join(pg, os.path.dirname(rel)), pg):
                    candidate = os.path.normpath(os.path.join(base, m.group(1)))
                    if candidate.startswith(pg + os.sep) and os.path.isfile(candidate):
                        resolved[rel].append((number, m.group(1), os.path.relpath(candidate, pg)))
                        break  # else: PostgreSQL's or the core's header
    seen, twice = {}, []
    for rel in files:
        seen.setdefault(os.path.basename(rel), []).append(rel)
    twice = {name: rels for name, rels in seen.items() if len(rels) > 1}
    return resolved, twice

def module_of(rel):
    return os.path.splitext(os.path.basename(rel))[0]

def room_of(rel):
    return os.path.dirname(rel) or "."

def check_pg(root, allowed):
    resolved, twice = pg_includes(root)
    ok = True
    for name, rels in sorted(twice.items()):
        print(f"check_includes: FAIL: src/pg has {len(rels)} files named {name} "
              f"({' '.join(rels)}): a module's base name must be unique")
        ok = False
    modules, rooms = {}, {}
    for rel, includes in resolved.items():
        modules.setdefault(module_of(rel), {})
        rooms.setdefault(room_of(rel), {})
        for number, _, target in includes:
            where = f"src/pg/{rel}:{number}"
            add_edge(modules, module_of(rel), module_of(target), where)
            add_edge(rooms, room_of(rel), room_of(target), where)
    room_name = lambda r: r + "/"
    good, n_allowed = report("src/pg include", modules, allowed)
    good_rooms, n_rooms = report("src/pg room", rooms, allowed, room_name)
    present = {frozenset(c) for c in components_of(modules)} | \
              {frozenset(map(room_name, c)) for c in components_of(rooms)}
    fresh = stale("ALLOWED_PG", allowed, present)
    if good and good_rooms and fresh:
        print(f"check_includes: src/pg ok ({len(modules)} modules, "
              f"{sum(map(len, modules.values()))} dependencies, {n_allowed} allowed cycle(s); "
              f"{len(rooms)} room(s), {sum(map(len, rooms.values()))} dependencies, "
              f"{n_rooms} allowed room cycle(s))")
    return ok and good and good_rooms and fresh

def pg_edges(root):
    """Self-test: the module edges X Y of src/pg, X and Y each with a .cpp and a .hpp."""
    resolved, _ = pg_includes(root)
    both = {m for m in map(module_of, resolved)
            if any(module_of(r) == m and r.endswith(".cpp") for r in resolved)
            and any(module_of(r) == m and r.endswith(".hpp") for r in resolved)}
    edges = set()
    for rel, includes in sorted(resolved.items()):
        for _, _, target in includes:
            x, y = module_of(rel), module_of(target)
            if rel.endswith(".cpp") and x != y and x in both and y in both:
                edges.add((x, y))
    for x, y in sorted(edges):
        print(x, y)

def pg_move(root, room, modules):
    """Self-test: moves the modules' files into src/pg/ROOM and rewrites every
    include that resolved to a moved file, and every include of a moved file,
    as a path from src/pg: the module graph stays the same."""
    resolved, _ = pg_includes(root)
    pg = os.path.join(root, "src/pg")
    moved = {rel: os.path.join(room, os.path.basename(rel))
             for rel in resolved if module_of(rel) in modules}
    os.makedirs(os.path.join(pg, room), exist_ok=True)
    for rel, includes in resolved.items():
        if not includes:
            continue
        with open(os.path.join(pg, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        for number, text, target in includes:
            if rel in moved or target in moved:
                lines[number - 1] = lines[number - 1].replace(f'"{text}"', f'"{moved.get(target, target)}"', 1)
        with open(os.path.join(pg, rel), "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
    for rel, new in moved.items():
        os.rename(os.path.join(pg, rel), os.path.join(pg, new))

mode, args = sys.argv[1], sys.argv[2:]
if mode == "check":  # ROOT ALLOWED ALLOWED_PG PARTS
    parts = dict(p.split(":") for p in args[3].split())
    core_ok = check_core(args[0], allowed_set(args[1]), parts)
    pg_ok = check_pg(args[0], allowed_set(args[2]))
    sys.exit(0 if core_ok and pg_ok else 1)
elif mode == "pg-edges":  # ROOT
    pg_edges(args[0])
elif mode == "pg-move":  # ROOT ROOM MODULE...
    pg_move(args[0], args[1], set(args[2:]))
elif mode == "allow":  # ALLOWED COMPONENT: ALLOWED without the lines inside COMPONENT, plus it
    component = set(args[1].split())
    for line in args[0].splitlines():
        if line.strip() and not set(line.split()) <= component:
            print(line)
    print(args[1])
PY

# check ROOT ALLOWED ALLOWED_PG: prints the cycles of ROOT's graphs; 1 if
# one is not allowed (or an allowed one is gone).
check() { python3 -c "$GRAPHS" check "$1" "$2" "$3" "$PARTS"; }

root=${1:-.}
status=0
result=$(check "$root" "$ALLOWED" "$ALLOWED_PG") || status=$?
if [ $status != 0 ]; then echo "$result"; exit 1; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# copy NAME: a copy of the sources of the tree's src/core, include/dperm
# and src/pg in $tmp/NAME.
copy() {
  mkdir -p "$tmp/$1"
  (cd "$root" && find src/core include/dperm src/pg \( -name '*.cpp' -o -name '*.hpp' -o -name '*.def' \) \
     -exec cp --parents -t "$tmp/$1" {} +)
}
# insert_include FILE TEXT: TEXT as FILE's first #include line.
insert_include() { sed -i "0,/^#include/s//${2//\//\\/}\n#include/" "$1"; }
fail() { echo "check_includes: self-test: $1"; [ -z "${2:-}" ] || echo "$2"; exit 1; }
# components WHAT [STATUS]: the components of $out's WHAT cycles (FAIL
# ones unless STATUS), one a line.
components() { sed -n "s/.*${2:-FAIL}: $1 cycle .*(component of [0-9]*: \(.*\))\$/\1/p" <<<"$out"; }
# pg_allowed COMPONENT: an ALLOWED_PG for $out's tree with COMPONENT as its
# one new module cycle: the module lines outside it, it, and every room
# cycle $out shows (a self-test's edit may change those legitimately).
pg_allowed() {
  python3 -c "$GRAPHS" allow "$(grep -v / <<<"$ALLOWED_PG" || true)" "$1"
  components "src\/pg room" "[a-zA-Z]*"
}

# 1. Core modules: close a real dependency X -> Y, the first .cpp with a
# header of its own that includes another module's header of its folder (so
# that no folder cycle is made): Y's header then includes X's.
copy modules
read -r x y < <(cd "$tmp/modules/src/core" && for f in $(find . -name '*.cpp' | sort); do
  x=${f#./}; x=${x%.cpp}
  [ -f "$tmp/modules/include/dperm/$x.hpp" ] || continue
  y=$(sed -n 's/^#include "dperm\/\([a-z0-9_/]*\)\.hpp".*/\1/p' "$f" | grep "^${x%%/*}/" | grep -vx "$x" | head -1 || true)
  [ -n "$y" ] && { echo "$x $y"; break; }
done)
[ -n "${x:-}" ] && [ -n "${y:-}" ] || fail "found no core dependency to close"
insert_include "$tmp/modules/include/dperm/$y.hpp" "#include \"dperm/$x.hpp\""
out=$(check "$tmp/modules" "$ALLOWED" "$ALLOWED_PG") && fail "an added cycle $x -> $y -> $x was not refused" "$out"
component=$(components include | head -1)
[[ " $component " == *" $x "* && " $component " == *" $y "* ]] || fail "the refusal does not name $x and $y" "$out"
check "$tmp/modules" "$(python3 -c "$GRAPHS" allow "$ALLOWED" "$component")" "$ALLOWED_PG" >/dev/null ||
  fail "ALLOWED did not let the listed cycle ($component) through"
echo "check_includes: self-test ok (core modules: an added $x <-> $y cycle is refused and named; ALLOWED lets it through)"

# 2. Core folders: F -> G the first include of another folder (by file,
# then line); a new header of F that includes nothing, included by G's
# first header, closes G -> F with no module cycle.
copy folders
read -r f g < <(cd "$tmp/folders" && grep -n '^#include "dperm/' $(find include/dperm src/core -type f | sort) |
  sed -n 's#^\(include/dperm\|src/core\)/\([a-z0-9_]*\)/[^:]*:[0-9]*:\#include "dperm/\([a-z0-9_]*\)/.*#\2 \3#p' |
  awk '$1 != $2 { print; exit }')
[ -n "${f:-}" ] && [ -n "${g:-}" ] || fail "found no dependency between core folders"
echo "// self-test probe: includes nothing" >"$tmp/folders/include/dperm/$f/selftest_probe.hpp"
insert_include "$(ls "$tmp/folders/include/dperm/$g/"*.hpp | sort | head -1)" "#include \"dperm/$f/selftest_probe.hpp\""
out=$(check "$tmp/folders" "$ALLOWED" "$ALLOWED_PG") && fail "an added folder cycle $f -> $g -> $f was not refused" "$out"
[ "$(components folder)" = "$(printf '%s\n' "$f" "$g" | sort | tr '\n' ' ' | sed 's/ $//')" ] ||
  fail "the refusal does not name folders $f and $g" "$out"
! grep -q "FAIL: include cycle" <<<"$out" || fail "the folder probe made a module cycle" "$out"
echo "check_includes: self-test ok (core folders: an added $f <-> $g folder cycle is refused and named)"

# 3. src/pg modules: close the first real dependency X -> Y (each with a
# .cpp and a .hpp) outside ALLOWED_PG: Y's header then includes X's.
copy pgfiles
read -r x y < <(python3 -c "$GRAPHS" pg-edges "$tmp/pgfiles" |
  awk -v allowed="$ALLOWED_PG" 'BEGIN { n = split(allowed, a, /[ \n]/); for (i = 1; i <= n; i++) in_allowed[a[i]] = 1 }
       !($1 in in_allowed) && !($2 in in_allowed) { print; exit }')
[ -n "${x:-}" ] && [ -n "${y:-}" ] || fail "found no src/pg dependency to close"
xh=$(cd "$tmp/pgfiles/src/pg" && find . -name "$x.hpp" | sed 's#^\./##')
insert_include "$(find "$tmp/pgfiles/src/pg" -name "$y.hpp")" "#include \"$xh\""
out=$(check "$tmp/pgfiles" "$ALLOWED" "$ALLOWED_PG") && fail "an added src/pg cycle $x -> $y -> $x was not refused" "$out"
component=$(components "src\/pg include" | head -1)
[[ " $component " == *" $x "* && " $component " == *" $y "* ]] || fail "the refusal does not name $x and $y" "$out"
check "$tmp/pgfiles" "$ALLOWED" "$(pg_allowed "$component")" >/dev/null ||
  fail "ALLOWED_PG did not let the listed cycle ($component) through"
echo "check_includes: self-test ok (src/pg modules: an added $x <-> $y cycle is refused and named; ALLOWED_PG lets it through)"

# 4. src/pg rooms: two real dependencies X -> Y and Z -> W of four
# distinct modules, moved into rooms ra = {X, W} and rb = {Y, Z} (every
# include of a moved file, and by one, rewritten as its path from src/pg):
# rooms ra -> rb -> ra, the module graph unchanged.
copy pgrooms
read -r x y z w < <(python3 -c "$GRAPHS" pg-edges "$tmp/pgrooms" | awk '{ a[NR] = $1; b[NR] = $2 } END {
  for (i = 1; i <= NR; i++) for (j = 1; j <= NR; j++)
    if (a[i] != a[j] && a[i] != b[j] && b[i] != a[j] && b[i] != b[j]) { print a[i], b[i], a[j], b[j]; exit } }')
[ -n "${w:-}" ] || fail "found no two src/pg dependencies to move into rooms"
python3 -c "$GRAPHS" pg-move "$tmp/pgrooms" ra "$x" "$w"
python3 -c "$GRAPHS" pg-move "$tmp/pgrooms" rb "$y" "$z"
out=$(check "$tmp/pgrooms" "$ALLOWED" "$ALLOWED_PG") && fail "a room cycle ra -> rb -> ra ($x -> $y, $z -> $w) was not refused" "$out"
component=$(components "src\/pg room" | grep -E '(^| )ra/( |$)' | grep -E '(^| )rb/( |$)' | head -1)
[ -n "$component" ] || fail "the refusal does not name rooms ra/ and rb/" "$out"
! grep -q "FAIL: src/pg include cycle" <<<"$out" || fail "the move into rooms changed the module graph" "$out"
check "$tmp/pgrooms" "$ALLOWED" "$(pg_allowed "")" >/dev/null ||
  fail "ALLOWED_PG did not let the room cycle ($component) through"
echo "check_includes: self-test ok (src/pg rooms: $x -> $y and $z -> $w in rooms ra = {$x, $w} and rb = {$y, $z} are refused as a room cycle; ALLOWED_PG lets it through)"
echo "$result"
