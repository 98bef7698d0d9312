#!/usr/bin/python3
"""Fuzz test of dperm's SQL surface (run by test/fuzz.sh inside pg_virtualenv).

Bad input never crashes or corrupts:

1. campaign: a fixed-seed random mix of valid and hostile statements (random
   jsonb options, empty / 10^6-element / NULL / NaN / infinite /
   multi-dimensional arrays, out-of-memory sizes, broken dp_model text,
   extreme accountant arguments, weird budgets, wrong types, dperm.train with
   hostile column names, role switches, parallel plans) runs in one psql
   session with a per-statement statement_timeout. Every failure's SQLSTATE
   is recorded. Failures of the test: XX000/XX001/XX002, an empty error
   message or one that shows C++ internals, a lost connection, a statement
   that overruns statement_timeout by more than OVERRUN_S seconds.
2. ledger: every ledger row is well formed, belongs to a campaign statement
   and records the role it ran as; a statement that returned k models wrote
   exactly k ledger rows; no ledger row marks a release that failed after
   reading the rows (0.7.0 keeps and sanitises every row: no error depends on
   them); a failed statement was charged only when it failed after the charge
   for a reason that cannot be checked first (timeout, out of memory, a later
   GROUP BY group refused); budgets the campaign never
   changed hold and are never overspent; budget_status agrees with the
   ledger.
3. memory: one backend runs FUZZ_TRAININGS (default 10^4) small trainings,
   each a top-level statement; its RSS (VmRSS of /proc/self/status) must not
   grow by more than FUZZ_RSS_BOUND_KB from 20% to 100% of the loop.

The statements (the schema and the generator) are in test/fuzz_sql_cases.py.

Python 3 standard library only; talks to the server with psql (PG* variables
from pg_virtualenv). Environment: FUZZ_N (3000), FUZZ_SEED, FUZZ_TRAININGS
(10000), FUZZ_TIMEOUT_MS (2000), FUZZ_RSS_BOUND_KB (5120), FUZZ_DB,
FUZZ_WORKDIR.
"""

import collections
import math
import os
import queue
import re
import subprocess
import sys
import threading
import time

from fuzz_sql_cases import SETUP, SETUP_RELEASES, generate

N = int(os.environ.get("FUZZ_N", "3000"))
SEED = int(os.environ.get("FUZZ_SEED", "20240601"))
TRAININGS = int(os.environ.get("FUZZ_TRAININGS", "10000"))
TIMEOUT_MS = int(os.environ.get("FUZZ_TIMEOUT_MS", "2000"))
RSS_BOUND_KB = int(os.environ.get("FUZZ_RSS_BOUND_KB", "5120"))
DB = os.environ.get("FUZZ_DB", "dperm_fuzz")
MEMDB = DB + "_mem"
WORKDIR = os.environ.get("FUZZ_WORKDIR", "/tmp")
# A statement that outlives statement_timeout by this much ignores
# cancellation: it is reported and its backend terminated.
HANG_GRACE_S = 20
# A statement that outlives statement_timeout by this much (but ends) does
# not check for interrupts often enough: a failure too.
OVERRUN_S = 5

failures = []
failure_kinds = collections.Counter()
SHOWN_PER_KIND = 3


def fail(msg, kind=None):
    """Records a failure; only the first few of each kind are printed."""
    failures.append(msg)
    kind = kind or msg
    failure_kinds[kind] += 1
    if failure_kinds[kind] <= SHOWN_PER_KIND:
        print("FAIL: " + msg, flush=True)


def psql(db, sql, check=True):
    """Runs SQL with psql -At; returns stdout (stripped)."""
    p = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", db],
                       input=sql, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("psql failed (%d): %s\n--- SQL ---\n%s" % (p.returncode, p.stderr, sql[:2000]))
    return p.stdout.strip()


# ---------------------------------------------------------------- campaign

PRELUDE = """\\set VERBOSITY default
\\set SHOW_CONTEXT never
SET statement_timeout = %d;
SET client_min_messages = warning;
SELECT '@@PID ' || pg_backend_pid();
""" % TIMEOUT_MS


