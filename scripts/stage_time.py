#!/usr/bin/python3
"""Runs one stage of scripts/test.sh and records its cost.

    stage_time.py OUT COMMAND [ARG...]

Runs COMMAND, waits for it, and writes "wall user sys" (seconds) to OUT;
exits with COMMAND's status. The CPU time counts every process of the stage,
PostgreSQL's too: this process is a child subreaper (Linux prctl
PR_SET_CHILD_SUBREAPER), so a postmaster that pg_ctl daemonises is
re-parented here instead of to init, and its rusage (its backends' included)
is collected when it exits. After COMMAND ends, orphans still running are
waited for up to 30 s (pg_virtualenv -t stops its cluster before it returns).
On a machine shared with other work the wall time varies with the load; the
CPU time is the stage's own.
"""
import ctypes
import os
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def main():
    out, cmd = sys.argv[1], sys.argv[2:]
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: orphans' CPU is not counted
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    user = system = 0.0
    status = None
    deadline = None
    while True:
        try:
            p, st, ru = os.wait4(-1, os.WNOHANG if status is not None else 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if p == 0:  # orphans still running after the command
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
            continue
        user += ru.ru_utime
        system += ru.ru_stime
        if p == pid:
            status = st
            wall = time.monotonic() - start
            deadline = time.monotonic() + 30
    with open(out, "w") as f:
        f.write(f"{wall:.1f} {user:.1f} {system:.1f}\n")
    sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


if __name__ == "__main__":
    main()
