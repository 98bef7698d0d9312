"""The Python package against a real server (test/python.sh runs it inside
pg_virtualenv -t, with dperm installed and BANK's raw rows in bank_raw).

Asserts: predictions and encodings equal the database's (dperm.predict,
dperm.encode, dp_predict, dp_predict_proba) to 1e-12 for the three losses
through a feature spec, for named models and one-off releases, in Python and
in-database (predict_sql); a refused release raises BudgetExhausted with
SQLSTATE DP001, its detail and hint, and charges nothing; the ledger and
budget DataFrames hold the ledger's rows and budget_status's spend; the
three PNGs are written and not blank. PNGs go to $DPERM_PY_OUT (default: a
temporary directory).
"""
import json
import os
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import dperm  # noqa: E402
from dperm.connection import frame, run, scalar  # noqa: E402

TOL = 1e-12
TABLE = "bank_raw"
# Raw columns with their public domains: numbers with bounds (age and job
# carry NULLs), categories with declared values (one undeclared: job
# 'unknown' and others encode as all zeros), booleans (housing carries NULLs).
FEATURES = {
    "age": {"bounds": [18, 95]},
    "balance": {"bounds": [-8000, 100000]},
    "campaign": {"bounds": [1, 63]},
    "job": {"values": ["admin.", "blue-collar", "management", "retired", "services",
                       "student", "technician", "unemployed"]},
    "education": {"values": ["primary", "secondary", "tertiary"]},
    "housing": {"type": "boolean"},
    "loan": {"type": "boolean"},
    "in_default": {"type": "boolean"},
}
OUT = os.environ.get("DPERM_PY_OUT") or tempfile.mkdtemp(prefix="dperm-py-")


