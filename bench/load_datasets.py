#!/usr/bin/env python3
"""Preprocess the Table 2 datasets of Zhang et al. (IJCAI 2017) and load them.

Standard library only. Preprocessing, identical for every dataset:
  * categorical column -> k-1 0/1 indicator columns (levels in sorted string
    order, the first level is dropped), expanded in place of the column;
  * numeric column -> min-max scaled to [0, 1] (a constant column gives 0);
  * each feature vector divided by max(1, ||x||_2), so ||x||_2 <= 1;
  * classification label -> boolean; regression target -> min-max [0, 1].

Encoding choices (d = number of feature columns; paper Table 2 in brackets):
  BANK       d=42  [42]  7 numeric + 9 categorical (35 indicators).
  ADULT      d=100 [110] adult.data only; 6 numeric + 8 categorical, '?' kept
             as a level. Full k-level one-hot would give 108; 110 is not
             reached by any natural encoding we found.
  CreditCard d=30  [34]  ID dropped; SEX, EDUCATION, MARRIAGE categorical
             (codes as given, incl. the undocumented 0/5/6), the other 20
             columns (LIMIT_BAL, AGE, PAY_0..PAY_6, BILL_AMT*, PAY_AMT*)
             numeric. Alternatives: full one-hot of the three -> 33
             (34 only with an intercept or with ID kept as a feature);
             undocumented codes merged into "other" -> 26;
             PAY_* categorical as well -> 82.
  WINE       d=12  [12]  red then white; 11 numeric + colour indicator
             (white=1, red=0).
  BIKE       d=53  [62]  instant, dteday, casual, registered dropped;
             season, yr, mnth, hr, holiday, weekday, workingday, weathersit
             categorical (yr/holiday/workingday become their own 0/1);
             temp, atemp, hum, windspeed numeric. Alternatives: full one-hot
             -> 61 (62 only with 'instant' kept); hr numeric -> 31.
  We keep k-1 everywhere because it is the rule that reproduces BANK's 42.

Fashion-MNIST (Debian package dataset-fashion-mnist, IDX files under
/usr/share/datasets/fashion-mnist; the MNIST stand-in of the DP-LSSGD
experiments): "fashion" is the 60000 training images, "fashion_test" the
10000 test images; pixels / 255, then each row divided by max(1, ||x||_2)
like every other dataset (d = 784); label = class 0..9 (int column).

PSID7682 (../shared/data/panel/psid7682.csv.gz, beside raw/): the panel of
595 persons x 7 years, loaded as it is into a table `psid` of its raw
columns (id, year int; experience, weeks, education int; wage float8; the
yes/no and level columns as text), nothing encoded: the user guide's
"Training on a query" walk-through trains on raw columns.

Usage:
  python3 bench/load_datasets.py --load psid
  python3 bench/load_datasets.py --describe
  python3 bench/load_datasets.py --copy bank      # COPY text: features, label
  python3 bench/load_datasets.py --load all [--psql-args "-d mydb"]
"""

import argparse
import csv
import gzip
import hashlib
import io
import math
import os
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# sha256 of the .gz files, from ../shared/data/README.md
SHA256 = {
    "bank-full.csv.gz": "a33820520e31d26b498e31003e99eb0e477690b699a38eade375acf3b3004dcd",
    "adult.data.gz": "c7a2b4716a97f930123e0baf879188d701e798172631a654fc703d4b082907f3",
    "credit-default.csv.gz": "045eb5c66f98a50f2928387cad5146fd0f0d8650d165cb46eddd922f2428d410",
    "winequality-red.csv.gz": "bb4d056e7e6f9614f956578f99a192fa07c673b656154f4c1dd3fb0f30ba899f",
    "winequality-white.csv.gz": "e8c0d415c62c994b21fdce86747c5088c0900d1b14524b86dab1e290f5a72bb5",
    "bike-hour.csv.gz": "4aed933551d6ee59c59c4a8a56f3888023d1c7058a12d7691f5084424183a161",
    "psid7682.csv.gz": "1a72dd3986db187aed57d4f828dd927e31b34a8501b51b3676e19cc69dce7c48",
}

NUM, CAT = "num", "cat"
FASHION_DIR = Path(os.environ.get("DPERM_FASHION_DIR", "/usr/share/datasets/fashion-mnist"))


