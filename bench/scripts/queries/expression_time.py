#!/usr/bin/env python3
"""How much one wide row moves the time of dperm.train_query's input
(docs/user-guide.md, "Training on a query": the stated bound on one row's
expression time). Run by expression_time.sh inside `pg_virtualenv -t`, with
this worktree's build installed under the lock.

For each kind of wide value (text of 1 kB .. 1 MB, numeric of 1k .. 100k
digits), a table of --rows rows holds two equal values of that width per row
(t, u: the comparisons then read both values to their end), stored EXTERNAL
(uncompressed TOAST: its size is the bytes read). For each allowed
expression of the function rule on them (and a plain boolean column, the
baseline), the script
  - asks dperm.explain_query for the text the release reads ("read_as": the
    canonical query with its unit column; a refused expression is reported
    as refused, with its SQLSTATE);
  - times that read as the release consumes it (the label and the unit of
    every row, `SELECT count(*) FILTER (WHERE label), count(DISTINCT unit)`),
    --reps times, the minimum;
  - times dperm.train_query itself on the table (epsilon 1, d = 2), --reps
    times, the minimum.
ns per byte = (time with the expression - time with the plain column) /
(rows * bytes the expression reads per row).
"""

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2]
REPO = BENCH.parent
sys.path.insert(0, str(BENCH / "lib"))
import psql_session  # noqa: E402

# kind -> (widths, the SQL of one value of that width, unit of width)
KINDS = {
    "text": ([1000, 10000, 100000, 1000000],
             # random hex: not compressed anyway (EXTERNAL); width in bytes
             "(SELECT string_agg(md5(random()::text), '') FROM generate_series(1, ceil({w} / 32.0)::int))"
             "::text", "bytes"),
    "numeric": ([1000, 10000, 100000],
                # {w} random decimal digits (numeric's limit: 131072 before the point)
                "('1' || (SELECT string_agg(floor(random() * 10)::int::text, '')"
                " FROM generate_series(1, {w} - 1)))::numeric", "digits"),
}
# kind -> [(name, label expression)]: the most expensive expressions the
# function rule allows on the kind (each checked by dperm.explain_query).
EXPRESSIONS = {
    "text": [("t = u (texteq)", "t = u"),
             ("t < u (text_lt)", "t < u"),
             ("GREATEST(t, u) = t (bttextcmp, texteq)", "GREATEST(t, u) = t"),
             ("md5(t) = md5(u) (md5)", "md5(t) = md5(u)"),
             ("sha512(tb) = sha512(ub) (bytea)", "sha512(tb) = sha512(ub)"),
             ("starts_with(t, u)", "starts_with(t, u)"),
             ("t = u under ICU (und-x-icu)", "ti = ui"),
             ("t < u under ICU (und-x-icu)", "ti < ui"),
             ("lower(v) < upper(v) under ICU (und-x-icu)", "tc < uc"),
             ("lower(v) = upper(v) under ICU (und-x-icu)", "tc = uc")],
    "numeric": [("x = y (numeric_eq)", "x = y"),
                ("-x < abs(y) (numeric_uminus, abs, numeric_lt)", "-x < abs(y)"),
                ("GREATEST(x, y) = x (numeric_cmp, numeric_eq)", "GREATEST(x, y) = x")],
}


def setup(sess, kind, w, rows, icu):
    table = f"et_{kind}_{w}"
    value = KINDS[kind][1].format(w=w)
    if kind == "text":
        names = ["t", "u", "tb", "ub"] + (["ti", "ui", "tc", "uc"] if icu else [])
        cols = ", ".join(f"{c} bytea" if c in ("tb", "ub") else
                         f"{c} text" + (' COLLATE "und-x-icu"' if c in ("ti", "ui", "tc", "uc") else "")
                         for c in names)
    else:
        names = ["x", "y"]
        cols = "x numeric, y numeric"
    # tc, uc: the value in lower and in upper case: unequal bytes from the
    # first letter, equal to ICU at the primary level through the whole
    # string (its slow path: every level compared to the end)
    fill = ", ".join({"tb": "convert_to(v, 'UTF8')", "ub": "convert_to(v, 'UTF8')",
                      "tc": "lower(v)", "uc": "upper(v)"}.get(c, "v") for c in names)
    # EXTERNAL: out of line, uncompressed (the bytes stored are the bytes read)
    storage = ", ".join(f"ALTER COLUMN {c} SET STORAGE EXTERNAL" for c in names)
    sess.query(f"DROP TABLE IF EXISTS {table}; "
               f"CREATE TABLE {table} (id int, features float8[], b bool, {cols}); "
               f"ALTER TABLE {table} {storage}; "
               f"INSERT INTO {table} SELECT i, ARRAY[sin(i) / 2, cos(i) / 2], i % 2 = 0, {fill}"
               f" FROM (SELECT i, {value} AS v FROM generate_series(1, {rows}) i) s; "
               f"VACUUM ANALYZE {table}; "
               f"SELECT dperm.set_budget('{table}', 1e6, 1e-5)")
    # the bytes an expression of two values reads per row (uncompressed)
    if kind == "text":
        per_row = sess.value(f"SELECT avg(octet_length(t) + octet_length(u)) FROM {table}")
    else:
        per_row = sess.value(f"SELECT avg(pg_column_size(x) + pg_column_size(y)) FROM {table}")
    return table, float(per_row)


