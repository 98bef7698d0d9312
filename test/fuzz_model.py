#!/usr/bin/python3
"""Structure-aware fuzz test of dp_model input (run by test/fuzz_model.sh
inside pg_virtualenv).

Every generated model text goes through the three ways a dp_model is read:

  text    'json'::dp_model                       (dp_model_in)
  jsonb   'json'::jsonb::dp_model                (jsonb_out, then dp_model_in)
  binary  \\copy fz_bin FROM file (FORMAT binary) (dp_model_recv; the file is
          a binary COPY file written here, one row, one dp_model column)

Inputs start from valid models (real releases trained with a seed, and
hand-written ones) and are mutated: wrong container kinds in every field,
missing fields, extreme / negative / fractional sizes and `classes`,
coefficient arrays of the wrong length, numbers beyond double precision
(1e309, 1e-400), deep nesting, long strings, unicode, duplicate keys, broken
syntax; the binary path adds invalid UTF-8, NUL bytes and empty values.

Every input that is accepted is then used: dp_predict, dp_predict_class,
dp_predict_proba (right and wrong dimensions, NaN features), dp_coefficients,
::jsonb, ::text and both round trips, each under an exception handler that
records its SQLSTATE (fz_probe below).

Failures: a lost connection (a crashed backend; fuzz_model.sh also checks the
server log), an internal error (XX000, XX001, XX002) anywhere, an error with
an empty message.

Python 3 standard library only; psql with the PG* variables of pg_virtualenv.
Environment: FUZZ_MODEL_N inputs (10000), FUZZ_MODEL_SEED, FUZZ_MODEL_WORKERS
(4 psql sessions), FUZZ_DB (dperm_fuzz_model), FUZZ_WORKDIR.
"""

import collections
import json
import os
import random
import re
import struct
import subprocess
import sys
import threading
import time

N = int(os.environ.get("FUZZ_MODEL_N", "10000"))
SEED = int(os.environ.get("FUZZ_MODEL_SEED", "20240610"))
WORKERS = int(os.environ.get("FUZZ_MODEL_WORKERS", "4"))
DB = os.environ.get("FUZZ_DB", "dperm_fuzz_model")
WORKDIR = os.environ.get("FUZZ_WORKDIR", "/tmp")
TIMEOUT_MS = 20000
INTERNAL = ("XX000", "XX001", "XX002")

failures = []
failure_kinds = collections.Counter()


def fail(msg, kind=None):
    """Records a failure; only the first few of each kind are printed."""
    failures.append(msg)
    kind = kind or msg
    failure_kinds[kind] += 1
    if failure_kinds[kind] <= 3:
        print("FAIL: " + msg[:1500], flush=True)


def psql(sql, db=DB, check=True):
    p = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", db],
                       input=sql, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("psql failed (%d): %s" % (p.returncode, p.stderr[-2000:]))
    return p.stdout.strip()


# ---------------------------------------------------------------- setup