def wrap(i, sql):
    return ("\\echo @@B %d\n/*fz:%d*/ %s;\n\\echo @@E %d :SQLSTATE\n"
            "\\if :ERROR\n\\echo @@M %d :'LAST_ERROR_MESSAGE'\n\\endif\n" % (i, i, sql, i, i))


class Result:
    def __init__(self):
        self.state = None      # SQLSTATE, '00000' on success, None: never finished
        self.message = None
        self.released = 0      # models returned (R:true lines)
        self.returned_null = 0
        self.seconds = 0.0
        self.note = None


def run_campaign(stmts, db):
    results = [Result() for _ in stmts]
    start_at = 0
    stderr_tail = []
    restarts = 0
    while start_at < len(stmts):
        path = os.path.join(WORKDIR, "fuzz_campaign_%d.sql" % start_at)
        with open(path, "w") as fh:
            fh.write(PRELUDE)
            for i in range(start_at, len(stmts)):
                fh.write(wrap(i, stmts[i][0]))
        errpath = os.path.join(WORKDIR, "fuzz_campaign_%d.err" % start_at)
        errfh = open(errpath, "w")
        p = subprocess.Popen(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=0", "-d", db, "-f", path],
                             stdout=subprocess.PIPE, stderr=errfh, text=True, errors="replace")
        lines = queue.Queue()

        def reader():
            for line in p.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=reader, daemon=True).start()
        current = None
        began = time.monotonic()
        backend_pid = None
        msg_of = None
        killed_for_hang = None
        while True:
            try:
                line = lines.get(timeout=1.0)
            except queue.Empty:
                line = ""
            if line is None:
                break
            now = time.monotonic()
            if current is not None and now - began > TIMEOUT_MS / 1000.0 + HANG_GRACE_S and killed_for_hang is None:
                killed_for_hang = current
                fail("statement %d ignored statement_timeout (%.0f s); terminating its backend: %s"
                     % (current, now - began, stmts[current][0][:500]))
                if backend_pid:
                    psql("postgres", "SELECT pg_terminate_backend(%s)" % backend_pid, check=False)
            if not line:
                continue
            line = line.rstrip("\n")
            if line.startswith("@@PID "):
                backend_pid = int(line.split()[1])
                msg_of = None
            elif line.startswith("@@B "):
                current = int(line.split()[1])
                began = now
                msg_of = None
            elif line.startswith("@@E "):
                _, i, state = (line.split(" ", 2) + [""])[:3]
                i = int(i)
                results[i].state = state.strip()
                results[i].seconds = now - began
                current = None
                msg_of = None
            elif line.startswith("@@M "):
                parts = line.split(" ", 2)
                i = int(parts[1])
                text = parts[2] if len(parts) > 2 else ""
                results[i].message = text
                msg_of = i
            elif msg_of is not None:  # a message with newlines
                results[msg_of].message += "\n" + line
            elif current is not None:
                if line.startswith("R:true:"):
                    results[current].released += 1
                elif line.startswith("R:false:"):
                    results[current].returned_null += 1
        p.wait()
        errfh.close()
        for res in results:
            if res.message is not None and not getattr(res, "unquoted", False):
                res.message = unquote(res.message)
                res.unquoted = True
        with open(errpath) as fh:
            stderr_tail = fh.read().splitlines()[-5:]
        if p.returncode == 0 and current is None:
            break
        # psql lost its connection (it exits when not interactive): note it,
        # resume after the statement that was running.
        restarts += 1
        if current is None:
            current = max([i for i in range(start_at, len(stmts)) if results[i].state is not None], default=start_at - 1) + 1
        if current >= len(stmts):
            break
        results[current].state = "CONN"
        results[current].note = "; ".join(stderr_tail)
        if killed_for_hang != current:
            fail("connection lost during statement %d (psql exit %d: %s): %s"
                 % (current, p.returncode, " | ".join(stderr_tail), stmts[current][0][:1000]))
        if restarts > 20:
            fail("too many lost connections; giving up the campaign")
            break
        start_at = current + 1
    return results


def unquote(text):
    """psql's :'var' quoting: 'it''s' (E'..' when backslashes are present)."""
    t = text.strip()
    if t.startswith("E'") and t.endswith("'"):
        t = t[2:-1].replace("''", "'").replace("\\\\", "\\")
    elif t.startswith("'") and t.endswith("'") and len(t) >= 2:
        t = t[1:-1].replace("''", "'")
    return t