def read_gz(data_dir, name, delimiter, header=True):
    """Verify a .gz file's sha256 and return (header, rows) of its CSV."""
    path = Path(data_dir) / name
    if not path.is_file():
        sys.exit(f"load_datasets: {path} not found (set --data-dir or DPERM_DATA_DIR)")
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != SHA256[name]:
        sys.exit(f"load_datasets: sha256 mismatch for {path}:\n"
                 f"  expected {SHA256[name]}\n  got      {digest}")
    text = gzip.decompress(raw).decode("utf-8")
    rows = [r for r in csv.reader(io.StringIO(text), delimiter=delimiter,
                                  skipinitialspace=True) if r]
    return (rows[0], rows[1:]) if header else (None, rows)


def pick(header, rows, cols, label):
    """Select feature columns (name, kind) and the raw label from rows."""
    idx = [header.index(c) for c, _ in cols]
    li = header.index(label)
    return cols, [[r[i] for i in idx] for r in rows], [r[li] for r in rows]


def load_bank(data_dir):
    """BANK: 7 numeric + 9 categorical features, label y == "yes"."""
    header, rows = read_gz(data_dir, "bank-full.csv.gz", ";")
    numeric = {"age", "balance", "day", "duration", "campaign", "pdays", "previous"}
    cols = [(c, NUM if c in numeric else CAT) for c in header if c != "y"]
    cols, x, y = pick(header, rows, cols, "y")
    return cols, x, [v == "yes" for v in y]


def load_adult(data_dir):
    """ADULT (adult.data only): 6 numeric + 8 categorical, label >50K."""
    header = ["age", "workclass", "fnlwgt", "education", "education-num",
              "marital-status", "occupation", "relationship", "race", "sex",
              "capital-gain", "capital-loss", "hours-per-week",
              "native-country", "income"]
    _, rows = read_gz(data_dir, "adult.data.gz", ",", header=False)
    rows = [[v.strip() for v in r] for r in rows]
    numeric = {"age", "fnlwgt", "education-num", "capital-gain",
               "capital-loss", "hours-per-week"}
    cols = [(c, NUM if c in numeric else CAT) for c in header[:-1]]
    cols, x, y = pick(header, rows, cols, "income")
    return cols, x, [v == ">50K" for v in y]


def load_creditcard(data_dir):
    """CreditCard: drop ID; SEX/EDUCATION/MARRIAGE categorical, rest numeric."""
    label = "default.payment.next.month"
    header, rows = read_gz(data_dir, "credit-default.csv.gz", ",")
    cats = {"SEX", "EDUCATION", "MARRIAGE"}
    cols = [(c, CAT if c in cats else NUM) for c in header if c not in ("ID", label)]
    cols, x, y = pick(header, rows, cols, label)
    return cols, x, [v == "1" for v in y]


def load_wine(data_dir):
    """WINE: red then white, 11 numeric + colour indicator, target quality."""
    xs, ys = [], []
    for colour in ("red", "white"):
        header, rows = read_gz(data_dir, f"winequality-{colour}.csv.gz", ";")
        cols = [(c, NUM) for c in header if c != "quality"]
        cols, x, y = pick(header, rows, cols, "quality")
        xs += [r + [colour] for r in x]
        ys += y
    return cols + [("colour", CAT)], xs, [float(v) for v in ys]


def load_bike(data_dir):
    """BIKE: calendar/weather codes categorical, 4 numeric, target cnt."""
    header, rows = read_gz(data_dir, "bike-hour.csv.gz", ",")
    drop = {"instant", "dteday", "casual", "registered", "cnt"}
    numeric = {"temp", "atemp", "hum", "windspeed"}
    cols = [(c, NUM if c in numeric else CAT) for c in header if c not in drop]
    cols, x, y = pick(header, rows, cols, "cnt")
    return cols, x, [float(v) for v in y]


def read_idx(path):
    """An IDX file (gzip): returns (dims, bytes of the unsigned-byte payload)."""
    if not path.is_file():
        sys.exit(f"load_datasets: {path} not found "
                 "(apt-get install dataset-fashion-mnist, or set DPERM_FASHION_DIR)")
    raw = gzip.decompress(path.read_bytes())
    if raw[0] != 0 or raw[1] != 0 or raw[2] != 8:
        sys.exit(f"load_datasets: {path} is not an unsigned-byte IDX file")
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return dims, raw[4 + 4 * ndim:]


