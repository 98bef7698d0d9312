#!/usr/bin/env python3
"""Group peak memory of one PostgreSQL backend and its parallel workers
(bench/scripts/time/scale.sh --cells memory).

Usage: group_memory.py LEADER_PID OUT_FILE [INTERVAL_SECONDS]

Started (in the background) just before the leader runs the measured query
(the caller waits for OUT_FILE.ready, which this script creates once it
runs, then sends the query): waits until the leader's process title leaves "idle", then samples /proc
every INTERVAL (default 0.05 s) until the title is "idle" again, and writes
one line to OUT_FILE:

  <leader VmHWM MiB> <group peak MiB> <group anon peak MiB> <workers seen>

* leader VmHWM: the kernel's exact peak resident set of the leader (counts
  the shared buffers it touched).
* group peak: the largest, over the samples, of the leader's VmHWM plus the
  VmHWM of every parallel worker of the leader alive at that sample
  ("postgres: parallel worker for PID <leader>"). Workers of one Gather are
  alive together, so this is the group's peak up to the sampling: shared
  buffers are counted once per process that touched them (an upper bound).
* group anon peak: the largest, over the samples, of the sum of RssAnon
  (private memory: the buffers, states, palloc'd rows; no shared buffers,
  no file pages) of the leader and its live workers. Sampled, so a spike
  shorter than the interval can be missed.
"""
import os
import sys
import time


def status(pid):
    """VmHWM and RssAnon of a process in KiB; None when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            text = f.read()
    except OSError:
        return None
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "RssAnon"):
            out[key] = int(value.split()[0])
    return out


def title(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def children(pid):
    """The postmaster's children (needs /proc/PID/task/PID/children)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def workers_of(leader, postmaster):
    tag = f"parallel worker for PID {leader}"
    return [c for c in children(postmaster) if tag in title(c)]


def main():
    leader, out_file = int(sys.argv[1]), sys.argv[2]
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 0.05
    with open(f"/proc/{leader}/stat") as f:
        postmaster = int(f.read().rsplit(")", 1)[1].split()[1])
    # The caller waits for OUT_FILE.ready, then runs the query: wait (up to
    # 10 s) for it to start.
    open(out_file + ".ready", "w").close()
    deadline = time.time() + 10
    while " idle" in title(leader) and time.time() < deadline:
        time.sleep(0.002)
    peak = anon_peak = 0
    seen = set()
    while True:
        t = title(leader)
        lead = status(leader)
        if lead is None or " idle" in t:
            break
        total, anon = lead.get("VmHWM", 0), lead.get("RssAnon", 0)
        for w in workers_of(leader, postmaster):
            s = status(w)
            if s is None:
                continue
            seen.add(w)
            total += s.get("VmHWM", 0)
            anon += s.get("RssAnon", 0)
        peak, anon_peak = max(peak, total), max(anon_peak, anon)
        time.sleep(interval)
    lead = status(leader) or {}
    leader_hwm = lead.get("VmHWM", 0)
    peak = max(peak, leader_hwm)
    with open(out_file + ".tmp", "w") as f:
        f.write(f"{leader_hwm // 1024} {peak // 1024} {anon_peak // 1024} {len(seen)}\n")
    os.rename(out_file + ".tmp", out_file)
    os.unlink(out_file + ".ready")


if __name__ == "__main__":
    main()
