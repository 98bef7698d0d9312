"""Loads BANK's raw rows (UCI Bank Marketing, bank-full.csv.gz from
$DPERM_SHARED/data/raw, as bench/load_datasets.py reads it) into a table of
raw columns for the Python package's tests and docs/python.md.

bank_raw: id, age int, job text, marital text, education text, in_default
boolean, balance int, housing boolean, loan boolean, contact text, day int,
month text, duration int, campaign int, pdays int, previous int, poutcome
text, y text ('yes'/'no'). Every 97th row gets NULL age, job and housing, so
that the encodings of missing values are exercised.

Usage: python3 python/tests/bank.py [--limit N] [--table NAME]  (PG* env)
"""
import argparse
import csv
import gzip
import io
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import dperm  # noqa: E402
from dperm.connection import run  # noqa: E402

COLUMNS = [("age", "int"), ("job", "text"), ("marital", "text"), ("education", "text"),
           ("in_default", "boolean"), ("balance", "int"), ("housing", "boolean"),
           ("loan", "boolean"), ("contact", "text"), ("day", "int"), ("month", "text"),
           ("duration", "int"), ("campaign", "int"), ("pdays", "int"), ("previous", "int"),
           ("poutcome", "text"), ("y", "text")]
BOOLEAN = {"in_default", "housing", "loan"}


def data_path():
    shared = os.environ.get("DPERM_SHARED",
                            os.path.join(os.path.dirname(os.path.dirname(HERE)), "..", "shared"))
    data_dir = os.environ.get("DPERM_DATA_DIR", os.path.join(shared, "data", "raw"))
    return os.path.join(data_dir, "bank-full.csv.gz")


def load_bank(conn, table="bank_raw", limit=None):
    """Creates ``table`` and copies BANK's rows (the first ``limit``) into it."""
    path = data_path()
    if not os.path.isfile(path):
        raise SystemExit(f"bank.py: {path} not found (set DPERM_SHARED or DPERM_DATA_DIR)")
    buf = io.StringIO()
    with gzip.open(path, "rt", newline="") as f:
        reader = csv.reader(f, delimiter=";")
        next(reader)
        for i, row in enumerate(reader):
            if limit is not None and i >= limit:
                break
            values = [str(i + 1)]
            for (name, _), v in zip(COLUMNS, row):
                if name in BOOLEAN:
                    v = "t" if v == "yes" else "f"
                if (i + 1) % 97 == 0 and name in ("age", "job", "housing"):
                    v = r"\N"
                values.append(v)
            buf.write("\t".join(values) + "\n")
    buf.seek(0)
    cols = ", ".join(f"{n} {t}" for n, t in COLUMNS)
    run(conn, f"DROP TABLE IF EXISTS {table}")
    run(conn, f"CREATE TABLE {table} (id int PRIMARY KEY, {cols})")
    with conn.cursor() as cur:
        cur.copy_expert(f"COPY {table} FROM STDIN", buf)
    run(conn, f"ANALYZE {table}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int)
    ap.add_argument("--table", default="bank_raw")
    a = ap.parse_args()
    load_bank(dperm.connect(), a.table, a.limit)