def load_fashion_split(prefix):
    """Fashion-MNIST images (pixels / 255, rows scaled to norm <= 1) and classes."""
    dims, pixels = read_idx(FASHION_DIR / f"{prefix}-images-idx3-ubyte.gz")
    ldims, labels = read_idx(FASHION_DIR / f"{prefix}-labels-idx1-ubyte.gz")
    n, d = dims[0], dims[1] * dims[2]
    assert ldims[0] == n and len(pixels) == n * d
    feats = []
    for i in range(n):
        row = pixels[i * d:(i + 1) * d]
        norm = math.sqrt(sum(v * v for v in row)) / 255.0
        scale = 1.0 / (255.0 * max(1.0, norm))
        feats.append([v * scale for v in row])
    return feats, list(labels)


# name -> (loader, task, paper n, paper d, our d)
DATASETS = {
    "bank": (load_bank, "classification", 45211, 42, 42),
    "adult": (load_adult, "classification", 32561, 110, 100),
    "creditcard": (load_creditcard, "classification", 30000, 34, 30),
    "wine": (load_wine, "regression", 6497, 12, 12),
    "bike": (load_bike, "regression", 17379, 62, 53),
    "fashion": (lambda _: load_fashion_split("train"), "multiclass", 60000, 784, 784),
    "fashion_test": (lambda _: load_fashion_split("t10k"), "multiclass", 10000, 784, 784),
}


def encode(cols, rows):
    """One-hot (k-1) and min-max encode rows, then scale each to norm <= 1."""
    plans = []  # per column: ("num", lo, hi) or ("cat", kept levels)
    for j, (_, kind) in enumerate(cols):
        if kind == NUM:
            vals = [float(r[j]) for r in rows]
            plans.append((NUM, min(vals), max(vals)))
        else:
            plans.append((CAT, sorted({r[j] for r in rows})[1:]))
    out = []
    for r in rows:
        x = []
        for v, plan in zip(r, plans):
            if plan[0] == NUM:
                lo, hi = plan[1], plan[2]
                x.append((float(v) - lo) / (hi - lo) if hi > lo else 0.0)
            else:
                x.extend(1.0 if v == lev else 0.0 for lev in plan[1])
        assert all(0.0 <= t <= 1.0 for t in x), "value outside [0,1] before row scaling"
        norm = math.sqrt(sum(t * t for t in x))
        out.append([t / norm for t in x] if norm > 1.0 else x)
    return out


def prepare(name, data_dir):
    """Return (features, labels, raw labels) for a dataset, checking n and d."""
    loader, task, n, _, d = DATASETS[name]
    if task == "multiclass":  # already numeric; scaled by the loader
        feats, labels = loader(data_dir)
        return feats, labels, labels
    cols, rows, raw = loader(data_dir)
    feats, labels = encode(cols, rows), raw
    if task == "regression":
        lo, hi = min(raw), max(raw)
        labels = [(v - lo) / (hi - lo) for v in raw]
    assert len(feats) == len(labels) == n, f"{name}: n={len(feats)}, expected {n}"
    assert all(len(f) == d for f in feats), f"{name}: d={len(feats[0])}, expected {d}"
    return feats, labels, raw


def copy_lines(feats, labels, with_id):
    """Yield PostgreSQL COPY text rows: [id\\t]{features}\\tlabel."""
    for i, (f, y) in enumerate(zip(feats, labels), 1):
        lab = ("t" if y else "f") if isinstance(y, bool) else repr(y)
        row = "{" + ",".join("0" if v == 0 else repr(v) for v in f) + "}\t" + lab + "\n"
        yield (f"{i}\t" + row) if with_id else row


