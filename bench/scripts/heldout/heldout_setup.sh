# Sourced by bench/scripts/heldout/heldout.sh, bench/scripts/heldout/heldout_parallel.sh and
# bench/scripts/heldout/l2_rule_sweep.sh (after `cd` to the repository): sets $shared (the
# shared directory, DPERM_SHARED or ../shared) and $tmp (a fresh temporary
# directory, removed on exit), builds the core, compiles the C++ driver
# bench/scripts/heldout/heldout_main.cpp against src/core/*/*.o into
# $tmp/heldout_main and unpacks diffprivlib 0.6.5 from $shared/peers into
# $tmp (PYTHONPATH=$tmp/diffprivlib-0.6.5).
shared=${DPERM_SHARED:-$(cd .. && pwd)/shared}
tmp=$(mktemp -d /tmp/dperm_heldout.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
make -s
g++ -std=c++17 -O2 -Wall -Wextra -Iinclude -I/usr/include/eigen3 \
  bench/scripts/heldout/heldout_main.cpp src/core/*/*.o -o "$tmp/heldout_main" -pthread
tar xzf "$shared/peers/diffprivlib-0.6.5.tar.gz" -C "$tmp"
mkdir -p bench/results
