#!/usr/bin/env bash
# Proves the fence of docs/style.md, "one seam": a core translation unit that
# includes postgres.h fails to compile, whichever comes first.
set -u
CXX=${CXX:-g++}
server=$(${PG_CONFIG:-pg_config} --includedir-server)
try() {  # compiles stdin with the given include flags; 0 if it compiled
  "$CXX" -std=c++17 -fsyntax-only -Iinclude -I/usr/include/eigen3 "$@" -x c++ - 2>/dev/null
}
fail=0
# 1. Core objects build without the server include dir: postgres.h is absent.
printf '#include "dperm/util/errors.hpp"\n#include "postgres.h"\n' | try && { echo "core guard: postgres.h reachable without server includes"; fail=1; }
# 2. Even with the server include dir, the guard header refuses.
printf '#include "postgres.h"\n#include "dperm/losses/loss.hpp"\n' | try -I"$server" && { echo "core guard: core header accepted after postgres.h"; fail=1; }
# 3. Control: a clean core file compiles.
printf '#include "dperm/losses/loss.hpp"\nint main() { return 0; }\n' | try || { echo "core guard: a clean core file does not compile"; fail=1; }
[ $fail = 0 ] && echo "core guard: ok (postgres.h cannot reach the core)"
exit $fail
