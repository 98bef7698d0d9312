"""A long-lived psql session for the privacy-unit benchmarks (stdlib only).

The machine has one system PostgreSQL library directory, shared by several
engineers who install their own builds of dperm.so. `installed_session`
therefore takes /tmp/dperm-install.lock (the same flock(2) lock as
`flock /tmp/dperm-install.lock`), installs this worktree's build, creates the
extension and makes the session's backend load dperm.so, and releases the
lock: the backend keeps the library it mapped (install unlinks before it
writes), so the rest of the run uses this build even if somebody installs
another one meanwhile. That is not enough for dperm's background workers
(the ledger writer loads the installed library afresh for every release),
so the .sh wrappers hold the lock for the whole run (flock around
pg_virtualenv) and set DPERM_LOCK_HELD=1, which skips the lock here.
Run inside `pg_virtualenv -t` (PGHOST etc. set).
"""

import fcntl
import hashlib
import os
import shutil
import subprocess
import time

LOCK = "/tmp/dperm-install.lock"
MARK = "__dperm_bench_end__"


class Session:
    """One psql process; query() sends SQL and returns its rows (lists of text)."""

    def __init__(self, database="postgres"):
        self.p = subprocess.Popen(
            ["psql", "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=0", "-d", database],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, bufsize=1)

    def query(self, sql, check=True):
        """Runs sql (one or more statements); rows of its output; raises on ERROR."""
        self.p.stdin.write(sql.rstrip().rstrip(";") + ";\n\\echo " + MARK + "\n")
        self.p.stdin.flush()
        lines = []
        while True:
            line = self.p.stdout.readline()
            if line == "":
                raise RuntimeError("psql exited: " + "\n".join(lines))
            line = line.rstrip("\n")
            if line == MARK:
                break
            lines.append(line)
        errors = [l for l in lines if "ERROR:" in l]
        if check and errors:
            raise RuntimeError("SQL failed: " + sql[:300] + "\n" + "\n".join(lines))
        return [l.split("\t") for l in lines if l and "ERROR:" not in l and not l.startswith(
            ("NOTICE:", "DETAIL:", "HINT:", "WARNING:", "CONTEXT:", "LINE ", "        "))]

    def value(self, sql):
        """The first column of the first row."""
        rows = self.query(sql)
        return rows[0][0] if rows else None

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def libdir_so():
    """The installed dperm.so path."""
    pkglib = subprocess.run(["pg_config", "--pkglibdir"], capture_output=True, text=True,
                            check=True).stdout.strip()
    return os.path.join(pkglib, "dperm.so")


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def installed_session(repo, sessions=1):
    """Installs the worktree's build under the lock and returns `sessions`
    sessions that have loaded it, and the build's sha256 prefix."""
    env = dict(os.environ, CCACHE_BASEDIR="/work", CCACHE_DIR="/work/.ccache", CCACHE_NOHASHDIR="1")
    t0 = time.time()
    held = os.environ.get("DPERM_LOCK_HELD") == "1"
    with open(LOCK, "a") as lock:
        if not held:
            fcntl.flock(lock, fcntl.LOCK_EX)
        waited = time.time() - t0
        subprocess.run(["make", "-s", "DPERM_FAST_BUILD=1",
                        "CXX=ccache g++" if shutil.which("ccache") else "CXX=g++", "install"], cwd=repo,
                       env=env, check=True, stdout=subprocess.DEVNULL)
        built = sha(os.path.join(repo, "dperm.so"))
        out = []
        first = Session()
        first.query("CREATE EXTENSION IF NOT EXISTS dperm CASCADE")
        for i in range(sessions):
            s = first if i == 0 else Session()
            # Any call into the library loads dperm.so in this backend.
            s.query("SELECT dp_options(epsilon => 1)")
            out.append(s)
        installed = sha(libdir_so())
        if not held:
            fcntl.flock(lock, fcntl.LOCK_UN)
    if installed != built:
        raise RuntimeError("installed dperm.so differs from the build")

    return out, built, waited