SETUP = r"""
CREATE EXTENSION dperm;
SET dperm.allow_seed = on;
CREATE TABLE fz_rows AS
  SELECT ARRAY[sin(i), cos(i), (i % 7) / 7.0]::float8[] AS f, i % 3 = 0 AS y,
         (i % 5 - 2)::float8 AS z, i % 3 AS c
    FROM generate_series(1, 200) i;
CREATE TABLE fz_seed (m dp_model);
INSERT INTO fz_seed SELECT dp_logreg(f, y, dp_options(epsilon => 1, seed => 1)) FROM fz_rows;
INSERT INTO fz_seed SELECT dp_logreg(f, y, dp_options(epsilon => 1, seed => 2, fit_intercept => false,
                                                    feature_names => ARRAY['a', 'b', 'c'])) FROM fz_rows;
INSERT INTO fz_seed SELECT dp_huber(f, z, dp_options(epsilon => 1, seed => 3)) FROM fz_rows;
INSERT INTO fz_seed SELECT dp_huber(f, z, dp_options(epsilon => 1, seed => 4, fit_intercept => false)) FROM fz_rows;
INSERT INTO fz_seed SELECT dp_softmax(f, c, dp_options(epsilon => 1, seed => 5, classes => 3)) FROM fz_rows;
INSERT INTO fz_seed SELECT dp_softmax(f, c, dp_options(epsilon => 1, seed => 6, classes => 4, fit_intercept => false,
                                                     feature_names => ARRAY['x', 'y', 'é'])) FROM fz_rows;
CREATE TABLE fz_bin (m dp_model);

-- The SQLSTATE of one statement run on a model ('00000' when it succeeds).
CREATE FUNCTION fz_try(sql text, m dp_model, x float8[] DEFAULT NULL) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE sql INTO r USING m, x;
  RETURN '00000';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;

-- Uses an accepted model every way there is; returns name:SQLSTATE pairs.
CREATE FUNCTION fz_probe(m dp_model) RETURNS text LANGUAGE plpgsql AS $$
DECLARE d int := 0; r text := '';
BEGIN
  BEGIN
    SELECT count(*) INTO d FROM dp_coefficients(m) WHERE coalesce(class, 0) = 0 AND term <> 'intercept';
  EXCEPTION WHEN OTHERS THEN d := 0;
  END;
  r := 'text:' || fz_try('SELECT length($1::text)', m)
    || ' jsonb:' || fz_try('SELECT $1::jsonb', m)
    || ' text_rt:' || fz_try('SELECT ($1::text)::dp_model', m)
    || ' jsonb_rt:' || fz_try('SELECT ($1::jsonb)::dp_model', m)
    || ' coef:' || fz_try('SELECT count(*) FROM dp_coefficients($1)', m)
    || ' coef_rows:' || fz_try('SELECT string_agg(term || coefficient, '','') FROM dp_coefficients($1)', m)
    || ' predict:' || fz_try('SELECT dp_predict($1, $2)', m, array_fill(0.5::float8, ARRAY[d]))
    || ' class:' || fz_try('SELECT dp_predict_class($1, $2)', m, array_fill(-0.5::float8, ARRAY[d]))
    || ' proba:' || fz_try('SELECT dp_predict_proba($1, $2)', m, array_fill(1e300::float8, ARRAY[d]))
    || ' proba_nan:' || fz_try('SELECT dp_predict_proba($1, $2)', m, array_fill('NaN'::float8, ARRAY[d]))
    || ' predict_bad_dim:' || fz_try('SELECT dp_predict($1, $2)', m, array_fill(0.5::float8, ARRAY[d + 1]))
    || ' class_null:' || fz_try('SELECT dp_predict_class($1, $2)', m, array_fill(NULL::float8, ARRAY[d]));
  RETURN r;
END $$;
"""


# ---------------------------------------------------------------- JSON with hostile tokens

class Raw:
    """JSON text emitted verbatim (numbers a double cannot hold, bad syntax, escapes)."""

    def __init__(self, text):
        self.text = text


class Pairs(list):
    """A JSON object as (key, value) pairs, so keys may repeat."""


def dump(v):
    """JSON text of v; Raw tokens verbatim, Pairs with their repeated keys."""
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, Pairs):
        return "{" + ",".join(json.dumps(k) + ":" + dump(x) for k, x in v) + "}"
    try:  # fast path: no Raw inside
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    except TypeError:
        pass
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k) + ":" + dump(x) for k, x in v.items()) + "}"
    return "[" + ",".join(dump(x) for x in v) + "]"


HOSTILE_NUMBERS = ["1e309", "-1e309", "1e-400", "-1e-400", "1e308", "-1e308", "5e-324", "-0",
                   "0", "1", "-1", "2", "3", "2.5", "0.5", "-2", "1e10", "2147483647", "2147483648",
                   "-2147483649", "4294967296", "9223372036854775808", "100000", "100001",
                   "123456789012345678901234567890", "1e100000", "1e-100000", "1e1000000",
                   "0.000000000000000000000000000001"]
LONG = ["a" * 100000, "é" * 5000, "\U0001F600" * 2000, "b" * 10000]


def deep(n, kind):
    if kind == "array":
        return Raw("[" * n + "]" * n)
    return Raw('{"a":' * n + "1" + "}" * n)