def describe(data_dir):
    """Print n, d and label balance / target range for every dataset."""
    print(f"{'dataset':<11} {'n':>6} {'d':>4}  notes")
    for name, (_, task, _, paper_d, _) in DATASETS.items():
        feats, labels, raw = prepare(name, data_dir)
        scaled = sum(1 for f in feats if sum(t * t for t in f) > 1 - 1e-12)
        if task == "multiclass":
            note = f"{len(set(labels))} classes"
        elif task == "classification":
            pos = sum(labels)
            note = f"label true {pos} ({100 * pos / len(labels):.2f}%)"
        else:
            note = (f"target [{min(raw):g}, {max(raw):g}] -> [0,1], "
                    f"mean {sum(labels) / len(labels):.4f}")
        note += f"; rows on unit sphere {100 * scaled / len(feats):.1f}%; paper d={paper_d}"
        print(f"{name:<11} {len(feats):>6} {len(feats[0]):>4}  {note}")


PANEL_INT = {"id", "year", "experience", "weeks", "education"}


def load_panel(data_dir, psql_args):
    """(Re)create table psid with the panel's raw columns (see the module doc)."""
    header, rows = read_gz(Path(data_dir).parent / "panel", "psid7682.csv.gz", ",")
    kind = lambda c: "int" if c in PANEL_INT else "float8" if c == "wage" else "text"  # noqa: E731
    types = ", ".join(f'"{c}" {kind(c)} NOT NULL' for c in header)
    cmd = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-1", *psql_args,
           "-c", "SET client_min_messages = warning",
           "-c", "DROP TABLE IF EXISTS psid",
           "-c", f"CREATE TABLE psid ({types}, PRIMARY KEY (id, year))",
           "-c", f"\\copy psid ({', '.join(chr(34) + c + chr(34) for c in header)}) from pstdin"]
    proc = subprocess.run(cmd, input="".join("\t".join(r) + "\n" for r in rows), text=True)
    if proc.returncode != 0:
        sys.exit("load_datasets: psql failed loading psid")
    print(f"loaded psid: {len(rows)} rows, {len({r[0] for r in rows})} persons", file=sys.stderr)


def load(names, data_dir, psql_args):
    """(Re)create each table and stream its rows into psql's \\copy."""
    for name in names:
        if name == "psid":
            load_panel(data_dir, psql_args)
            continue
        feats, labels, _ = prepare(name, data_dir)
        ltype = {"classification": "boolean", "multiclass": "int"}.get(DATASETS[name][1], "float8")
        cmd = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-1", *psql_args,
               "-c", "SET client_min_messages = warning",
               "-c", f"DROP TABLE IF EXISTS {name}",
               "-c", f"CREATE TABLE {name} (id int PRIMARY KEY, "
                     f"features float8[] NOT NULL, label {ltype} NOT NULL)",
               "-c", f"\\copy {name} (id, features, label) from pstdin"]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, text=True)
        try:
            for line in copy_lines(feats, labels, with_id=True):
                proc.stdin.write(line)
            proc.stdin.close()
        except BrokenPipeError:  # psql died early; its error is on stderr
            pass
        if proc.wait() != 0:
            sys.exit(f"load_datasets: psql failed loading {name}")
        print(f"loaded {name}: {len(feats)} rows, d={len(feats[0])}", file=sys.stderr)


def main():
    """Parse the command line and dispatch."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--describe", action="store_true", help="print n, d, notes")
    g.add_argument("--copy", metavar="NAME", choices=DATASETS,
                   help="print COPY text rows (features, label) to stdout")
    g.add_argument("--load", metavar="NAME", nargs="+",
                   help="load tables via psql; NAME... or 'all'")
    ap.add_argument("--psql-args", default="",
                    help='extra psql arguments, one string, e.g. "-d mydb -h localhost"')
    ap.add_argument("--data-dir", default=os.environ.get(
        "DPERM_DATA_DIR", str(REPO.parent / "shared" / "data" / "raw")))
    a = ap.parse_args()
    if a.describe:
        describe(a.data_dir)
    elif a.copy:
        feats, labels, _ = prepare(a.copy, a.data_dir)
        out = sys.stdout
        try:
            for line in copy_lines(feats, labels, with_id=False):
                out.write(line)
            out.flush()
        except BrokenPipeError:  # e.g. piped into head
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    else:
        names = [n for n in DATASETS if not n.startswith("fashion")] if a.load == ["all"] else a.load
        bad = [n for n in names if n not in DATASETS and n != "psid"]
        if bad:
            ap.error(f"unknown dataset(s) {bad}; choose from {list(DATASETS)} or all")
        load(names, a.data_dir, shlex.split(a.psql_args))


if __name__ == "__main__":
    main()