# ---------------------------------------------------------------- ledger

CHARGED_THEN_FAILED_OK = ("57014", "53200", "DP001", "CONN")


def session_roles(stmts, results):
    """The role each statement ran as (replaying the successful role switches)."""
    role, session, out = "postgres", "postgres", []
    for (sql, _), res in zip(stmts, results):
        out.append(role)
        if res.state == "CONN":
            role = session = "postgres"
        elif res.state == "00000":
            if sql == "SET ROLE fz_analyst":
                role = "fz_analyst"
            elif sql == "RESET ROLE":
                role = session
            elif sql == "SET SESSION AUTHORIZATION fz_analyst":
                role = session = "fz_analyst"
            elif sql == "RESET SESSION AUTHORIZATION":
                role = session = "postgres"
    return out


def check_ledger(stmts, results, db):
    rows = psql(db, r"""
      SELECT id, coalesce(substring(query from '/\*fz:([0-9a-z]+)\*/'), '?'),
             released_at IS NOT NULL AND role IS NOT NULL AND relations IS NOT NULL
               AND relation_names IS NOT NULL AND algorithm <> '' AND mechanism <> ''
               AND loss IN ('logistic', 'huber', 'softmax') AND neighbors <> '' AND query IS NOT NULL,
             epsilon > 0 AND epsilon < 'infinity', delta >= 0 AND delta < 1,
             n >= 1 OR mechanism = 'none (the release failed after reading the rows)', d >= 0,
             cardinality(relations) = cardinality(relation_names),
             rdp IS NULL OR (cardinality(rdp) = cardinality(dperm.rdp_orders())
                             AND NOT EXISTS (SELECT 1 FROM unnest(rdp) x WHERE x IS NULL OR x <> x OR x < 0)),
             role, mechanism = 'none (the release failed after reading the rows)',
             replace(left(query, 200), '|', '/')
        FROM dperm.ledger ORDER BY id""")
    roles = session_roles(stmts, results)
    per_stmt = collections.Counter()
    setup_rows = 0
    total = 0
    # Every ledger row carries the text of the client statement that made it
    # (dperm.train's too: it trains in the caller's backend, never in a
    # parallel worker), so its tag names the statement.
    anchors = []   # statement index of tagged rows, in id order
    for line in rows.splitlines():
        if not line:
            continue
        f = line.split("|")
        total += 1
        if "f" in f[2:9]:
            fail("malformed ledger row %s: %s" % (f[0], line))
        tag = f[1]
        if tag == "setup":
            setup_rows += 1
        elif tag.isdigit() and int(tag) < len(stmts):
            i = int(tag)
            per_stmt[i] += 1
            anchors.append(i)
            if f[10] == "t":  # 0.6.0 charged a row-dependent error; 0.7.0 has none
                fail("ledger row %s of statement %d marks a release that failed after reading "
                     "the rows: %s" % (f[0], i, stmts[i][0][:500]))
            if f[9] != roles[i]:
                fail("ledger row %s of statement %d records role %s; the statement ran as %s"
                     % (f[0], i, f[9], roles[i]))
        else:
            fail("ledger row %s belongs to no statement: %s" % (f[0], f[11]))
    if setup_rows != SETUP_RELEASES:
        fail("setup made %d releases, the ledger has %d setup rows" % (SETUP_RELEASES, setup_rows))
    if any(b < a for a, b in zip(anchors, anchors[1:])):
        fail("ledger rows are not in statement order")
    train = [i for i, (sql, _) in enumerate(stmts) if "dperm.train(" in sql]
    train_rows = {i: per_stmt[i] for i in train if per_stmt.get(i)}
    released = sum(res.released for res in results if res.state == "00000")
    charged_failed = collections.Counter()
    for i, res in enumerate(results):
        got = per_stmt.get(i, 0)
        if res.state == "00000":
            if got != res.released:
                fail("statement %d returned %d model(s) but wrote %d ledger row(s): %s"
                     % (i, res.released, got, stmts[i][0][:500]))
        elif got > 0:
            # Charged before training, then failed. A timeout, running out
            # of memory while training, or a later GROUP BY group refused
            # are expected (over-charging is safe); any other error after
            # the charge is an input that should have been refused before
            # anything was charged.
            charged_failed[res.state] += got
            if "/* must not charge */" in stmts[i][0]:
                fail("statement %d failed with %s (%s) but was charged %d ledger row(s) "
                     "(a release waiting for a budget row its own transaction locked): %s"
                     % (i, res.state, res.message, got, stmts[i][0][:600]))
            elif res.state not in CHARGED_THEN_FAILED_OK:
                fail("statement %d was charged %d ledger row(s), then failed with %s: %s\n"
                     "    statement: %s" % (i, got, res.state, res.message, stmts[i][0][:600]),
                     kind="charged then failed: %s %s" % (res.state, (res.message or "")[:40]))
    campaign_rows = total - setup_rows
    print("ledger: %d rows (%d setup, %d campaign, %d of them by dperm.train); models returned by "
          "successful statements: %d; rows of statements that failed after the charge: %d %s"
          % (total, setup_rows, campaign_rows, sum(train_rows.values()), released, sum(charged_failed.values()),
             dict(charged_failed)), flush=True)
    if campaign_rows != released + sum(charged_failed.values()):
        fail("ledger rows (%d) != models returned (%d) + charged-then-failed (%d)"
             % (campaign_rows, released, sum(charged_failed.values())))
    # Budgets: fixed ones must still hold their setup values and never be overspent.
    status = psql(db, """
      SELECT s.relation::text, s.accounting, s.epsilon_budget, s.delta_budget, s.epsilon_spent,
             s.delta_spent, s.releases,
             (SELECT count(*) FROM dperm.ledger l WHERE s.relation = ANY (l.relations)),
             (SELECT coalesce(sum(epsilon), 0) FROM dperm.ledger l WHERE s.relation = ANY (l.relations)),
             (SELECT coalesce(sum(delta), 0) FROM dperm.ledger l WHERE s.relation = ANY (l.relations))
        FROM dperm.budget_status s ORDER BY 1""")
    expected = {"fz_budget_rdp": ("rdp", 4.0, 1e-5), "fz_budget_basic": ("basic", 6.0, 1e-4),
                "fz_budget_zero": ("rdp", 0.0, 0.0)}
    seen = set()
    print("budget_status:", flush=True)
    for line in status.splitlines():
        rel, acct, eb, db_, es, ds, nrel, nled, sume, sumd = line.split("|")
        eb, db_, es, ds, sume, sumd = map(float, (eb, db_, es, ds, sume, sumd))
        print("  %-16s %-5s eps %.6g/%.6g  delta %.3g/%.3g  releases %s" % (rel, acct, es, eb, ds, db_, nrel), flush=True)
        if nrel != nled:
            fail("budget_status of %s counts %s releases, the ledger %s" % (rel, nrel, nled))
        if any(math.isnan(x) for x in (es, ds)) or es < 0 or ds < 0:
            fail("budget_status of %s: spent epsilon %r delta %r" % (rel, es, ds))
        # RDP never spends more than the plain sums when those fit the delta
        # budget (with a smaller delta budget the RDP conversion is the only
        # statement that fits, and may exceed the epsilon sum).
        if sumd <= db_ and es > sume * (1 + 1e-9) + 1e-12:
            fail("budget_status of %s: %s spent epsilon %r exceeds the basic sum %r" % (rel, acct, es, sume))
        if acct == "basic" and (abs(es - sume) > 1e-9 * max(1, sume) or abs(ds - sumd) > 1e-12 + 1e-9 * sumd):
            fail("budget_status of %s: basic spent (%r, %r) != ledger sums (%r, %r)" % (rel, es, ds, sume, sumd))
        if rel in expected:
            seen.add(rel)
            if (acct, eb, db_) != expected[rel]:
                fail("the budget of %s changed to (%s, %r, %r) although every set_budget on it was invalid"
                     % (rel, acct, eb, db_))
            if es > eb * (1 + 1e-12) or ds > db_ * (1 + 1e-12):
                fail("%s overspent: epsilon %r of %r, delta %r of %r" % (rel, es, eb, ds, db_))
    for rel in expected:
        if rel not in seen:
            fail("budget of %s is missing" % rel)
    used = psql(db, """SELECT b.relation::text, count(l.id) FROM dperm.budgets b
                         LEFT JOIN dperm.ledger l ON b.relation = ANY (l.relations)
                        WHERE b.relation::text LIKE 'fz_budget_%' GROUP BY 1 ORDER BY 1""")
    print("fixed-budget relations released against: " + ", ".join(used.splitlines()), flush=True)