def hostile_value(rng, small=False):
    """A value of a random kind (object, array, string, number, null, bool,
    deep nesting, long string); small: no deep nesting, no long strings."""
    kind = rng.choice(["obj", "obj", "arr", "arr", "arr_obj", "arr_str", "str", "num", "num",
                       "null", "bool", "unicode", "empty"] + ([] if small else ["deep", "long"]))
    if kind == "obj":
        return rng.choice([{}, {"a": 1}, {"feature_bound": 1, "fit_intercept": True, "huber_delta": 1},
                           {"0": 1, "1": 2}, {"loss": "huber"}])
    if kind == "arr":
        return rng.choice([[], [1], [1, 2, 3], ["a", "b", "c"], [[1, 2], [3, 4]], [None], [True],
                           [[1, 2, 3], [4, 5, 6], [7, 8, 9]], [{}], [[]]])
    if kind == "arr_obj":
        return [{"a": 1}, {"b": 2}, {"c": 3}]
    if kind == "arr_str":
        return ["x"] * rng.randint(0, 5)
    if kind == "str":
        return rng.choice(["", "a", "logistic", "huber", "softmax", "1", "true", "null", "[1]", "{}"])
    if kind == "num":
        return Raw(rng.choice(HOSTILE_NUMBERS))
    if kind == "null":
        return None
    if kind == "bool":
        return rng.choice([True, False])
    if kind == "deep":
        return deep(rng.choice([10, 100, 1000, 10000]), rng.choice(["array", "object"]))
    if kind == "long":
        return rng.choice(LONG)
    if kind == "unicode":
        return Raw(rng.choice(['"\\u0000"', '"\\ud800"', '"\\udc00\\ud800"', '"\\u00e9\\u4e2d"',
                               '"\\uD83D\\uDE00"', '"\\\\"', '"\\/"']))
    return rng.choice([[], {}, ""])


def collision(key, rng):
    """An array that, read as an object (an old bug), holds `key`:
    three strings whose bytes, shifted by the 12 bytes of three JEntries,
    spell the key at the middle entry the binary search probes first. The
    value then comes from a JEntry made of the first string's bytes: a
    numeric, string or container at an offset of about 256 MB (a crash
    when dereferenced), or nearby."""
    far = rng.choice(["zzz\\u000f", "\\u0001\\u0001\\u0001\\u0001", "\\u0001aaa"])
    kind = rng.choice(["aaa\\u0010", "aaa\\u0010", "aaa\\u0001", "aaaP", "aaa0", "aaa@"])
    pad = "X" * 12
    return Raw('["%s%s", "%s%s", "%s"]' % (far, kind, pad, key[0], key[1:]))


def paths(v, prefix=()):
    """Every path (tuple of keys / indexes) in v, the root excluded."""
    out = []
    if isinstance(v, dict):
        items = v.items()
    elif isinstance(v, list):
        items = enumerate(v)
    else:
        return out
    for k, x in items:
        out.append(prefix + (k,))
        if len(out) < 2000:
            out.extend(paths(x, prefix + (k,)))
    return out


IMPORTANT = [("loss",), ("preprocessing",), ("preprocessing", "feature_bound"),
             ("preprocessing", "huber_delta"), ("preprocessing", "fit_intercept"),
             ("coefficients",), ("coefficients", 0), ("coefficients", 1), ("coefficients", 0, 0),
             ("intercept",), ("intercept", 0), ("classes",), ("feature_names",),
             ("feature_names", 0), ("feature_names", 2), ("d",), ("format",)]


def get_parent(v, path):
    for k in path[:-1]:
        if isinstance(v, dict) and k in v:
            v = v[k]
        elif isinstance(v, list) and isinstance(k, int) and k < len(v):
            v = v[k]
        else:
            return None
    return v


def set_at(v, path, value):
    parent = get_parent(v, path)
    k = path[-1]
    if isinstance(parent, dict) and isinstance(k, str):
        parent[k] = value
    elif isinstance(parent, list) and isinstance(k, int) and k < len(parent):
        parent[k] = value


def delete_at(v, path):
    parent = get_parent(v, path)
    k = path[-1]
    if isinstance(parent, dict) and k in parent:
        del parent[k]
    elif isinstance(parent, list) and isinstance(k, int) and k < len(parent):
        del parent[k]