def explain(sess, table, label):
    """The text dperm.train_query reads (dperm.explain_query's read_as), or
    None and the refusal (SQLSTATE: message)."""
    q = f"SELECT features, {label} AS l FROM public.{table}"
    refused = sess.value(f"SELECT pg_temp.refusal($q${q}$q$)")
    if refused != "accepted":
        return None, refused
    # one line (psql's unaligned output is read line by line)
    return sess.value("SELECT replace(dperm.explain_query("
                      f"$q${q}$q$, 'features', 'l', 'logistic', dp_options(epsilon => 1, dimension => 2),"
                      " 100)->>'read_as', E'\\n', ' ')"), None


def timed(sess, sql, reps):
    """The least wall time of `sql`, in ms, over reps runs (server side)."""
    return float(sess.value(f"SELECT pg_temp.least_ms($s${sql}$s$, {reps})"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=str(BENCH / "reports" / "expression_time.md"))
    ap.add_argument("--command", default="bash bench/scripts/queries/expression_time.sh")
    ap.add_argument("--repo", default=str(REPO))
    a = ap.parse_args()

    (sess,), build, _ = psql_session.installed_session(a.repo)
    started = time.time()
    sess.query("SET client_min_messages = warning; SET max_parallel_workers_per_gather = 0")
    sess.query("""CREATE FUNCTION pg_temp.least_ms(sql text, reps int) RETURNS float8 LANGUAGE plpgsql AS $f$
      DECLARE best float8 := 'Infinity'; t0 timestamptz;
      BEGIN
        FOR i IN 1 .. reps LOOP
          t0 := clock_timestamp(); EXECUTE sql;
          best := least(best, extract(epoch FROM clock_timestamp() - t0) * 1000);
        END LOOP;
        RETURN best;
      END $f$""")
    sess.query("""CREATE FUNCTION pg_temp.refusal(q text) RETURNS text LANGUAGE plpgsql AS $f$
      BEGIN PERFORM dperm.explain_query(q, 'features', 'l', 'logistic',
                                        dp_options(epsilon => 1, dimension => 2), 100);
        RETURN 'accepted';
      EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM; END $f$""")
    # What the function rule allows on variable-width values: IMMUTABLE
    # LEAKPROOF functions with an argument of a varlena type (typlen -1),
    # beside the reviewed list of query_functions.cpp (numeric's).
    varlena = [r[0] for r in sess.query(
        "SELECT DISTINCT p.oid::regprocedure::text FROM pg_proc p, unnest(p.proargtypes) a(t)"
        " JOIN pg_type ty ON ty.oid = a.t"
        " WHERE p.provolatile = 'i' AND p.proleakproof AND ty.typlen = -1 ORDER BY 1")]
    icu = sess.value("SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu')") == "t"
    base_of = {}  # (kind, width) -> the plain column's (read ms, train_query ms)
    results = []  # (kind, width, unit, per_row_bytes, name, read_ms, train_ms, read_ns_b, train_ns_b)
    for kind, (widths, _, unit) in KINDS.items():
        for w in widths:
            table, per_row = setup(sess, kind, w, a.rows, icu)
            base = None
            for name, label in [("plain column b (baseline)", "b")] + EXPRESSIONS[kind]:
                if not icu and "ICU" in name:
                    continue
                read_as, refused = explain(sess, table, label)
                if refused is not None:
                    results.append((kind, w, unit, per_row, name, None, None, None, None, refused))
                    continue
                read_ms = timed(sess, "SELECT count(*) FILTER (WHERE l), count(DISTINCT dperm_unit) "
                                      f"FROM ({read_as}) t", a.reps)
                train_ms = timed(sess, "SELECT dperm.train_query($q$SELECT features, "
                                       f"{label} AS l FROM public.{table}$q$, 'features', 'l', "
                                       "'logistic', dp_options(epsilon => 1, dimension => 2))", a.reps)
                if base is None:
                    base = (read_ms, train_ms)
                    base_of[(kind, w)] = base
                    results.append((kind, w, unit, per_row, name, read_ms, train_ms, None, None, None))
                    continue
                scale = 1e6 / (a.rows * per_row)  # ms per (rows * bytes) -> ns per byte
                results.append((kind, w, unit, per_row, name, read_ms, train_ms,
                                (read_ms - base[0]) * scale, (train_ms - base[1]) * scale, None))
            sess.query(f"SELECT dperm.retire_budget('{table}'); DROP TABLE {table}")
            print(f"{kind} {w}: done ({time.time() - started:.0f} s)", flush=True)
    sess.close()

    commit = subprocess.run(["git", "-C", a.repo, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    # The slope of each expression's extra time against the bytes it reads,
    # over all widths (least squares through the origin of the excess over
    # the plain column): robust where one width's difference is noise.
    slopes = []
    for kind, (widths, _, _) in KINDS.items():
        for name, _ in EXPRESSIONS[kind]:
            pts = [(r[3] * a.rows, r[5], r[6], base_of[(kind, r[1])]) for r in results
                   if r[0] == kind and r[4] == name and r[5] is not None]
            if len(pts) < 2:
                continue
            sxx = sum(b * b for b, _, _, _ in pts)
            read = sum(b * (rm - base[0]) for b, rm, _, base in pts) / sxx * 1e6
            train = sum(b * (tm - base[1]) for b, _, tm, base in pts) / sxx * 1e6
            slopes.append((kind, name, read, train))
    worst = max((s[2] for s in slopes), default=0.0)
    worst_train = max((s[3] for s in slopes), default=0.0)
    lines = [
        "# One row's expression time in a query's input (`dperm.train_query`)", "",
        f"Command: `{a.command}` ({datetime.date.today()}, {platform.node()}, {platform.machine()}, "
        f"{os.cpu_count()} cores, shared; commit {commit}, dperm.so build {build}; "
        f"{time.time() - started:.0f} s). {a.rows} rows per table, each time the least of {a.reps} runs.", "",
        "Each row holds two equal values of the width shown (stored EXTERNAL: uncompressed), so",
        "a comparison reads both to their end (under ICU also a lower- and an upper-case copy: equal",
        "at ICU's primary level to the end). *read* is the text the release reads",
        "(`dperm.explain_query`'s `read_as`), consumed as the release consumes it (the label and",
        "the unit of every row); *train_query* is the whole release. ns/byte = (time with the",
        "expression - time with the plain column) / (rows × bytes the expression reads per row).", "",
        "| kind | width | bytes read per row | expression | read ms | train_query ms | read ns/byte | train_query ns/byte |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for kind, w, unit, per_row, name, read_ms, train_ms, rns, tns, refused in results:
        if refused is not None:
            lines.append(f"| {kind} | {w} {unit} | {per_row:.0f} | {name} | refused: {refused} | | | |")
            continue
        f = lambda v, p: "—" if v is None else f"{v:.{p}f}"  # noqa: E731
        lines.append(f"| {kind} | {w} {unit} | {per_row:.0f} | {name} | {read_ms:.2f} | {train_ms:.2f} | "
                     f"{f(rns, 2)} | {f(tns, 2)} |")
    lines += ["", "## ns per byte, each expression over all widths", "",
              "Least squares through the origin of (time - the plain column's) against rows × bytes read.", "",
              "| kind | expression | read ns/byte | train_query ns/byte |", "|---|---|---|---|"]
    lines += [f"| {k} | {n} | {r:.2f} | {t:.2f} |" for k, n, r, t in slopes]
    lines += ["",
              f"Largest: c = {worst:.2f} ns per byte read (the read of the input), {worst_train:.2f} ns per "
              "byte (the whole release: noisier, its fixed cost is tens of milliseconds, and it evaluates",
              "a row's label only when the row is among the noisy count's m it reads, so its least time",
              "over runs favours small noisy counts).", ""]
    lines += ["## What the function rule allows on variable-width values", "",
              "The IMMUTABLE LEAKPROOF functions of this server with an argument of a variable-width",
              f"type ({len(varlena)}; dperm also allows numeric's comparisons, abs and unary minus by",
              "its reviewed list, and its own total float8 functions, of constant time):", "",
              ", ".join(f"`{v}`" for v in varlena), ""]
    with open(a.out, "w") as fh:
        fh.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