def spec_with(label_column, decl):
    spec = dict(FEATURES)
    spec[label_column] = dict(decl, label=True)
    return spec


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.conn = dperm.connect()
        run(cls.conn, "CREATE EXTENSION IF NOT EXISTS dperm")
        run(cls.conn, "SELECT dperm.set_budget(%s, 20)", (TABLE,))
        cls.rows = frame(cls.conn, f"SELECT * FROM {TABLE} ORDER BY id")
        cls.fitted = {}
        cls.fitted["logistic"] = dperm.DPLogisticRegression(
            epsilon=1, name="py_subscribe", connection=cls.conn).fit(
            TABLE, spec_with("y", {"values": ["no", "yes"]}))
        cls.fitted["softmax"] = dperm.DPSoftmaxRegression(
            epsilon=1, name="py_marital", connection=cls.conn).fit(
            TABLE, spec_with("marital", {"values": ["divorced", "married", "single"]}))
        cls.fitted["huber"] = dperm.DPHuberRegressor(
            epsilon=1, delta=1e-6, name="py_duration", connection=cls.conn).fit(
            TABLE, spec_with("duration", {"bounds": [0, 1500]}))
        # A release by another role: the ledger's rows by role.
        run(cls.conn, "DROP ROLE IF EXISTS py_analyst")
        run(cls.conn, "CREATE ROLE py_analyst")
        run(cls.conn, f"GRANT SELECT ON {TABLE} TO py_analyst")
        run(cls.conn, "SET ROLE py_analyst")
        try:
            dperm.DPHuberRegressor(epsilon=0.3, connection=cls.conn).fit(
                TABLE, spec_with("balance", {"bounds": [-8000, 100000]}))
        finally:
            run(cls.conn, "RESET ROLE")

    def database(self, name):
        """dperm.predict and dperm.encode of every row, by id."""
        return frame(self.conn, f"SELECT id, dperm.predict(%s, r) AS p, dperm.encode(%s, r) AS x "
                                f"FROM {TABLE} r ORDER BY id", (name, name))

    def assert_close(self, a, b):
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        self.assertEqual(a.shape, b.shape)
        self.assertLessEqual(float(np.max(np.abs(a - b))), TOL)

    def test_set_budget_with_a_unit(self):
        # The wrapper passes the privacy unit and a public number of units
        # by name; budget_status states them.
        run(self.conn, "DROP TABLE IF EXISTS py_cohort")
        run(self.conn, "CREATE TABLE py_cohort (person int, features float8[], label boolean)")
        run(self.conn, "INSERT INTO py_cohort SELECT p % 30, ARRAY[(p % 7) / 7.0], p % 2 = 0 "
                       "FROM generate_series(1, 90) p")
        dperm.set_budget(self.conn, "py_cohort", 5, 1e-5, privacy_unit="person",
                         max_rows_per_unit=3, units=30)
        row = frame(self.conn, "SELECT privacy_unit, max_rows_per_unit, public_units "
                               "FROM dperm.budget_status WHERE relation = 'py_cohort'::regclass")
        self.assertEqual(row["privacy_unit"][0], "person")
        self.assertEqual(int(row["max_rows_per_unit"][0]), 3)
        self.assertEqual(int(row["public_units"][0]), 30)
        dperm.set_budget(self.conn, "py_cohort", 5, units=0)
        self.assertIsNone(scalar(self.conn, "SELECT public_units FROM dperm.budget_status "
                                            "WHERE relation = 'py_cohort'::regclass"))

    def test_encoding_equals_database(self):
        for loss, est in self.fitted.items():
            db = self.database(est.name)
            self.assert_close(est.encode(self.rows), np.vstack(db["x"].to_list()))
            # NULLs, undeclared values and booleans were among the rows
            self.assertTrue(self.rows["age"].isna().any() and self.rows["housing"].isna().any())

    def test_predictions_equal_database(self):
        for loss, est in self.fitted.items():
            with self.subTest(loss=loss):
                db = self.database(est.name)
                if loss == "logistic":
                    ours = est.predict_proba(self.rows)[:, 1]
                    self.assert_close(est.decision_function(self.rows),
                                      np.log(ours) - np.log1p(-ours))
                elif loss == "softmax":
                    ours = np.argmax(est.predict_proba(self.rows), axis=1)
                    self.assertTrue(np.array_equal(est.predict(self.rows), est.classes_[ours]))
                else:
                    ours = est.predict(self.rows)
                self.assert_close(ours, db["p"].to_numpy())

    def test_probabilities_equal_database(self):
        for loss in ("logistic", "softmax"):
            est = self.fitted[loss]
            db = frame(self.conn, f"SELECT dp_predict_proba(%s::dp_model, dperm.encode(%s, r)) AS p "
                                  f"FROM {TABLE} r ORDER BY id",
                       (json.dumps(est.model_json_), est.name))
            self.assert_close(est.predict_proba(self.rows), np.vstack(db["p"].to_list()))

    def test_in_database_scoring(self):
        for loss, est in self.fitted.items():
            with self.subTest(loss=loss):
                df = est.predict_sql(TABLE).sort_values("id")
                db = self.database(est.name)
                self.assert_close(df["prediction"].to_numpy(), db["p"].to_numpy())
                if loss != "huber":
                    self.assert_close(np.vstack(df["proba"].to_list()),
                                      est.predict_proba(self.rows))
                    self.assertTrue(np.array_equal(df["predicted"].to_numpy(),
                                                   est.predict(self.rows)))

    def test_one_off_release(self):
        """dperm.train (no name): scored as dp_predict on dperm.encode_values."""
        before = scalar(self.conn, "SELECT count(*) FROM dperm.ledger")
        est = dperm.DPLogisticRegression(epsilon=0.5, l2=0.01, connection=self.conn)
        est.fit(TABLE, spec_with("y", {"values": ["no", "yes"]}))
        self.assertEqual(scalar(self.conn, "SELECT count(*) FROM dperm.ledger"), before + 1)
        self.assertIsNone(est.version_)
        self.assertEqual(est.ledger_["epsilon"], 0.5)
        self.assertEqual(est.privacy_["epsilon"], 0.5)
        self.assertEqual(est.privacy_["n"], len(self.rows))
        self.assertIn("0.5", est.privacy_statement())
        df = est.predict_sql(TABLE).sort_values("id")
        self.assert_close(est.predict_proba(self.rows)[:, 1], df["prediction"].to_numpy())
        self.assertEqual(list(est.classes_), ["no", "yes"])
        self.assertEqual(est.coef_.shape, (1, len(est.feature_names_)))
        self.assertEqual(list(est.coefficients().index[:2]), ["intercept", "age"])
        self.assertEqual(list(est.feature_names_in_), est.spec_.raw_columns)
        self.assertEqual(est.model_json_["options"]["l2"], 0.01)
        self.assertEqual(est.plan_["algorithm"], est.privacy_["algorithm"])

    def test_query_fit(self):
        """fit on a dperm.Query: dperm.train_query (one-off) and
        dperm.train_model_query (named); the size is noisy, the charge one row."""
        query = dperm.Query(
            f"SELECT ARRAY[dperm.div(age, 100), dperm.div(balance, 10000)] AS x,"
            f"       y = 'yes' AS subscribed FROM {TABLE} WHERE age >= 40")
        before = scalar(self.conn, "SELECT count(*) FROM dperm.ledger")
        est = dperm.DPLogisticRegression(epsilon=0.5, connection=self.conn,
                                         options={"dimension": 2})
        est.fit(query, "x", "subscribed")
        self.assertEqual(scalar(self.conn, "SELECT count(*) FROM dperm.ledger"), before + 1)
        self.assertIsNone(est.relation_)
        self.assertTrue(est.model_json_["n_noisy"])
        self.assertEqual(est.ledger_["epsilon"], 0.5)
        selected = int((self.rows["age"] >= 40).sum())
        self.assertLess(abs(est.model_json_["n"] - selected), 200)  # discrete Laplace, scale 20
        self.assertEqual(est.coef_.shape, (1, 2))
        named = dperm.DPLogisticRegression(epsilon=0.5, name="py_query", connection=self.conn,
                                           options={"dimension": 2}).fit(query, "x", "subscribed")
        self.assertEqual(named.version_, 1)
        self.assertTrue(named.model_json_["n_noisy"])
        self.assertEqual(scalar(self.conn, "SELECT dperm.retrain('py_query')"), 2)

    def test_array_column(self):
        """A model trained on a float8[] column scores the arrays (NULL
        elements count as 0, rows clipped) as dp_predict does."""
        run(self.conn, f"CREATE TABLE IF NOT EXISTS bank_arr AS SELECT id, ARRAY[age / 50.0, "
                       f"balance / 5000.0, CASE WHEN loan THEN 1 END]::float8[] AS features, "
                       f"(y = 'yes') AS label FROM {TABLE}")
        est = dperm.DPLogisticRegression(epsilon=1, connection=self.conn).fit(
            "bank_arr", "features", "label")
        df = frame(self.conn, "SELECT features, dp_predict(%s::dp_model, features) AS p "
                              "FROM bank_arr ORDER BY id", (json.dumps(est.model_json_),))
        self.assert_close(est.predict_proba(df)[:, 1], df["p"].to_numpy())
        self.assertEqual(list(est.classes_), [False, True])
        left = dperm.budget_remaining(self.conn, TABLE)
        self.assertAlmostEqual(left["epsilon_remaining"], 20 - left["epsilon_spent"], places=9)
        self.assertIsNone(dperm.budget_remaining(self.conn, "bank_arr"))

    def test_attributes(self):
        soft = self.fitted["softmax"]
        self.assertEqual(soft.coef_.shape, (3, len(soft.feature_names_)))
        self.assertEqual(list(soft.classes_), ["divorced", "married", "single"])
        self.assertEqual(soft.intercept_.shape, (3,))
        hub = self.fitted["huber"]
        self.assertEqual(hub.model_json_["target_bounds"], [0, 1500])
        self.assertEqual(hub.privacy_["delta"], 1e-6)
        self.assertEqual(hub.ledger_["id"], scalar(
            self.conn, "SELECT ledger_id FROM dperm.model('py_duration')"))
        self.assertEqual(hub.version_, 1)
        p = dperm.DPLogisticRegression(epsilon=2, l2=0.1).get_params()
        self.assertEqual((p["epsilon"], p["l2"]), (2, 0.1))
        est = dperm.DPLogisticRegression().set_params(epsilon=3, algorithm="output_gd")
        self.assertEqual(est.dp_options(), {"epsilon": 3, "delta": 0.0, "algorithm": "output_gd"})
        with self.assertRaises(ValueError):
            est.set_params(bogus=1)

    def test_budget_refusal(self):
        before = scalar(self.conn, "SELECT count(*) FROM dperm.ledger")
        est = dperm.DPLogisticRegression(epsilon=50, connection=self.conn)
        with self.assertRaises(dperm.BudgetExhausted) as cm:
            est.fit(TABLE, spec_with("y", {"values": ["no", "yes"]}))
        e = cm.exception
        self.assertIsInstance(e, dperm.DPermError)
        self.assertEqual((e.sqlstate, e.pgcode), ("DP001", "DP001"))
        self.assertIn("does not fit", e.message)
        self.assertIn("epsilon = 50", e.detail)
        self.assertIn("dperm.set_budget", e.hint)
        self.assertEqual(scalar(self.conn, "SELECT count(*) FROM dperm.ledger"), before)
        with self.assertRaises(dperm.InvalidParameter) as cm:
            dperm.DPLogisticRegression(epsilon=1, algorithm="nope", connection=self.conn).fit(
                TABLE, spec_with("y", {"values": ["no", "yes"]}))
        self.assertEqual(cm.exception.sqlstate, "22023")

    def test_ledger_and_budgets(self):
        led = dperm.ledger(self.conn, TABLE)
        ids = [r[0] for r in run(self.conn, "SELECT id FROM dperm.ledger WHERE relations @> "
                                            "ARRAY[%s::regclass] ORDER BY id", (TABLE,))[1]]
        self.assertEqual(list(led["id"]), ids)
        self.assertGreaterEqual(len(ids), 3)
        status = dperm.budgets(self.conn).set_index("relation").loc[TABLE]
        self.assertEqual(status["releases"], len(ids))
        self.assertAlmostEqual(led["epsilon_spent"].iloc[-1], status["epsilon_spent"], places=9)
        self.assertAlmostEqual(led["epsilon_sum"].iloc[-1], led["epsilon"].sum(), places=9)
        named = led.dropna(subset=["model"])
        self.assertTrue({"py_subscribe", "py_marital", "py_duration"} <= set(named["model"]))
        fc = dperm.forecast(self.conn, "py_subscribe", schedule="30 2 * * *")
        info = fc.attrs["forecast"]
        runs = scalar(self.conn, "SELECT runs FROM dperm.retraining_forecast('py_subscribe')")
        self.assertEqual(info["runs"], runs)
        self.assertTrue(fc[fc["k"] == runs]["fits"].all())
        self.assertFalse(fc[fc["k"] == runs + 1]["fits"].any())
        self.assertTrue(fc[fc["k"] > 0]["run_at"].notna().all())

    def test_pictures(self):
        soft = self.fitted["softmax"]
        soft.evaluate(TABLE, 0.2)
        paths = [os.path.join(OUT, n) for n in ("spend.png", "forecast.png", "utility.png")]
        dperm.plot_spend(self.conn, TABLE, paths[0])
        dperm.plot_forecast(self.conn, "py_subscribe", paths[1], schedule="30 2 * * *")
        dperm.plot_privacy_utility(soft, paths[2], n=len(self.rows),
                                   evaluations=dperm.evaluations(self.conn, "py_marital"))
        import matplotlib.image as mpimg
        for p in paths:
            with self.subTest(png=p):
                self.assertGreater(os.path.getsize(p), 20000)
                img = mpimg.imread(p)
                self.assertGreater(img.shape[0], 400)
                self.assertGreater(float(np.std(img[..., :3])), 0.05)  # not blank
        print(f"pictures: {', '.join(paths)}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