# ---------------------------------------------------------------- memory

def memory_test(n):
    subprocess.run(["dropdb", "--if-exists", MEMDB], capture_output=True)
    subprocess.run(["createdb", MEMDB], check=True)
    psql(MEMDB, """CREATE EXTENSION dperm;
      CREATE TABLE mem AS SELECT ARRAY[sin(i), cos(i), i / 20.0]::float8[] AS f, i % 2 = 0 AS y,
                                 (i % 3)::float8 AS z FROM generate_series(1, 20) i;""")
    every = max(1, n // 10)
    lines = ["\\set ON_ERROR_STOP 1", "SET client_min_messages = warning;",
             "SELECT '@@RSS 0 ' || substring(pg_read_file('/proc/self/status') from 'VmRSS:\\s*([0-9]+)');"]
    done = 0
    while done < n:
        k = min(every, n - done)
        # \\gexec: every training is a top-level statement of its own; both
        # losses (softmax too), both label types and the dp_model output are exercised.
        lines.append(
            "SELECT format($q$SELECT length(m::text) FROM (SELECT %%s AS m FROM mem) s$q$, "
            "CASE i %% 4 WHEN 0 THEN $a$dp_logreg(f, y, '{\"epsilon\": 1, \"l2\": 0.1}')$a$ "
            "WHEN 1 THEN $a$dp_logreg(f, z, '{\"epsilon\": 1, \"delta\": 1e-6}')$a$ "
            "WHEN 2 THEN $a$dp_softmax(f, z::int, '{\"epsilon\": 1, \"l2\": 0.1, \"classes\": 3}')$a$ "
            "ELSE $a$dp_huber(f, z, '{\"epsilon\": 2, \"l2\": 0.5}')$a$ END) "
            "FROM generate_series(%d, %d) i \\gexec" % (done + 1, done + k))
        done += k
        lines.append("SELECT '@@RSS %d ' || substring(pg_read_file('/proc/self/status') from 'VmRSS:\\s*([0-9]+)');" % done)
    lines.append("SELECT '@@LEDGER ' || count(*) FROM dperm.ledger;")
    path = os.path.join(WORKDIR, "fuzz_memory.sql")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    t0 = time.monotonic()
    p = subprocess.run(["psql", "-X", "-q", "-At", "-d", MEMDB, "-f", path], capture_output=True, text=True)
    secs = time.monotonic() - t0
    if p.returncode != 0:
        fail("memory loop failed (psql exit %d): %s" % (p.returncode, p.stderr[-2000:]))
        return
    rss = []
    ledger = None
    for line in p.stdout.splitlines():
        if line.startswith("@@RSS "):
            _, k, kb = line.split()
            rss.append((int(k), int(kb)))
        elif line.startswith("@@LEDGER "):
            ledger = int(line.split()[1])
    print("memory: %d trainings in %.1f s (%.2f ms each); VmRSS kB by trainings: %s"
          % (n, secs, 1000 * secs / max(n, 1), ", ".join("%d:%d" % x for x in rss)), flush=True)
    if ledger != n:
        fail("memory loop: %d trainings but %s ledger rows" % (n, ledger))
    base = [kb for k, kb in rss if k >= 0.2 * n]
    if len(base) >= 2:
        growth = base[-1] - base[0]
        peak = max(base) - base[0]
        print("memory: RSS growth from %d%% to 100%% of the loop: %+d kB (peak %+d kB; bound %d kB)"
              % (20, growth, peak, RSS_BOUND_KB), flush=True)
        if growth > RSS_BOUND_KB or peak > RSS_BOUND_KB:
            fail("backend RSS grew by %d kB (peak %d kB) over %d trainings" % (growth, peak, n - n // 5))
    subprocess.run(["dropdb", "--if-exists", MEMDB], capture_output=True)


# ---------------------------------------------------------------- main

def main():
    t_start = time.monotonic()
    print("fuzz: seed %d, %d statements, statement_timeout %d ms, %d trainings"
          % (SEED, N, TIMEOUT_MS, TRAININGS), flush=True)
    subprocess.run(["dropdb", "--if-exists", DB], capture_output=True)
    subprocess.run(["createdb", DB], check=True)
    psql(DB, SETUP)
    stmts = generate(N, SEED, TIMEOUT_MS)
    t0 = time.monotonic()
    results = run_campaign(stmts, DB)
    t_campaign = time.monotonic() - t0

    with open(os.path.join(WORKDIR, "fuzz_results.tsv"), "w") as fh:
        for i, res in enumerate(results):
            fh.write("%d\t%s\t%.3f\t%d\t%s\t%s\n" % (i, res.state, res.seconds, res.released,
                                                   (res.message or "").replace("\n", " ")[:300],
                                                   stmts[i][0].replace("\n", " ")))
    hist = collections.Counter(res.state or "none" for res in results)
    ok = hist.get("00000", 0)
    print("campaign: %d statements in %.1f s: %d succeeded, %d failed with an error; "
          "%d models returned, %d NULL results of a release"
          % (len(stmts), t_campaign, ok, len(stmts) - ok,
             sum(r.released for r in results), sum(r.returned_null for r in results)), flush=True)
    print("SQLSTATE histogram:", flush=True)
    for state, count in sorted(hist.items(), key=lambda x: (-x[1], x[0])):
        print("  %-6s %5d" % (state, count), flush=True)
    examples = {}
    for i, res in enumerate(results):
        if res.state and res.state != "00000":
            examples.setdefault(res.state, (i, res.message))
    print("one message per SQLSTATE:", flush=True)
    for state, (i, msg) in sorted(examples.items()):
        print("  %-6s #%d %s" % (state, i, (msg or "").replace("\n", " ")[:160]), flush=True)
    for i, res in enumerate(results):
        sql = stmts[i][0]
        if res.state in ("XX000", "XX001", "XX002"):
            fail("internal error %s at statement %d: %s\n    statement: %s" % (res.state, i, res.message, sql[:1000]),
                 kind="internal error: " + (res.message or "")[:60])
        elif res.state is None:
            fail("statement %d never completed: %s" % (i, sql[:500]))
        elif res.state not in ("00000", "CONN") and not (res.message or "").strip():
            fail("statement %d failed with %s and an empty message: %s" % (i, res.state, sql[:500]),
                 kind="empty message")
        elif res.state not in ("00000", "CONN") and re.search(r"boost::|std::|Eigen|basic_string|_M_|vector::", res.message or ""):
            fail("statement %d failed with %s and an unclear message (C++ internals): %s\n    statement: %s"
                 % (i, res.state, res.message, sql[:500]), kind="unclear message")
    for i, res in enumerate(results):
        if res.state is not None and res.seconds > TIMEOUT_MS / 1000.0 + OVERRUN_S:
            fail("statement %d ran %.1f s, ignoring statement_timeout (%d ms) for %.1f s: %s"
                 % (i, res.seconds, TIMEOUT_MS, res.seconds - TIMEOUT_MS / 1000.0, stmts[i][0][:600]))
    secs = collections.Counter()
    for res in results:
        secs[res.state or "none"] += res.seconds
    print("seconds by SQLSTATE: " + ", ".join("%s %.1f" % kv for kv in secs.most_common()), flush=True)
    slow = sorted(((res.seconds, i) for i, res in enumerate(results)), reverse=True)[:3]
    print("slowest statements: " + ", ".join("#%d %.2fs %s" % (i, s, results[i].state) for s, i in slow), flush=True)

    check_ledger(stmts, results, DB)
    if TRAININGS > 0:
        memory_test(TRAININGS)
    print("fuzz: finished in %.1f s" % (time.monotonic() - t_start), flush=True)
    if failures:
        print("fuzz: %d failure(s):" % len(failures), flush=True)
        for kind, count in failure_kinds.most_common():
            print("  %4d x %s" % (count, kind.split("\n")[0][:200]), flush=True)
        sys.exit(1)
    print("fuzz: ok", flush=True)


if __name__ == "__main__":
    main()