def random_path(rng, m):
    if rng.random() < 0.7:
        return rng.choice(IMPORTANT)
    ps = paths(m)
    return rng.choice(ps) if ps else ("loss",)


def resize(rng, arr, fill):
    """An array made shorter or longer (or empty, or much longer)."""
    if not isinstance(arr, list):
        arr = []
    n = rng.choice([0, max(len(arr) - 1, 0), len(arr) + 1, len(arr) * 2, 1, rng.randint(0, 50),
                    rng.choice([1000, 100000])])
    small = [x for x in arr if not isinstance(x, (str, list, dict, Raw)) or (isinstance(x, str) and len(x) < 100)]
    return [small[i % len(small)] if small and rng.random() < 0.5 else fill(i) for i in range(n)]


def mutate(rng, m):
    """Applies one structure-aware mutation to the model m (a dict) in place;
    may return a replacement (a non-object, or a Pairs with duplicate keys)."""
    op = rng.choice(["kind", "kind", "kind", "kind", "delete", "number", "classes", "classes",
                     "length", "length", "softmax_rows", "names", "names", "loss", "long",
                     "unicode", "dup", "deep", "fit", "top", "size_bomb", "collide", "collide"])
    if op == "kind":
        set_at(m, random_path(rng, m), hostile_value(rng))
    elif op == "delete":
        delete_at(m, random_path(rng, m))
    elif op == "number":
        nums = [p for p in paths(m) if isinstance(get_parent(m, p), (dict, list))
                and isinstance(_get(m, p), (int, float)) and not isinstance(_get(m, p), bool)]
        if nums:
            set_at(m, rng.choice(nums), Raw(rng.choice(HOSTILE_NUMBERS)))
    elif op == "classes":
        m["classes"] = rng.choice([Raw(x) for x in HOSTILE_NUMBERS] + ["3", None, [3], {"k": 3}, True])
    elif op == "length":
        key = rng.choice(["coefficients", "intercept", "feature_names"])
        v = m.get(key)
        if isinstance(v, list):
            fill = (lambda i: "f%d" % i) if key == "feature_names" else (lambda i: rng.uniform(-3, 3))
            if v and isinstance(v[0], list) and rng.random() < 0.5:
                k = rng.randrange(len(v))
                v[k] = resize(rng, v[k], lambda i: rng.uniform(-3, 3))
            else:
                m[key] = resize(rng, v, fill)
        else:
            m[key] = [rng.uniform(-1, 1) for _ in range(rng.randint(0, 5))]
    elif op == "softmax_rows":
        # softmax shapes on any model: ragged rows, a huge first row with empty
        # others (an allocation of classes x first-row length), rows of the wrong kind
        k = rng.choice([2, 3, 4, 100, 1000])
        m["loss"] = "softmax"
        m["classes"] = k
        shape = rng.choice(["ragged", "bomb", "kinds", "ok"])
        if shape == "ragged":
            m["coefficients"] = [[0.1] * rng.randint(0, 4) for _ in range(k)]
        elif shape == "bomb":
            m["classes"] = rng.choice([1000, 100000]) if rng.random() < 0.5 else k
            m["coefficients"] = [[0] * rng.choice([1000, 100000])] + [[] for _ in range(m["classes"] - 1)]
        elif shape == "kinds":
            m["coefficients"] = [hostile_value(rng, small=k > 4) for _ in range(k)]
        else:
            m["coefficients"] = [[0.5, -0.5, 0.25] for _ in range(k)]
        m["intercept"] = rng.choice([[0.1] * k, [0.1] * (k + 1), None, 0.5, {"a": 1}, [[0.1]] * k])
    elif op == "names":
        d = _d(m)
        m["feature_names"] = rng.choice([
            {"a": "x"}, "abc", 3, None, True, [], ["n%d" % i for i in range(d + 1)],
            ["n%d" % i for i in range(max(d - 1, 0))], [1] * d, [None] * d, [["a"]] * d,
            [{"a": "b"}] * d, ["intercept"] * d, [""] * d, [rng.choice(LONG)] * min(d, 10),
            ["\U0001F600é\u4e2d"] * d, ["n%d" % i for i in range(d)], {"0": "a", "1": "b", "2": "c"}])
    elif op == "loss":
        m["loss"] = rng.choice(["logistic", "huber", "softmax", "Logistic", "", "softmax ", "logistic\u0000",
                                "poisson", 1, None, ["logistic"], {"loss": "logistic"}])
    elif op == "long":
        set_at(m, random_path(rng, m), rng.choice(LONG))
    elif op == "unicode":
        set_at(m, random_path(rng, m), hostile_value(random.Random(rng.random())) if rng.random() < 0.3
               else Raw(rng.choice(['"\\u0000"', '"\\ud800"', '"\u00e9\u4e2d\U0001F600"'])))
    elif op == "dup":
        pairs = Pairs(m.items())
        key = rng.choice(["loss", "preprocessing", "coefficients", "intercept", "classes", "feature_names"])
        extra = (key, hostile_value(rng))
        if rng.random() < 0.5:
            pairs.insert(0, extra)
        else:
            pairs.append(extra)
        return pairs
    elif op == "deep":
        set_at(m, random_path(rng, m), deep(rng.choice([100, 1000, 10000, 20000]), rng.choice(["array", "object"])))
    elif op == "fit":
        pre = m.get("preprocessing")
        if isinstance(pre, dict):
            pre["fit_intercept"] = not pre.get("fit_intercept", False)
    elif op == "top":
        return rng.choice([[m], [m, m], "model", 1, None, True, [], deep(10000, "array"),
                           {"model": m}, [[m]]])
    elif op == "collide":
        # an array where an object belongs, built to be misread (see collision)
        key = rng.choice(["feature_bound", "huber_delta", "fit_intercept"])
        m["preprocessing"] = collision(key, rng)
    elif op == "size_bomb":
        n = rng.choice([1000] * 10 + [10000] * 5 + [100000] + [1000000] * (rng.random() < 0.1))
        if m.get("loss") == "softmax":
            k = m.get("classes") if isinstance(m.get("classes"), int) else 3
            m["coefficients"] = [[0.25] * (n // max(k, 1)) for _ in range(k)]
        else:
            m["coefficients"] = [0.25] * n
    return None


def _get(v, path):
    for k in path:
        v = v[k]
    return v


def _d(m):
    c = m.get("coefficients")
    if isinstance(c, list):
        if c and isinstance(c[0], list):
            return len(c[0])
        return len(c)
    return 3


def hand_model(rng):
    """A valid model written by hand (random sizes), as SELECT m::text would print it."""
    loss = rng.choice(["logistic", "huber", "softmax"])
    d = rng.choice([0, 1, 2, 3, 5, 10, 40])
    fit = rng.random() < 0.7 or d == 0
    m = {"format": "dperm.model/1", "loss": loss, "algorithm": "output_gd"}
    if loss == "softmax":
        k = rng.choice([2, 3, 5, 10])
        m["classes"] = k
        m["coefficients"] = [[round(rng.uniform(-3, 3), 4) for _ in range(d)] for _ in range(k)]
        m["intercept"] = [round(rng.uniform(-1, 1), 4) for _ in range(k)] if fit else None
    else:
        m["coefficients"] = [round(rng.uniform(-3, 3), 4) for _ in range(d)]
        m["intercept"] = round(rng.uniform(-1, 1), 4) if fit else None
    if rng.random() < 0.5:
        m["feature_names"] = ["f%d" % i for i in range(d)]
    m["d"] = d
    m["preprocessing"] = {"feature_bound": rng.choice([1, 0.5, 10, 1e-300, 1e300]), "fit_intercept": fit,
                          "huber_delta": rng.choice([1, 0.1, 1e300])}
    return m


def text_mutation(rng, s):
    """Byte-level damage to JSON text."""
    op = rng.choice(["truncate", "insert", "delete", "swap"])
    if not s:
        return s
    i = rng.randrange(len(s))
    if op == "truncate":
        return s[:i]
    if op == "insert":
        return s[:i] + rng.choice(['"', "{", "[", "]", "}", ",", ":", "\\", "x", "\u00e9", " "]) + s[i:]
    if op == "delete":
        return s[:i] + s[i + 1:]
    j = rng.randrange(len(s))
    return s[:min(i, j)] + s[max(i, j):]  # a slice cut out


def generate(n, seeds, seed):
    """n inputs: (text, binary value: bytes or 'NULL', valid: unmutated)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        base = json.loads(rng.choice(seeds)) if rng.random() < 0.6 else hand_model(rng)
        valid = rng.random() < 0.05
        if valid:
            text = dump(base)  # unmutated: must be accepted
        else:
            m = base
            for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
                if not isinstance(m, dict):
                    break
                repl = mutate(rng, m)
                if repl is not None:
                    m = repl
            text = dump(m)
            if rng.random() < 0.05:
                text = text_mutation(rng, text)
        data = text.encode("utf-8")
        binary = None
        r = 1 if valid else rng.random()
        if r < 0.03:
            binary = data[:rng.randrange(len(data) + 1)] + bytes([rng.choice([0xff, 0xc3, 0x80, 0xed, 0xa0, 0xf4])]) + data[rng.randrange(len(data) + 1):]
        elif r < 0.05:
            i = rng.randrange(len(data) + 1)
            binary = data[:i] + b"\x00" + data[i:]
        elif r < 0.06:
            binary = rng.choice([b"", None])  # empty value, NULL
            if binary is None:
                binary = "NULL"
        out.append((text, binary if binary is not None else data, valid))
    return out


# ---------------------------------------------------------------- running

def lit(s):
    return "'" + s.replace("'", "''") + "'"


def copy_file(path, value):
    """A binary COPY file with one row of one column (value: bytes or 'NULL')."""
    with open(path, "wb") as fh:
        fh.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0))
        fh.write(struct.pack("!h", 1))
        if value == "NULL":
            fh.write(struct.pack("!i", -1))
        else:
            fh.write(struct.pack("!i", len(value)) + value)
        fh.write(struct.pack("!h", -1))


PRELUDE = """\\set VERBOSITY default
\\set SHOW_CONTEXT never
SET statement_timeout = %d;
SET client_min_messages = warning;
""" % TIMEOUT_MS


def marker(step, path):
    return ("\\echo @@E %d %s :SQLSTATE\n\\if :ERROR\n\\echo @@M %d :'LAST_ERROR_MESSAGE'\n\\endif\n"
            % (step, path, step))


def steps_of(i, text, binary, bindir):
    """The psql script pieces for input i: (path, script)."""
    out = []
    has_nul = "\x00" in text
    if not has_nul:
        out.append(("text", "\\echo @@B %d\nSELECT fz_probe(%s::dp_model);\n" % (0, lit(text))))
        out.append(("jsonb", "\\echo @@B %d\nSELECT fz_probe((%s::jsonb)::dp_model);\n" % (0, lit(text))))
    fpath = os.path.join(bindir, "in%d.copy" % i)
    copy_file(fpath, binary)
    out.append(("binary", "\\echo @@B %d\n\\copy fz_bin FROM '%s' WITH (FORMAT binary)\n" % (0, fpath)))
    out.append(("binary_use", "\\echo @@B %d\nWITH d AS (DELETE FROM fz_bin RETURNING m) "
                              "SELECT fz_probe(m) FROM d WHERE m IS NOT NULL;\n" % 0))
    return out


class Step:
    __slots__ = ("input", "path", "script", "state", "message", "probe")

    def __init__(self, i, path, script):
        self.input, self.path, self.script = i, path, script
        self.state = None
        self.message = None
        self.probe = []


def unquote(text):
    t = text.strip()
    if t.startswith("E'") and t.endswith("'"):
        return t[2:-1].replace("''", "'").replace("\\\\", "\\")
    if t.startswith("'") and t.endswith("'"):
        return t[1:-1].replace("''", "'")
    return t


def wait_for_server():
    for _ in range(120):
        p = subprocess.run(["psql", "-X", "-Atc", "SELECT 1", "-d", DB], capture_output=True, text=True)
        if p.returncode == 0:
            return True
        time.sleep(0.5)
    return False


def run_shard(steps, shard, lost):
    """Runs steps in one psql session; after a lost connection, resumes after
    the step that was running."""
    start = 0
    while start < len(steps):
        path = os.path.join(WORKDIR, "fuzz_model_%d_%d.sql" % (shard, start))
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(PRELUDE)
            for k in range(start, len(steps)):
                s = steps[k]
                fh.write(s.script.replace("@@B 0", "@@B %d" % k, 1))
                fh.write(marker(k, s.path))
        p = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=0", "-d", DB, "-f", path],
                           capture_output=True, text=True, errors="replace")
        current = None
        msg_of = None
        for line in p.stdout.splitlines():
            if line.startswith("@@B "):
                current = int(line.split()[1])
                msg_of = None
            elif line.startswith("@@E "):
                parts = line.split(" ")
                k = int(parts[1])
                steps[k].state = parts[3].strip() if len(parts) > 3 else ""
                current = None
                msg_of = None
            elif line.startswith("@@M "):
                parts = line.split(" ", 2)
                k = int(parts[1])
                steps[k].message = parts[2] if len(parts) > 2 else ""
                msg_of = k
            elif msg_of is not None:
                steps[msg_of].message += "\n" + line
            elif current is not None and line.startswith("text:"):
                steps[current].probe.append(line)
        for s in steps[start:]:
            if s.message is not None:
                s.message = unquote(s.message)
        if p.returncode == 0 and current is None:
            os.unlink(path)
            break
        if current is None:
            done = [k for k in range(start, len(steps)) if steps[k].state is not None]
            current = (max(done) + 1) if done else start
        if current >= len(steps):
            break
        steps[current].state = "CONN"
        steps[current].message = p.stderr[-500:]
        lost.append(current)
        if not wait_for_server() or len(lost) > 50:
            fail("shard %d: the server did not come back (or too many lost connections)" % shard)
            break
        start = current + 1


def main():
    t0 = time.monotonic()
    print("fuzz_model: seed %d, %d inputs, %d psql sessions" % (SEED, N, WORKERS), flush=True)
    subprocess.run(["dropdb", "--if-exists", DB], capture_output=True)
    subprocess.run(["createdb", DB], check=True)
    psql(SETUP)
    seeds = [line for line in psql("SELECT m::text FROM fz_seed").splitlines() if line]
    if len(seeds) != 6:
        fail("expected 6 trained seed models, got %d" % len(seeds))
    for s in seeds:
        json.loads(s)
    inputs = generate(N, seeds, SEED)
    bindir = os.path.join(WORKDIR, "fuzz_model_bin")
    os.makedirs(bindir, exist_ok=True)
    steps = []
    for i, (text, binary, _) in enumerate(inputs):
        for path, script in steps_of(i, text, binary, bindir):
            steps.append(Step(i, path, script))
    print("fuzz_model: %d inputs generated (%.1f MB of text) in %.1f s"
          % (N, sum(len(t) for t, _, _ in inputs) / 1e6, time.monotonic() - t0), flush=True)

    # Shards of whole inputs (the binary steps of an input share fz_bin in one session).
    by_input = collections.defaultdict(list)
    for s in steps:
        by_input[s.input].append(s)
    shards = [[] for _ in range(WORKERS)]
    for i in range(N):
        shards[i % WORKERS].extend(by_input[i])
    lost = [[] for _ in range(WORKERS)]
    t1 = time.monotonic()
    threads = [threading.Thread(target=run_shard, args=(shards[w], w, lost[w])) for w in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t_run = time.monotonic() - t1

    # Every step's outcome, for a failed run (kept in FUZZ_WORKDIR).
    with open(os.path.join(WORKDIR, "fuzz_model_results.tsv"), "w", encoding="utf-8") as fh:
        for s in steps:
            fh.write("%d\t%s\t%s\t%s\t%s\t%s\n" % (s.input, s.path, s.state, (s.message or "").replace("\n", " ")[:200],
                                                " ".join(s.probe), inputs[s.input][0][:300].replace("\n", " ")))

    # Counts.
    per_path = collections.Counter()
    accepted = collections.Counter()
    states = collections.defaultdict(collections.Counter)
    probe_states = collections.Counter()
    examples = {}
    internal = 0
    conn = 0
    gave_up = any(len(x) > 50 for x in lost)
    for s in steps:
        if s.path == "binary_use":
            continue
        per_path[s.path] += 1
        states[s.path][s.state or "none"] += 1
        if s.state == "00000":
            accepted[s.path] += 1
        elif s.state:
            examples.setdefault(s.state, (s, s.message))
    for s in steps:
        if s.state == "CONN":
            conn += 1
            text = inputs[s.input][0]
            fail("connection lost (a crash at this input or at a concurrent one) at input %d, path %s: %s"
                 % (s.input, s.path, text[:600]),
                 kind="connection lost")
        if s.state in INTERNAL:
            internal += 1
            fail("internal error %s at input %d (%s): %s\n    input: %s"
                 % (s.state, s.input, s.path, s.message, inputs[s.input][0][:600]),
                 kind="internal error %s: %s" % (s.state, (s.message or "")[:80]))
        elif s.state is None and gave_up:
            continue  # not run: the campaign was given up after lost connections
        elif inputs[s.input][2] and s.state != "00000" and s.state != "CONN":
            fail("valid model rejected at input %d (%s): %s %s\n    input: %s"
                 % (s.input, s.path, s.state, s.message, inputs[s.input][0][:600]), kind="valid model rejected")
        elif s.state is None:
            fail("input %d (%s) never finished" % (s.input, s.path), kind="never finished")
        elif s.state not in ("00000", "CONN") and not (s.message or "").strip():
            fail("input %d (%s): %s with an empty message" % (s.input, s.path, s.state), kind="empty message")
        for line in s.probe:
            for pair in line.split():
                name, _, st = pair.partition(":")
                probe_states[(name, st)] += 1
                if st in INTERNAL:
                    internal += 1
                    fail("internal error %s in %s of the model accepted at input %d (%s): %s"
                         % (st, name, s.input, s.path, inputs[s.input][0][:600]),
                         kind="internal error %s in %s" % (st, name))
    probes = sum(len(s.probe) for s in steps)
    not_run = sum(1 for s in steps if s.state is None)

    print("fuzz_model: %d inputs, %d statements in %.1f s" % (N, len(steps), t_run), flush=True)
    for path in ("text", "jsonb", "binary"):
        hist = ", ".join("%s %d" % kv for kv in sorted(states[path].items(), key=lambda x: (-x[1], x[0])))
        print("  %-6s %5d inputs, %5d accepted; SQLSTATEs: %s" % (path, per_path[path], accepted[path], hist),
              flush=True)
    print("  accepted models used: %d (dp_predict, dp_predict_class, dp_predict_proba, dp_coefficients, "
          "::jsonb, ::text, round trips)" % probes, flush=True)
    by_name = collections.defaultdict(collections.Counter)
    for (name, st), c in probe_states.items():
        by_name[name][st] += c
    for name, c in sorted(by_name.items()):
        print("    %-16s %s" % (name, ", ".join("%s %d" % kv for kv in sorted(c.items(), key=lambda x: -x[1]))),
              flush=True)
    print("  one message per SQLSTATE:", flush=True)
    for st, (s, msg) in sorted(examples.items()):
        print("    %-6s %s" % (st, (msg or "").replace("\n", " ")[:150]), flush=True)
    print("fuzz_model: crashes (lost connections) %d, internal errors (XX000/XX001/XX002) %d%s"
          % (conn, internal, "; %d statements not run (given up)" % not_run if gave_up else ""), flush=True)
    subprocess.run(["dropdb", "--if-exists", DB], capture_output=True)
    print("fuzz_model: finished in %.1f s" % (time.monotonic() - t0), flush=True)
    if failures:
        print("fuzz_model: %d failure(s):" % len(failures), flush=True)
        for kind, count in failure_kinds.most_common():
            print("  %4d x %s" % (count, kind.split("\n")[0][:200]), flush=True)
        sys.exit(1)
    print("fuzz_model: ok", flush=True)


if __name__ == "__main__":
    main()
