"""The statements of the SQL fuzz test (test/fuzz_sql.py): the schema the
campaign runs against (SETUP) and the fixed-seed generator of valid and
hostile statements (generate). Nothing here talks to the server.

Python 3 standard library only.
"""

import json
import random


def lit(s):
    """An SQL string literal."""
    return "'" + s.replace("'", "''") + "'"


# ---------------------------------------------------------------- setup

SETUP = r"""
CREATE EXTENSION dperm;
-- clean rows: d = 3, boolean and float labels, 4 groups
CREATE TABLE fz_clean AS
  SELECT ARRAY[sin(i), cos(i), (i % 7) / 7.0]::float8[] AS f, i % 3 = 0 AS y,
         (i % 5 - 2)::float8 AS z, i % 4 AS g
    FROM generate_series(1, 40) i;
-- hostile values that must be sanitised, not errors
CREATE TABLE fz_hostile (f float8[], y boolean, z float8, g int);
INSERT INTO fz_hostile VALUES
  (ARRAY['NaN', 1, 2]::float8[], true, 'NaN', 0),
  (ARRAY['Infinity', '-Infinity', 0]::float8[], false, 'Infinity', 1),
  (ARRAY[1e308, -1e308, 1e308]::float8[], true, '-Infinity', 2),
  (ARRAY[NULL, 1, NULL]::float8[], NULL, 1e308, 3),
  (NULL, true, 1, 0),
  (ARRAY[5e-324, -0.0, 1e-300]::float8[], false, -1e308, 1),
  (ARRAY['NaN', 'NaN', 'NaN']::float8[], true, NULL, 2),
  (ARRAY[NULL, NULL, NULL]::float8[], false, 0, 3),
  (ARRAY[0.1, 0.2, 0.3]::float8[], true, 0.5, 0),
  (ARRAY['-Infinity', 'NaN', 'Infinity']::float8[], false, 'NaN', 1);
-- rows of different lengths (an error), of no features, none at all, only NULLs
CREATE TABLE fz_mixed AS SELECT f, true AS y, 1.0::float8 AS z, 0 AS g
  FROM (VALUES (ARRAY[1, 2, 3]::float8[]), (ARRAY[1, 2, 3, 4]::float8[]), (ARRAY[1]::float8[])) v(f);
CREATE TABLE fz_zero AS SELECT '{}'::float8[] AS f, i % 2 = 0 AS y, i::float8 AS z, 0 AS g
  FROM generate_series(1, 5) i;
CREATE TABLE fz_empty (f float8[], y boolean, z float8, g int);
CREATE TABLE fz_allnull AS SELECT NULL::float8[] AS f, true AS y, 1.0::float8 AS z, 0 AS g
  FROM generate_series(1, 5);
CREATE TABLE fz_one AS SELECT ARRAY[0.5, -0.5, 0.25]::float8[] AS f, true AS y, 2.0::float8 AS z, 0 AS g;
CREATE TABLE fz_2d AS SELECT ARRAY[[1, 2], [3, 4]]::float8[] AS f, true AS y, 1.0::float8 AS z, 0 AS g;
-- large enough for parallel plans (partial aggregates, serialise, combine)
CREATE TABLE fz_big AS
  SELECT CASE WHEN i % 997 = 0 THEN ARRAY['NaN', 'Infinity', NULL]::float8[]
              ELSE ARRAY[sin(i), cos(i), (i % 11) / 11.0]::float8[] END AS f,
         i % 2 = 0 AS y, (i % 7 - 3)::float8 AS z, i % 4 AS g
    FROM generate_series(1, 20000) i;
CREATE TABLE fz_bigmixed AS SELECT * FROM fz_big;
INSERT INTO fz_bigmixed VALUES (ARRAY[1, 2, 3, 4]::float8[], true, 1, 0);
ANALYZE fz_big, fz_bigmixed;
-- budgets the campaign never changes (its set_budget calls on these are invalid)
CREATE TABLE fz_budget_rdp AS SELECT * FROM fz_clean;
CREATE TABLE fz_budget_basic AS SELECT * FROM fz_clean;
CREATE TABLE fz_budget_zero AS SELECT * FROM fz_clean;
CREATE VIEW fz_view AS SELECT * FROM fz_budget_rdp;
SELECT dperm.set_budget('fz_budget_rdp', 4, 1e-5, 'rdp');
SELECT dperm.set_budget('fz_budget_basic', 6, 1e-4, 'basic');
SELECT dperm.set_budget('fz_budget_zero', 0, 0);
-- budgets the campaign may change at random
CREATE TABLE fz_scratch1 AS SELECT * FROM fz_clean;
CREATE TABLE fz_scratch2 AS SELECT * FROM fz_clean;
SELECT dperm.set_budget('fz_scratch2', 1000, 0.5);
-- a protected relation (dperm.train only) and an unprivileged analyst
CREATE TABLE fz_prot AS SELECT * FROM fz_hostile UNION ALL SELECT * FROM fz_clean;
ALTER TABLE fz_prot ADD COLUMN "Odd Col" float8[] DEFAULT ARRAY[1, 2, 3]::float8[],
  ADD COLUMN t text DEFAULT 'x', ADD COLUMN i int DEFAULT 1;
DO $$ BEGIN CREATE ROLE fz_analyst; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO fz_analyst;
SELECT dperm.protect('fz_prot', ARRAY['fz_analyst']::regrole[]);
-- models for dp_predict / dp_coefficients (four setup releases)
CREATE TABLE fz_models (k text, m dp_model);
INSERT INTO fz_models SELECT /*fz:setup*/ 'logistic', dp_logreg(f, y, '{"epsilon": 1, "l2": 0.1}') FROM fz_clean;
INSERT INTO fz_models SELECT /*fz:setup*/ 'huber', dp_huber(f, z, '{"epsilon": 1, "l2": 0.1, "fit_intercept": false}') FROM fz_clean;
INSERT INTO fz_models SELECT /*fz:setup*/ 'named', dp_logreg(f, z, '{"epsilon": 1, "feature_names": ["a", "b", "c"]}') FROM fz_clean;
INSERT INTO fz_models SELECT /*fz:setup*/ 'softmax', dp_softmax(f, g, '{"epsilon": 1, "l2": 0.1, "classes": 4}') FROM fz_clean;
"""
SETUP_RELEASES = 4
FIXED_BUDGETS = ["fz_budget_rdp", "fz_budget_basic", "fz_budget_zero"]
SCRATCH = ["fz_scratch1", "fz_scratch2"]
TABLES = ["fz_clean", "fz_hostile", "fz_mixed", "fz_zero", "fz_empty", "fz_allnull",
          "fz_one", "fz_2d", "fz_view", "fz_scratch1", "fz_scratch2", "fz_big", "fz_bigmixed",
          "fz_prot"] + FIXED_BUDGETS


# ---------------------------------------------------------------- generator

class Raw:
    """JSON text emitted verbatim (numbers JSON cannot hold exactly, bad syntax)."""

    def __init__(self, text):
        self.text = text


def to_json(v):
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, dict):
        return "{" + ", ".join(json.dumps(k) + ": " + to_json(x) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(to_json(x) for x in v) + "]"
    return json.dumps(v)


OPTION_KEYS = ["epsilon", "delta", "algorithm", "l2", "l1", "fit_intercept", "feature_bound",
               "huber_delta", "radius", "iterations", "step_size", "batch_size", "ls_sigma",
               "accountant", "neighbors", "dataset", "seed", "feature_names", "classes",
               "target_bound", "dimension"]
UNKNOWN_KEYS = ["bogus", "Epsilon", "", " epsilon", "epsilon\u0301", "ε", "x" * 300, "l2 ", "EPSILON"]
HOSTILE_NUMBERS = ["0", "-0", "-0.0", "1", "-1", "0.5", "2", "1e-300", "1e-320", "5e-324", "1e-400",
                   "1e308", "1.7976931348623157e308", "1e309", "1e400", "-1e308", "-1e400",
                   "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                   "18446744073709551616", "1e20", "2.5", "100000000", "100000001", "1e-16",
                   "3.00000000000000000000001", "0.000000000000000000000000000001",
                   "123456789012345678901234567890123456789012345678901234567890"]
HOSTILE_STRINGS = ["NaN", "Infinity", "-Infinity", "inf", "1", "", "output_gd", "dp_sgd", "tight",
                   "paper", "replace_one", "add_remove", "fz_clean", "fz_budget_rdp", "fz_view",
                   "no_such_table", "pg_class", "dperm.ledger", "\"quoted\"", "fz_clean; DROP TABLE fz_clean",
                   "0", "true", "y" * 5000, "pg_catalog.pg_authid", "-", "\u00e9\u4e2d\U0001F600"]
HOSTILE_BAD_JSON = ["NaN", "Infinity", "-Infinity", "01", "1.", ".5", "+1", "0x10", "1e", "--1", "undefined"]


def hostile_value(r, depth=0):
    k = r.random()
    if k < 0.35:
        return Raw(r.choice(HOSTILE_NUMBERS))
    if k < 0.6:
        return r.choice(HOSTILE_STRINGS)
    if k < 0.7:
        return r.choice([True, False, None])
    if k < 0.8 and depth < 3:
        return {r.choice(OPTION_KEYS + UNKNOWN_KEYS): hostile_value(r, depth + 1) for _ in range(r.randint(0, 3))}
    if k < 0.9 and depth < 3:
        return [hostile_value(r, depth + 1) for _ in range(r.randint(0, 4))]
    return [r.choice(["a", "b", "x1", "", "intercept", "a"]) for _ in range(r.randint(0, 6))]


def valid_options(r, d=3, softmax=False):
    o = {"epsilon": r.choice([0.1, 0.5, 1, 2, 10])}
    if softmax and r.random() < 0.95:
        o["classes"] = r.choice([2, 3, 4, 4, 100])
    if r.random() < 0.4:
        o["delta"] = r.choice([0, 1e-8, 1e-6, 1e-5])
    if r.random() < 0.6:
        o["l2"] = r.choice([0.001, 0.01, 0.1, 1])
    if r.random() < 0.15:
        o["fit_intercept"] = r.choice([True, False])
    if r.random() < 0.15:
        o["feature_bound"] = r.choice([0.5, 1, 2, 1e150])
    if r.random() < 0.1:
        o["huber_delta"] = r.choice([0.1, 1, 10])
    if r.random() < 0.1:
        o["target_bound"] = r.choice([0.5, 1, 100, 1e150])
    if r.random() < 0.1:
        o["accountant"] = r.choice(["tight", "paper"])
    if r.random() < 0.1:
        o["iterations"] = r.choice([1, 2, 10, 100])
    if r.random() < 0.05 and d <= 10:
        o["feature_names"] = ["c%d" % i for i in range(d)]
    if r.random() < 0.6:  # d declared (required on budgeted and protected relations)
        o["dimension"] = d if d >= 1 and r.random() < 0.85 else r.choice([1, 2, 4, 1000])
    if r.random() < 0.05:
        o["dataset"] = r.choice(["fz_clean", "fz_scratch1", "fz_budget_rdp", "public.fz_clean"])
    return o


def options_json(r, d=3, softmax=False):
    o = valid_options(r, d, softmax)
    k = r.random()
    if k < 0.45:
        return o
    for _ in range(r.randint(1, 3)):
        m = r.random()
        if m < 0.55:
            o[r.choice(OPTION_KEYS)] = hostile_value(r)
        elif m < 0.75:
            o[r.choice(UNKNOWN_KEYS)] = hostile_value(r)
        elif m < 0.85:
            o.pop("epsilon", None)
        else:
            o["epsilon"] = Raw(r.choice(HOSTILE_NUMBERS))
    return o


SQL_FLOATS = ["0", "-0.0", "1", "-1", "0.5", "1e-300", "1e308", "'NaN'", "'Infinity'", "'-Infinity'",
              "NULL", "5e-324", "1e-5", "0.999999", "1"]
SQL_BIGINTS = ["0", "-1", "1", "10", "100000000", "100000001", "9223372036854775807",
               "-9223372036854775808", "NULL"]
SQL_CLASSES = ["2", "3", "0", "1", "-1", "100000", "100001", "2147483647", "NULL", "2.5", "'3'"]
SQL_TEXTS = ["NULL", "''", "'output_gd'", "'tight'", "'paper'", "'replace_one'", "'add_remove'",
             "'fz_clean'", "'no_such_table'", "'nope'", "repeat('z', 10000)", "'pg_class'"]
SQL_NAME_ARRAYS = ["NULL", "'{}'", "ARRAY['a','b','c']", "ARRAY['a',NULL,'c']", "ARRAY['a']",
                   "ARRAY[[ 'a','b'],['c','d']]", "ARRAY(SELECT 'n' || i FROM generate_series(1, 100000) i)",
                   "ARRAY['','','']"]


def dp_options_call(r, softmax=False, d=3):
    """dp_options(...) with named arguments of hostile SQL values."""
    args = ["epsilon => " + r.choice(SQL_FLOATS + ["1", "1", "0.5"])]
    if softmax and r.random() < 0.9:
        args.append("classes => " + r.choice(["2", "3", "4"]))
    if r.random() < 0.5:
        args.append("dimension => " + r.choice([str(d)] * 6 + ["0", "-1", "NULL", "2147483647", "'3'"]))
    for _ in range(r.randint(0, 4)):
        key = r.choice(OPTION_KEYS[1:])
        if key == "classes":
            val = r.choice(SQL_CLASSES)
        elif key in ("algorithm", "accountant", "neighbors", "dataset"):
            val = r.choice(SQL_TEXTS)
        elif key in ("iterations", "batch_size", "seed", "dimension"):
            val = r.choice(SQL_BIGINTS)
        elif key == "fit_intercept":
            val = r.choice(["true", "false", "NULL"])
        elif key == "feature_names":
            val = r.choice(SQL_NAME_ARRAYS)
        else:
            val = r.choice(SQL_FLOATS)
        args.append("%s => %s" % (key, val))
    args = list(dict((a.split(" => ")[0], a) for a in args).values())  # no repeated names
    return "dp_options(" + ", ".join(args) + ")"


def options_sql(r, d=3, softmax=False):
    """An options argument: literal jsonb, dp_options, NULL, a non-object, per-row values."""
    k = r.random()
    if k < 0.55:
        return lit(to_json(options_json(r, d, softmax))) + r.choice(["", "::jsonb"])
    if k < 0.75:
        return dp_options_call(r, softmax, d)
    if k < 0.8:
        return r.choice(["NULL", "NULL::jsonb", "'null'", "'[]'", "'1'", "'\"epsilon\"'", "'{}'",
                         "'[{\"epsilon\": 1}]'", "'{\"epsilon\": 1'", "'{\"epsilon\": NaN}'",
                         "'{\"epsilon\": ' || repeat('[', 10000) || repeat(']', 10000) || '}'",
                         "'{\"epsilon\": 1, \"epsilon\": -1}'", "'{\"epsilon\": -1, \"epsilon\": 1}'"])
    if k < 0.85:
        return "jsonb_build_object('epsilon', %s::float8)" % r.choice(
            ["'NaN'", "'Infinity'", "1", "-0.0", "1e-310"])
    if k < 0.9:  # options that differ per row
        return r.choice(["jsonb_build_object('epsilon', g + 1)", "jsonb_build_object('epsilon', 1, 'l2', random())",
                         "CASE WHEN g = 0 THEN NULL ELSE '{\"epsilon\": 1}'::jsonb END"])
    if k < 0.95:  # huge feature_names built server-side
        return ("jsonb_build_object('epsilon', 1, 'feature_names', (SELECT jsonb_agg('n' || i) "
                "FROM generate_series(1, %d) i))" % r.choice([0, 2, 3, 4, 1000, 100000]))
    return lit(to_json(valid_options(r, d))) + "::jsonb || " + lit(to_json({r.choice(OPTION_KEYS): hostile_value(r)}))


def feature_source(r):
    """A FROM item with columns f (features), y (boolean), z (float), g (group)."""
    k = r.random()
    if k < 0.6:
        return r.choice(TABLES), 3
    if k < 0.85:  # wide or long rows built server-side
        d = r.choices([0, 1, 2, 50, 1000, 100000, 1000000], weights=[3, 3, 3, 4, 4, 2, 1])[0]
        n = r.choice([1, 2, 3]) if d >= 100000 else r.choice([1, 2, 10, 100])
        val = r.choice(["0.5", "'NaN'", "'Infinity'", "1e308", "0", "NULL", "-1e-300"])
        return ("(SELECT array_fill(%s::float8, ARRAY[%d]) AS f, i %% 2 = 0 AS y, i::float8 AS z, "
                "i %% 3 AS g FROM generate_series(1, %d) i) s" % (val, d, n)), d
    if k < 0.92:  # many rows
        n = r.choices([1000, 10000, 100000], weights=[4, 2, 1])[0]
        return ("(SELECT ARRAY[random(), random() - 0.5, 1]::float8[] AS f, random() < 0.5 AS y, "
                "random()::float8 AS z, i %% 2 AS g FROM generate_series(1, %d) i) s" % n), 3
    if k < 0.96:  # arrays of odd shapes
        return r.choice([
            "(SELECT ARRAY[[1, 2], [3, 4]]::float8[] AS f, true AS y, 1.0::float8 AS z, 0 AS g) s",
            "(SELECT '[0:2]={1,2,3}'::float8[] AS f, true AS y, 1.0::float8 AS z, 0 AS g) s",
            "(SELECT '[-5:-3]={1,2,3}'::float8[] AS f, true AS y, 1.0::float8 AS z, 0 AS g FROM generate_series(1, 3)) s",
            "(SELECT array_fill(1::float8, ARRAY[1, 1, 1]) AS f, true AS y, 1.0::float8 AS z, 0 AS g) s",
            "(SELECT array_fill(1::float8, ARRAY[0]) AS f, true AS y, 1.0::float8 AS z, 0 AS g) s",
            "(SELECT ARRAY(SELECT NULL::float8 FROM generate_series(1, 1000)) AS f, true AS y, 1.0::float8 AS z, 0 AS g) s",
            "(SELECT array_fill(0.5::float8, ARRAY[10000000]) AS f, true AS y, 1.0::float8 AS z, 0 AS g) s",
            "(SELECT array_fill(0.5::float8, ARRAY[200000000]) AS f, true AS y, 1.0::float8 AS z, 0 AS g) s",
        ]), 3
    return "(SELECT a.* FROM fz_clean a CROSS JOIN fz_one b) s", 3  # two relations read


def release_stmt(r):
    """A training statement; it prints one 'R:<released>:<length>' line per model."""
    src, d = feature_source(r)
    agg = r.choice(["dp_logreg", "dp_logreg", "dp_huber", "dp_softmax"])
    feats = r.choices(["f", "NULL::float8[]", "f || 1e308::float8", "f[1:2]", "ARRAY[]::float8[]",
                       "f || f", "array_append(f, 'NaN')"], weights=[80, 2, 3, 3, 2, 3, 3])[0]
    if agg == "dp_softmax":  # classes outside 0 .. K-1 are clamped, never an error
        label = r.choices(["g", "g - 1", "y::int", "NULL::int", "-1", "2147483647", "g * 1000", "z::int"],
                          weights=[60, 8, 8, 3, 3, 3, 3, 2])[0]
    elif agg == "dp_huber":
        label = r.choices(["z", "NULL::float8", "'NaN'::float8", "'Infinity'::float8", "-1e308::float8", "y::int::float8"],
                          weights=[80, 3, 4, 4, 4, 5])[0]
    else:
        label = r.choices(["y", "z", "NULL::boolean", "'NaN'::float8", "'-Infinity'::float8", "NOT y",
                           "y IS NOT NULL", "NULL"],
                          weights=[60, 15, 3, 4, 3, 5, 5, 2])[0]
    opts = options_sql(r, d, agg == "dp_softmax")
    call = "%s(%s, %s, %s)" % (agg, feats, label, opts)
    k = r.random()
    if k < 0.1:
        inner = "SELECT g, %s AS m FROM %s GROUP BY g" % (call, src)
    elif k < 0.13:
        inner = "SELECT %s OVER () AS m FROM %s" % (call, src)
    elif k < 0.16:
        inner = "SELECT %s FILTER (WHERE g = 1) AS m FROM %s" % (call, src)
    elif k < 0.18:
        inner = "SELECT %s AS m FROM %s WHERE false" % (call, src)
    else:
        inner = "SELECT %s AS m FROM %s" % (call, src)
    return released(inner)


def model_text(r):
    """A dp_model JSON text, valid or broken."""
    d = r.choice([0, 1, 3, 3, 3])
    fit = r.choice([True, True, False])
    m = {"loss": r.choice(["logistic", "huber", "softmax"]),
         "preprocessing": {"feature_bound": 1, "huber_delta": 1, "fit_intercept": fit},
         "coefficients": [round(r.uniform(-3, 3), 6) for _ in range(d)],
         "intercept": 0.25, "format": "dperm.model/1"}
    if m["loss"] == "softmax":  # K arrays of d numbers and K intercepts
        k = r.choice([2, 3, 3, 5])
        m["classes"] = k
        m["coefficients"] = [[round(r.uniform(-3, 3), 6) for _ in range(d)] for _ in range(k)]
        m["intercept"] = [round(r.uniform(-1, 1), 6) for _ in range(k)]
        if r.random() < 0.3:
            m["classes"] = r.choice([hostile_value(r), k + 1, k - 1, 1, 100001])
    if r.random() < 0.3:
        m["feature_names"] = r.choice([["a", "b", "c"], [], [1, 2, 3], "abc", [["x"]], None])
    for _ in range(r.choices([0, 1, 2, 3], weights=[3, 4, 2, 1])[0]):
        k = r.random()
        if k < 0.15:
            m.pop(r.choice(list(m.keys())), None)
        elif k < 0.35:
            m["preprocessing"] = dict(m["preprocessing"]) if isinstance(m.get("preprocessing"), dict) else {}
            m["preprocessing"][r.choice(["feature_bound", "huber_delta", "fit_intercept"])] = hostile_value(r)
        elif k < 0.5:
            m["coefficients"] = r.choice([[], [None], ["1"], [[1]], [{"a": 1}], "[1,2]", 3, None,
                                          [Raw("1e400")], [Raw("1e308"), Raw("-1e308")], [Raw("1e-400")],
                                          [Raw("5e-324")] * 3, [True, False]])
        elif k < 0.6:
            m["loss"] = hostile_value(r)
        elif k < 0.7:
            m["intercept"] = hostile_value(r)
        elif k < 0.8:
            m[r.choice(UNKNOWN_KEYS)] = hostile_value(r)
        else:
            m["preprocessing"] = hostile_value(r)
    text = to_json(m)
    k = r.random()
    if k < 0.12:
        text = text[:r.randint(0, len(text))]
    elif k < 0.16:
        text = r.choice(["", "{}", "[]", "null", "1", "\"x\"", "{\"loss\": \"logistic\"}",
                         text + text, text + " trailing", " " + text + " "])
    elif k < 0.18:
        text = text.replace(":", "=", 1)
    return lit(text)


def huge_model(r):
    """A model with a huge coefficients array, built server-side."""
    d = r.choices([1000, 100000, 1000000], weights=[3, 2, 1])[0]
    return ("(jsonb_build_object('loss', 'logistic', 'preprocessing', jsonb_build_object("
            "'feature_bound', 1, 'huber_delta', 1, 'fit_intercept', true), 'intercept', 0, "
            "'coefficients', (SELECT jsonb_agg(0.001) FROM generate_series(1, %d))))::dp_model" % d), d


FEATURE_ARRAYS = ["ARRAY[0.1, 0.2, 0.3]", "ARRAY[]::float8[]", "ARRAY[NULL, NULL, NULL]::float8[]",
                  "ARRAY['NaN', 'Infinity', '-Infinity']::float8[]", "ARRAY[1e308, 1e308, -1e308]",
                  "ARRAY[1, 2]::float8[]", "ARRAY[[1, 2, 3]]::float8[]", "ARRAY[1, 2, 3, 4]::float8[]",
                  "array_fill(0.5::float8, ARRAY[1000000])", "'[5:7]={1,2,3}'::float8[]",
                  "ARRAY[0.5]", "NULL::float8[]", "ARRAY[5e-324, -0.0, 1]::float8[]"]


def model_stmt(r):
    k = r.random()
    if k < 0.3:
        return "SELECT %s::dp_model IS NOT NULL" % model_text(r)
    if k < 0.45:
        fn = r.choice(["dp_predict", "dp_predict", "dp_predict_class", "dp_predict_proba"])
        return "SELECT %s(%s::dp_model, %s)" % (fn, model_text(r), r.choice(FEATURE_ARRAYS))
    if k < 0.55:
        return "SELECT count(*), sum(coefficient) FROM dp_coefficients(%s::dp_model)" % model_text(r)
    if k < 0.62:
        return "SELECT length((%s::jsonb::dp_model)::jsonb::text)" % model_text(r)
    if k < 0.7:
        return "SELECT k, dp_predict(m, %s) FROM fz_models WHERE k <> 'softmax' ORDER BY k" % r.choice(FEATURE_ARRAYS)
    if k < 0.8:
        return "SELECT k, %s(m, %s) FROM fz_models WHERE k <> 'huber' ORDER BY k" % (
            r.choice(["dp_predict_class", "dp_predict_proba"]), r.choice(FEATURE_ARRAYS))
    if k < 0.85:
        return "SELECT count(*) FROM fz_models, dp_coefficients(m)"
    if k < 0.92:
        m, d = huge_model(r)
        return r.choice(["SELECT count(*) FROM dp_coefficients(%s)" % m,
                         "SELECT dp_predict(%s, array_fill(0.001::float8, ARRAY[%d]))" % (m, d),
                         "SELECT dp_predict(%s, ARRAY[1.0])" % m,
                         "SELECT length(%s::text)" % m])
    return r.choice(["SELECT dp_predict(NULL, ARRAY[1.0])", "SELECT dp_predict('x', ARRAY[1.0])",
                     "SELECT dp_predict(m, 'abc') FROM fz_models",
                     "SELECT dp_predict(m, ARRAY['a']) FROM fz_models",
                     "SELECT dp_coefficients(NULL::dp_model)",
                     "SELECT m::jsonb::dp_model IS NOT NULL FROM fz_models",
                     "SELECT (m::jsonb || '{\"coefficients\": [1e300, -1e300, 1e300]}')::dp_model IS NOT NULL FROM fz_models",
                     "SELECT dp_predict((m::jsonb || '{\"coefficients\": [1e300, -1e300, 1e300], \"intercept\": 1e300}')::dp_model, ARRAY[1e308, -1e308, 1]) FROM fz_models",
                     "SELECT m = m FROM fz_models", "SELECT m::text::dp_model IS NOT NULL FROM fz_models",
                     "SELECT '%s'::dp_model" % ("[" * 5000 + "]" * 5000),
                     "SELECT array_agg(m)::text IS NOT NULL FROM fz_models"])


ORDERS = ["ARRAY[1.5, 2, 4, 8, 16, 32, 64]", "ARRAY[]::float8[]", "ARRAY['NaN']::float8[]",
          "ARRAY[1]::float8[]", "ARRAY[0.5]::float8[]", "ARRAY[-1]::float8[]", "ARRAY[1.0000001]",
          "ARRAY[1e300]", "ARRAY['Infinity']::float8[]", "ARRAY[100000]::float8[]",
          "ARRAY[100000.5]::float8[]", "ARRAY[NULL]::float8[]", "ARRAY[[2, 3]]::float8[]",
          "dperm.rdp_orders()", "ARRAY(SELECT 1 + i / 100.0 FROM generate_series(1, 100000) i)::float8[]",
          "ARRAY(SELECT 2 FROM generate_series(1, 1000000))::float8[]", "ARRAY[2, 1.5, 2, 2]"]
QS = ["0.01", "0.5", "1", "0", "-0.1", "1.0000001", "1e-300", "5e-324", "'NaN'", "'Infinity'", "0.999999999999"]
SIGMAS = ["1", "0.5", "1e-300", "1e300", "0", "-1", "'NaN'", "'Infinity'", "5e-324", "0.01", "100"]
STEPS = ["1", "1000", "0", "-1", "9000000000000000000", "9223372036854775807", "1000000000"]
DELTAS = ["1e-5", "0", "1", "-1e-5", "'NaN'", "1e-300", "0.999999", "5e-324", "'Infinity'"]
EPSES = ["1", "0.1", "0", "-1", "1e-300", "1e300", "'NaN'", "'Infinity'", "100"]
ACCTS = ["'rdp'", "'pld'", "'RDP'", "''", "'x'"]


def accountant_stmt(r):
    k = r.random()
    if k < 0.2:
        return "SELECT dperm.gaussian_sigma(%s, %s, %s)" % (r.choice(EPSES), r.choice(DELTAS), r.choice(SIGMAS + EPSES))
    if k < 0.45:
        return "SELECT cardinality(a), a[1], a[cardinality(a)] FROM dperm.rdp_subsampled_gaussian(%s, %s, %s, %s) a" % (
            r.choice(QS), r.choice(SIGMAS), r.choice(STEPS), r.choice(ORDERS))
    if k < 0.6:
        o = r.choice(ORDERS)
        rdp = r.choice(["dperm.rdp_subsampled_gaussian(0.01, 1, 100, %s)" % o, "ARRAY[0.1, 0.2]",
                        "ARRAY['NaN', 1]::float8[]", "ARRAY[-1, 1]::float8[]", "ARRAY['Infinity', 'Infinity']::float8[]",
                        "ARRAY[]::float8[]", "ARRAY[1e308, 1e308]", "array_fill(0.1::float8, ARRAY[cardinality(%s)])" % o])
        return "SELECT dperm.rdp_to_epsilon(%s, %s, %s)" % (o, rdp, r.choice(DELTAS))
    if k < 0.8:
        return "SELECT dperm.epsilon_subsampled_gaussian(%s, %s, %s, %s, %s)" % (
            r.choice(QS), r.choice(SIGMAS), r.choice(STEPS), r.choice(DELTAS), r.choice(ACCTS))
    if k < 0.95:
        return "SELECT dperm.calibrate_noise_multiplier(%s, %s, %s, %s, %s)" % (
            r.choice(QS), r.choice(STEPS), r.choice(EPSES), r.choice(DELTAS), r.choice(ACCTS))
    return r.choice(["SELECT dperm.rdp_orders()", "SELECT dperm.rdp_orders() = dperm.rdp_orders()",
                     "SELECT dperm.gaussian_sigma(NULL, 1e-5)",
                     "SELECT dperm.epsilon_subsampled_gaussian(0.01, 1, 100, 1e-5, NULL)"])


def explain_stmt(r):
    loss = r.choice(["'logistic'", "'huber'", "'logistic'", "'softmax'", "''", "'Logistic'", "NULL", "'x'"])
    n = r.choice(["1", "45211", "0", "-1", "9223372036854775807", "1000000000000"])
    d = r.choice(["0", "1", "3", "42", "-1", "1000000", "2147483647", "2147483646", "100000000"])
    return "SELECT length(dp_explain(%s, %s, %s, %s)::text)" % (loss, n, d, options_sql(r, 3, loss == "'softmax'"))


def check_options_stmt(r):
    return "SELECT dperm.check_options(%s) IS NOT NULL" % options_sql(r)


def budget_stmt(r):
    k = r.random()
    if k < 0.45:  # anything goes on scratch and odd relations
        rel = r.choice([lit(x) for x in SCRATCH] * 3 + [
            "0", "0::oid", "4294967295::oid", "999999::oid", "'no_such_table'", "'pg_class'",
            "'dperm.ledger'", "'dperm.budgets'", "'fz_view'", "NULL", "'fz_clean'", "'fz_models'",
            "'fz_clean_f_seq'", "'pg_catalog.pg_proc'", "''", "'\"weird name\"'"])
        args = [rel, r.choice(EPSES + ["1", "5"]), r.choice(DELTAS + ["1e-5", "0"])]
        if r.random() < 0.7:
            args.append(r.choice(["'rdp'", "'basic'", "NULL", "''", "'RDP'", "repeat('x', 10000)"]))
        return "SELECT dperm.set_budget(%s)" % ", ".join(args)
    if k < 0.6:  # fixed budgets: always invalid arguments (must fail, must not change)
        rel = lit(r.choice(FIXED_BUDGETS))
        bad = r.choice(["eps", "delta", "acct"])
        eps = r.choice(["'NaN'", "'Infinity'", "-1", "'-Infinity'", "NULL"]) if bad == "eps" else "1"
        # (NULL delta is valid: it keeps the budget's delta)
        delta = r.choice(["1", "'NaN'", "-1e-5", "'Infinity'", "1.5"]) if bad == "delta" else "1e-6"
        acct = r.choice(["''", "'RDP'", "'x'", "'rdp '"]) if bad == "acct" else "'basic'"
        return "SELECT dperm.set_budget(%s, %s, %s, %s)" % (rel, eps, delta, acct)
    if k < 0.85:
        rel = r.choice([lit(x) for x in FIXED_BUDGETS + SCRATCH + ["fz_clean", "pg_class"]] + ["0", "NULL"])
        args = [rel, r.choice(["'rdp'", "'basic'", "'x'", "NULL"]), r.choice(DELTAS)]
        if r.random() < 0.6:
            args.append(r.choice(["NULL", "dperm.rdp_orders()", "ARRAY[1, 2]::float8[]",
                                  "array_fill('NaN'::float8, ARRAY[cardinality(dperm.rdp_orders())])",
                                  "array_fill(-1::float8, ARRAY[cardinality(dperm.rdp_orders())])",
                                  "array_fill('Infinity'::float8, ARRAY[cardinality(dperm.rdp_orders())])",
                                  "array_fill(1::float8, ARRAY[2, cardinality(dperm.rdp_orders())])"]))
            args.append(r.choice(EPSES))
            args.append(r.choice(DELTAS))
        return "SELECT * FROM dperm.budget_spent(%s)" % ", ".join(args)
    return r.choice(["SELECT count(*) FROM dperm.budget_status",
                     "SELECT relation, epsilon_spent <= epsilon_budget FROM dperm.budget_status ORDER BY 1",
                     "SELECT count(*) FROM dperm.ledger", "SELECT count(*) FROM dperm.budgets"])


def released(inner):
    """Wraps a query with a column m of models: one 'R:' line per row."""
    return ("SELECT 'R:' || (m IS NOT NULL)::text || ':' || coalesce(length(m::text), -1) "
            "FROM (%s) s_" % inner), True


def wrong_type_stmt(r):
    if r.random() < 0.15:  # odd types that coerce: these may release
        return released(r.choice([
            "SELECT dp_logreg(ARRAY[1, 2]::int[], true, '{\"epsilon\": 1}') AS m",
            "SELECT dp_logreg(ARRAY[1, 2]::numeric[], 'yes', '{\"epsilon\": 1}') AS m",
            "SELECT dp_logreg(f, y, '{\"epsilon\": 1}' ORDER BY g) AS m FROM fz_clean",
            "SELECT dp_huber(ARRAY[1, 2]::real[], 1::int, '{\"epsilon\": 1}') AS m",
            "SELECT dp_logreg(f, y::text::boolean, '{\"epsilon\": 1}') AS m FROM fz_clean",
            "SELECT dp_logreg(DISTINCT f, y, '{\"epsilon\": 1}') AS m FROM fz_clean",
        ]))
    return r.choice([
        "SELECT dp_logreg('abc', true, '{\"epsilon\": 1}')",
        "SELECT dp_logreg(ARRAY['a'], true, '{\"epsilon\": 1}')",
        "SELECT dp_huber(ARRAY[1.0], 'x', '{\"epsilon\": 1}')",
        "SELECT dp_huber(ARRAY[1.0], true, '{\"epsilon\": 1}')",
        "SELECT dp_logreg(f, y, 1) FROM fz_clean",
        "SELECT dp_logreg(f, y, '{\"epsilon\": 1}'::json) FROM fz_clean",
        "SELECT dp_logreg(f, y) FROM fz_clean",
        "SELECT dp_logreg(f, y, '{\"epsilon\": 1}', 1) FROM fz_clean",
        "SELECT dp_logreg(*) FROM fz_clean",
        "SELECT dp_explain('logistic', 'many', 3, '{\"epsilon\": 1}')",
        "SELECT dp_explain('logistic', 10, 3.5, '{\"epsilon\": 1}')",
        "SELECT dp_explain('logistic', 10, 3)",
        "SELECT dp_options()", "SELECT dp_options(delta => 1e-5)",
        "SELECT dp_options(epsilon => 'one')", "SELECT dp_options(1, 2, 3)",
        "SELECT dp_options(epsilon => 1, bogus => 2)",
        "SELECT dp_predict(ARRAY[1.0], ARRAY[1.0])",
        "SELECT dperm.set_budget('fz_scratch1', 'lots')",
        "SELECT dperm.set_budget(3.5, 1)",
        "SELECT dperm.rdp_subsampled_gaussian(0.1, 1, 1.5, ARRAY[2.0])",
        "SELECT dperm.rdp_subsampled_gaussian(0.1, 1, 10, ARRAY['two'])",
        "SELECT dperm.calibrate_noise_multiplier(0.1, 10, 1, 1e-5, 42)",
        "SELECT dperm_logreg_bool_transition(NULL, NULL, NULL, NULL)",
        "SELECT dperm.final(NULL)", "SELECT dperm.serialize(NULL)",
        "SELECT dperm.deserialize('\\x00'::bytea, NULL)",
        "SELECT dperm.combine(NULL, NULL)",
        "SELECT dperm.logreg_bool_transition(NULL, ARRAY[1.0], true, '{\"epsilon\": 1}')",
        "SELECT dperm.huber_transition(NULL, ARRAY[1.0], 1.0, NULL)",
        "SELECT 'x'::dp_model",
        "SELECT NULL::dp_model IS NULL",
        "SELECT ''::dp_model",
    ])


COLUMNS = ["'f'", "'y'", "'z'", "'g'", "'t'", "'i'", "'F'", "'\"f\"'", "''", "'f; DROP TABLE fz_clean'",
           "'f) FROM fz_clean --'", "'ctid'", "'xmin'", "'tableoid'", "'Odd \"col\"'", "'no_col'",
           "NULL", "repeat('f', 100)", "'f' || chr(1)", "'f' || chr(10)"]


def train_stmt(r):
    """dperm.train with hostile relations, column names, losses and options."""
    rel = r.choice(["'fz_prot'"] * 6 + ["'fz_clean'", "'fz_view'", "'no_such'", "0", "NULL", "'pg_authid'",
                                        "'dperm.ledger'", "'fz_budget_rdp'"])
    feats = r.choice(["'f'"] * 6 + COLUMNS)
    label = r.choice(["'y'", "'z'", "'y'", "'g'"] + COLUMNS)
    loss = r.choice(["'logistic'", "'huber'", "'logistic'", "'softmax'", "''", "'LOGISTIC'", "NULL", "'logistic '"])
    return released("SELECT dperm.train(%s, %s, %s, %s, %s) AS m" % (rel, feats, label, loss,
                                                                      options_sql(r, 3, loss == "'softmax'")))


def protect_stmt(r):
    rel = r.choice(["'fz_prot'", "'fz_scratch1'", "'fz_view'", "'no_such'", "NULL", "0", "'dperm.ledger'",
                    "'pg_class'", "'fz_models'"])
    analysts = r.choice(["", ", NULL", ", ARRAY['fz_analyst']::regrole[]", ", ARRAY[]::regrole[]",
                         ", ARRAY['no_such_role']::regrole[]", ", ARRAY[NULL]::regrole[]", ", ARRAY['public']::regrole[]",
                         ", ARRAY[0]::oid[]::regrole[]", ", ARRAY[['fz_analyst']]::regrole[]"])
    if rel == "'fz_prot'" and r.random() < 0.7:
        analysts = ", ARRAY['fz_analyst']::regrole[]"  # keep the analyst allowed most of the time
    return "SELECT dperm.protect(%s%s)" % (rel, analysts)


def session_stmt(r):
    return r.choice(["SET ROLE fz_analyst", "RESET ROLE", "RESET ROLE", "SET SESSION AUTHORIZATION fz_analyst",
                     "RESET SESSION AUTHORIZATION", "RESET SESSION AUTHORIZATION","SET dperm.allow_seed = on", "SET dperm.allow_seed = off", "RESET dperm.allow_seed",
                     "SET dperm.allow_seed = 'maybe'", "SET dperm.no_such = 1",
                     "SET max_parallel_workers_per_gather = 2", "SET max_parallel_workers_per_gather = 0",
                     "SET parallel_setup_cost = 0", "SET parallel_tuple_cost = 0", "RESET parallel_setup_cost",
                     "SET min_parallel_table_scan_size = 0", "SET force_parallel_mode = on",
                     "SET force_parallel_mode = off",
                     "SELECT current_setting('dperm.allow_seed')"])


def seeded_release(r):
    return released("SELECT dp_logreg(f, y, '{\"epsilon\": 1, \"seed\": %s}') AS m FROM fz_clean" %
                    r.choice(["1", "0", "-1", "9223372036854775807", "1.5", "\"x\"", "1e30", "-9223372036854775808"]))


def generate(n, seed, timeout_ms):
    """The campaign: a list of (sql, is_release); timeout_ms is the campaign's
    statement_timeout (a locked-budget probe runs under it)."""
    r = random.Random(seed)
    kinds = [(release_stmt, 38), (model_stmt, 14), (accountant_stmt, 14), (explain_stmt, 7),
             (check_options_stmt, 7), (budget_stmt, 10), (wrong_type_stmt, 5), (session_stmt, 3),
             (seeded_release, 2), (train_stmt, 6), (protect_stmt, 1)]
    fns = [k for k, _ in kinds]
    weights = [w for _, w in kinds]
    out = []
    for i in range(n):
        fn = r.choices(fns, weights)[0]
        res = fn(r)
        if isinstance(res, tuple):
            out.append(res)
        else:
            out.append((res, False))
    # A release that waits for a budget row locked by its own transaction
    # (fz_scratch2 always has a committed budget) ends with an error and is
    # not charged: by the statement timeout (which comes before the writer's
    # 5 s lock timeout), or by the lock timeout (55P03).
    for timeout in (timeout_ms, 0):
        pos = r.randint(0, max(0, len(out) - 1))
        out[pos:pos] = [("BEGIN", False),
                        ("SET LOCAL statement_timeout = %d" % timeout, False),
                        ("SELECT dperm.set_budget('fz_scratch2', 50, 1e-5)", False),
                        released("SELECT dp_logreg(f, y, '{\"epsilon\": 0.1}') AS m FROM fz_scratch2"
                                 " /* must not charge */"),
                        ("ROLLBACK", False)]
    # Legal but heavy calls must honour statement_timeout (checked by the
    # overrun rule): many large Renyi orders, PLD calibration with many
    # steps, a training with 10^8 iterations.
    for probe in (
            "SELECT cardinality(dperm.rdp_subsampled_gaussian(0.01, 1, 100, "
            "array_fill(99999.5::float8, ARRAY[100000])))",
            "SELECT dperm.calibrate_noise_multiplier(0.001, 100000000, 1, 1e-5, 'pld')",
            "SELECT dperm.epsilon_subsampled_gaussian(1e-9, 0.1, 1000000000, 1e-5, 'pld')"):
        out.insert(r.randint(0, len(out)), (probe, False))
    out.insert(r.randint(0, len(out)), released(
        "SELECT dp_huber(f, z, '{\"epsilon\": 1, \"l2\": 0.1, \"iterations\": 100000000}') AS m FROM fz_big"))
    # Releases inside a transaction that rolls back stay charged.
    pos = r.randint(0, max(0, len(out) - 1))
    out[pos:pos] = [("BEGIN", False),
                    released("SELECT dp_logreg(f, y, '{\"epsilon\": 0.1, \"l2\": 0.1}') AS m FROM fz_clean"),
                    ("ROLLBACK", False)]
    return out
