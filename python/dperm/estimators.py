"""scikit-learn-style estimators whose fit trains in the database.

``fit`` sends one statement — ``dperm.train`` (a one-off release) or, when
the estimator has a ``name``, ``dperm.train_model`` (a version of a named
model) — and reads back the released dp_model: the training rows never
leave the server. ``predict``/``predict_proba``/``decision_function`` score
a pandas DataFrame of raw columns in Python, encoded exactly as the feature
spec encodes them (encoding.py) and equal to ``dperm.predict``;
``predict_sql`` scores a whole relation in the database.
"""
import inspect
import json
import uuid

import numpy as np
import pandas as pd
from psycopg2 import sql as pgsql

from .connection import as_connection, frame, run, scalar
from .encoding import FeatureSpec, Model, value_text
from .errors import DPermError

__all__ = ["DPLogisticRegression", "DPSoftmaxRegression", "DPHuberRegressor", "Query"]

# The estimator parameters that are dperm options (docs/sql-reference.md, Options).
OPTION_PARAMS = ("epsilon", "delta", "algorithm", "l2", "l1", "fit_intercept", "intercept",
                 "feature_bound", "huber_delta", "target_bound", "radius", "iterations",
                 "step_size", "batch_size", "ls_sigma", "accountant", "neighbors", "dataset",
                 "seed", "classes")


class Query:
    """Training rows given by a query rather than a relation.

    ``fit(Query("SELECT ... FROM t WHERE ..."), features, label)`` calls
    ``dperm.train_query(query, features, label, loss, options)`` when the
    installed extension has it, and raises DPermError otherwise.
    """

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return f"Query({self.text!r})"


class _DPEstimator:
    _loss = None

    # --- scikit-learn's parameter protocol ---------------------------------
    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self, deep=True):
        """The constructor's parameters (scikit-learn's protocol)."""
        return {k: getattr(self, k) for k in self._param_names()}

    def set_params(self, **params):
        """Sets constructor parameters; unknown names are an error."""
        names = set(self._param_names())
        for k, v in params.items():
            if k not in names:
                raise ValueError(f"invalid parameter {k!r} for {type(self).__name__}")
            setattr(self, k, v)
        return self

    def __repr__(self):
        given = {k: v for k, v in self.get_params().items()
                 if v is not None and k != "connection"}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in given.items())})"

    # --- options ------------------------------------------------------------
    def dp_options(self):
        """The options jsonb of the release: every option parameter that is
        not None, then ``options`` (a dict) over them."""
        opts = {}
        for k in OPTION_PARAMS:
            if k in self._param_names():
                v = getattr(self, k)
                if v is not None:
                    opts[k] = v.item() if isinstance(v, np.generic) else v
        opts.update(self.options or {})
        return opts

    def _conn(self):
        if getattr(self, "_connection", None) is None:
            self._connection = as_connection(self.connection)
        return self._connection

    # --- training -----------------------------------------------------------
    def fit(self, source, features=None, label=None, *, mode=None):
        """Trains in the database and reads back the released model.

        source: a relation name (``"bank"``, ``"public.bank"``) or a Query.
        features: a feature spec (a dict: raw columns with their public
        domains; the user guide's *Feature specs*) or the name of a float8[]
        column. label: the label column (with a spec, the column marked
        ``"label": true`` when omitted). mode: dperm.train's mode (auto,
        in_memory, streaming) for a one-off release.

        A one-off release when the estimator has no ``name``
        (``dperm.train``), else a new version of the named model
        (``dperm.train_model``). A refused release raises BudgetExhausted.
        """
        conn = self._conn()
        if features is None:
            raise DPermError("fit needs features: a feature spec (dict) or a float8[] column")
        self.spec_ = FeatureSpec(features) if isinstance(features, (dict, str)) and \
            not (isinstance(features, str) and not features.lstrip().startswith("{")) else None
        if self.spec_ is not None:
            features_arg = json.dumps(self.spec_.spec)
            if label is None:
                if self.spec_.label is None:
                    raise DPermError("fit needs a label: a column, or one marked \"label\": true in the spec")
                label = self.spec_.label[0]
        else:
            features_arg = features
            if label is None:
                raise DPermError("fit needs a label column")
        self.features_ = features_arg
        self.label_ = label
        options = json.dumps(self.dp_options())
        token = f"/* dperm.py {uuid.uuid4().hex} */ "
        spec_cast = "::jsonb" if self.spec_ is not None else "::text"
        if isinstance(source, Query):
            self._fit_query(conn, source, features_arg, label, options, token)
        elif self.name is None:
            mode_arg = ", %s" if mode is not None else ""
            params = [source, features_arg, label, self._loss, options] + ([mode] if mode else [])
            model = scalar(conn, token + "SELECT dperm.train(%s::regclass, %s" + spec_cast +
                           ", %s, %s, %s::jsonb" + mode_arg + ")::text", params)
            self.relation_ = scalar(conn, "SELECT %s::regclass::text", (source,))
            self._set_model(model)
            self.version_ = None
            self.ledger_ = self._ledger_row(conn, token=token)
        else:
            if mode is not None:
                raise DPermError("mode applies to one-off releases (dperm.train) only")
            self.version_ = scalar(conn, token + "SELECT dperm.train_model(%s, %s::regclass, %s" +
                                   spec_cast + ", %s, %s, %s::jsonb)",
                                   (self.name, source, features_arg, label, self._loss, options))
            self.relation_ = scalar(conn, "SELECT %s::regclass::text", (source,))
            _, rows = run(conn, "SELECT m.model::text, m.ledger_id, m.feature_spec::text"
                                "  FROM dperm.model(%s, %s) m", (self.name, self.version_))
            model, ledger_id, spec = rows[0]
            if spec is not None:
                self.spec_ = FeatureSpec(spec)
            self._set_model(model)
            self.ledger_ = self._ledger_row(conn, ledger_id=ledger_id)
        return self

    def _fit_query(self, conn, query, features, label, options, token):
        # (to_regproc is NULL for an overloaded name: train_query has two forms)
        exists = scalar(conn, "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_proc p"
                              " JOIN pg_catalog.pg_namespace s ON s.oid = p.pronamespace"
                              " WHERE s.nspname = 'dperm' AND p.proname = 'train_query')")
        if not exists:
            raise DPermError("this dperm has no dperm.train_query: train on a relation "
                             "(a view of the query, charged to the tables it reads)")
        self.relation_ = None
        if self.name is not None:
            # A named model on a query: each dperm.retrain runs the query again.
            self.version_ = scalar(conn, token + "SELECT dperm.train_model_query(%s, %s, %s, %s, %s,"
                                   " %s::jsonb)",
                                   (self.name, query.text, features, label, self._loss, options))
            _, rows = run(conn, "SELECT m.model::text, m.ledger_id FROM dperm.model(%s, %s) m",
                          (self.name, self.version_))
            model, ledger_id = rows[0]
            self._set_model(model)
            self.ledger_ = self._ledger_row(conn, ledger_id=ledger_id)
            return
        model = scalar(conn, token + "SELECT dperm.train_query(%s, %s, %s, %s, %s::jsonb)::text",
                       (query.text, features, label, self._loss, options))
        self._set_model(model)
        self.version_ = None
        self.ledger_ = self._ledger_row(conn, token=token)

    def _ledger_row(self, conn, ledger_id=None, token=None):
        """The release's dperm.ledger row (a dict; None when the role may not see it)."""
        if ledger_id is not None:
            df = frame(conn, "SELECT * FROM dperm.ledger WHERE id = %s", (ledger_id,))
        else:
            # A one-off release returns no id: its statement carries a token.
            df = frame(conn, "SELECT * FROM dperm.ledger WHERE role_name = current_user"
                             " AND strpos(query, %s) > 0 ORDER BY id DESC LIMIT 1", (token.strip(),))
        return df.iloc[0].to_dict() if len(df) else None

    def _set_model(self, model_text):
        self.model_ = Model(model_text)
        m = self.model_
        j = m.json
        self.model_json_ = j
        self.plan_ = j.get("plan")
        self.n_features_ = m.d
        self.feature_names_ = list(m.feature_names)
        self.feature_names_in_ = (np.array(self.spec_.raw_columns, dtype=object)
                                  if self.spec_ is not None else None)
        self.privacy_ = {
            "epsilon": j.get("epsilon"), "delta": j.get("delta"),
            "n": j.get("n"),
            # The model states n as counted: exact for a row-level release
            # (n is public, docs/user-guide.md); a unit-level release states
            # its number of units noisily (privacy_unit.units).
            "n_is": "exact" if j.get("privacy_unit") in (None, "row") else "rows exact, units noisy",
            "privacy_unit": j.get("privacy_unit"),
            "mechanism": j.get("mechanism"), "noise_scale": j.get("noise_scale"),
            "sensitivity": j.get("sensitivity"), "neighbors": j.get("neighbors"),
            "algorithm": j.get("algorithm"), "private": j.get("private"),
            "seeded": j.get("seeded"),
        }
        self._set_coefficients()

    def privacy_statement(self):
        """One sentence saying what the release guarantees and what it cost."""
        p = self.privacy_
        unit = p["privacy_unit"] if isinstance(p["privacy_unit"], str) else \
            f"unit {p['privacy_unit'].get('column')}"
        where = f" of {self.relation_}" if getattr(self, "relation_", None) else ""
        ledger = f" (ledger row {self.ledger_['id']})" if getattr(self, "ledger_", None) else ""
        return (f"({p['epsilon']:g}, {p['delta']:g})-differentially private per {unit}{where} "
                f"({p['neighbors']}), by {p['algorithm']} with {p['mechanism']} noise of scale "
                f"{p['noise_scale']:.4g}; n = {p['n']} ({p['n_is']}){ledger}"
                + ("" if p["private"] else "; SEEDED: not private"))

    # --- scoring ------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "model_"):
            raise DPermError(f"this {type(self).__name__} is not fitted yet: call fit")

    def encode(self, X):
        """The encoded rows (n x d) the model scores: X's raw columns through
        the feature spec, or X itself (a float8[]-trained model)."""
        self._check_fitted()
        if self.spec_ is not None:
            return self.spec_.encode(X)
        if isinstance(X, pd.DataFrame):
            if self.features_ in X.columns:  # the float8[] column itself, one list per row
                X = np.vstack([np.asarray(v, dtype=float) for v in X[self.features_]])
            else:
                X = X.to_numpy(dtype=float)
        x = np.asarray([list(r) for r in X] if not isinstance(X, np.ndarray) else X, dtype=float)
        return x

    def decision_function(self, X):
        """Margins (binary models) or class scores (softmax), after the
        training's clipping."""
        return self.model_.decision_function(self.encode(X))

    def predict_sql(self, relation, columns=None, limit=None):
        """Scores a relation in the database; a DataFrame of its rows (or of
        ``columns``) with ``prediction``: what dperm.predict returns
        (probability, Huber prediction or softmax class index); classifiers
        add ``proba`` (dp_predict_proba, class 0 first) and ``predicted``
        (the class label). No budget: it reads the released model only."""
        self._check_fitted()
        conn = self._conn()
        rel = scalar(conn, "SELECT %s::regclass::text", (relation,))
        if self.spec_ is not None:
            cols = pgsql.SQL(", ").join(
                pgsql.SQL("r.{}::text").format(pgsql.Identifier(c)) for c in self.spec_.raw_columns)
            feats = pgsql.SQL("dperm.encode_values(%(spec)s::jsonb, ARRAY[{}]::text[])").format(cols)
        else:
            feats = pgsql.SQL("r.{}::float8[]").format(pgsql.Identifier(self.features_))
        keep = (pgsql.SQL("r.*") if columns is None else
                pgsql.SQL(", ").join(pgsql.SQL("r.{}").format(pgsql.Identifier(c)) for c in columns))
        if self.name is not None and self.version_ is not None and self.spec_ is not None:
            pred = pgsql.SQL("dperm.predict(%(name)s, r, %(version)s)")
        elif self._loss == "softmax":
            pred = pgsql.SQL("dp_predict_class(%(model)s::dp_model, f.x)::float8")
        else:
            pred = pgsql.SQL("dp_predict(%(model)s::dp_model, f.x)")
        extra = pgsql.SQL("") if self._loss == "huber" else \
            pgsql.SQL(", dp_predict_proba(%(model)s::dp_model, f.x) AS proba")
        q = pgsql.SQL("SELECT {keep}, {pred} AS prediction{extra} FROM {rel} r, "
                      "LATERAL (SELECT {feats} AS x) f{limit}").format(
            keep=keep, pred=pred, extra=extra, rel=pgsql.SQL(rel), feats=feats,
            limit=pgsql.SQL(" LIMIT {}").format(pgsql.Literal(int(limit))) if limit else pgsql.SQL(""))
        params = {"spec": json.dumps(self.spec_.spec) if self.spec_ is not None else None,
                  "name": self.name, "version": self.version_,
                  "model": json.dumps(self.model_json_)}
        df = frame(conn, q.as_string(conn), params)
        if self._loss != "huber":
            idx = df["prediction"].to_numpy() if self._loss == "softmax" else \
                (df["prediction"].to_numpy() > 0.5)
            df["predicted"] = self.classes_[np.asarray(idx, dtype=int)]
        return df

    def explain(self, n, d=None, **options):
        """dp_explain's plan for this estimator's options (and ``options``
        over them) at n rows and d features (the spec's when fitted): no
        data read, no budget spent."""
        conn = self._conn()
        opts = self.dp_options()
        opts.update(options)
        if d is None:
            if getattr(self, "spec_", None) is None:
                raise DPermError("explain needs d (or a fitted estimator with a feature spec)")
            d = len(self.spec_.names)
        if self._loss == "softmax" and "classes" not in opts and getattr(self, "classes_", None) is not None:
            opts["classes"] = len(self.classes_)
        return scalar(conn, "SELECT dp_explain(%s, %s, %s, %s::jsonb)",
                      (self._loss, int(n), int(d), json.dumps(opts)))

    def evaluate(self, relation, epsilon, **options):
        """dperm.evaluate of the fitted named model on a relation: a private
        estimate of its accuracy and log-loss (classifiers) or RMSE (Huber),
        charged to the relation (BudgetExhausted when it cannot pay)."""
        self._check_fitted()
        if self.name is None:
            raise DPermError("evaluate needs a named model (an estimator with a name)")
        conn = self._conn()
        opts = dict(options, epsilon=epsilon)
        if self.version_ is not None:
            opts.setdefault("version", self.version_)
        if self.spec_ is not None:
            return scalar(conn, "SELECT dperm.evaluate(%s, %s::regclass, %s::jsonb)",
                          (self.name, relation, json.dumps(opts)))
        return scalar(conn, "SELECT dperm.evaluate(%s, %s::regclass, %s, %s, %s::jsonb)",
                      (self.name, relation, self.features_, self.label_, json.dumps(opts)))


class _Classifier(_DPEstimator):
    def predict_proba(self, X):
        """(n, K) class probabilities, class 0 first (logistic: 1 - p, p),
        equal to dp_predict_proba."""
        self._check_fitted()
        return self.model_.predict_proba(self.encode(X))

    def predict(self, X):
        """The predicted class labels (classes_): logistic p > 0.5, softmax
        the most likely class (the first on ties), as dp_predict_class."""
        self._check_fitted()
        p = self.model_.predict_proba(self.encode(X))
        idx = (p[:, 1] > 0.5).astype(int) if self._loss == "logistic" else np.argmax(p, axis=1)
        return self.classes_[idx]

    def score(self, X, y):
        """Accuracy on (X, y), exact and not private: X and y are yours.
        Labels compare by their text form when the classes are a spec's
        declared values (strings): 6 is class "6"."""
        pred = self.predict(X)
        y = np.asarray(y)
        if self.spec_ is not None and self.spec_.label_values:
            y = np.array([value_text(v) for v in y], dtype=object)
        return float(np.mean(pred == y))


class DPLogisticRegression(_Classifier):
    """Differentially private logistic regression, trained by dperm."""

    _loss = "logistic"

    def __init__(self, epsilon=1.0, delta=0.0, l2=None, l1=None, algorithm=None,
                 fit_intercept=None, intercept=None, feature_bound=None, radius=None,
                 iterations=None, step_size=None, batch_size=None, ls_sigma=None,
                 accountant=None, neighbors=None, dataset=None, seed=None, options=None,
                 name=None, connection=None):
        self.epsilon, self.delta, self.l2, self.l1, self.algorithm = epsilon, delta, l2, l1, algorithm
        self.fit_intercept, self.intercept, self.feature_bound = fit_intercept, intercept, feature_bound
        self.radius, self.iterations, self.step_size = radius, iterations, step_size
        self.batch_size, self.ls_sigma, self.accountant = batch_size, ls_sigma, accountant
        self.neighbors, self.dataset, self.seed, self.options = neighbors, dataset, seed, options
        self.name, self.connection = name, connection

    def _set_coefficients(self):
        m = self.model_
        self.coef_ = m.coef.reshape(1, -1)
        self.intercept_ = np.array([m.intercept])
        values = self.spec_.label_values if self.spec_ is not None else None
        self.classes_ = np.array(values, dtype=object) if values else np.array([False, True])

    def coefficients(self):
        """The coefficients as a Series named by the encoded features, the intercept first."""
        return pd.Series([self.intercept_[0]] + list(self.coef_[0]),
                         index=["intercept"] + self.feature_names_, name="coefficient")


class DPSoftmaxRegression(_Classifier):
    """Differentially private multinomial (softmax) regression over K classes."""

    _loss = "softmax"

    def __init__(self, epsilon=1.0, delta=0.0, classes=None, l2=None, l1=None, algorithm=None,
                 fit_intercept=None, intercept=None, feature_bound=None, radius=None,
                 iterations=None, step_size=None, batch_size=None, ls_sigma=None,
                 accountant=None, neighbors=None, dataset=None, seed=None, options=None,
                 name=None, connection=None):
        self.epsilon, self.delta, self.classes, self.l2, self.l1 = epsilon, delta, classes, l2, l1
        self.algorithm, self.fit_intercept, self.intercept = algorithm, fit_intercept, intercept
        self.feature_bound, self.radius, self.iterations = feature_bound, radius, iterations
        self.step_size, self.batch_size, self.ls_sigma = step_size, batch_size, ls_sigma
        self.accountant, self.neighbors, self.dataset = accountant, neighbors, dataset
        self.seed, self.options, self.name, self.connection = seed, options, name, connection

    def _set_coefficients(self):
        m = self.model_
        self.coef_ = m.coef
        self.intercept_ = m.intercept
        values = self.spec_.label_values if self.spec_ is not None else None
        self.classes_ = np.array(values, dtype=object) if values else np.arange(m.classes)

    def coefficients(self):
        """The coefficients as a DataFrame: one column per class, rows the
        intercept then the encoded features."""
        data = np.vstack([self.intercept_[None, :], self.coef_.T])
        return pd.DataFrame(data, index=["intercept"] + self.feature_names_,
                            columns=[str(c) for c in self.classes_])


class DPHuberRegressor(_DPEstimator):
    """Differentially private Huber regression (targets clipped to
    target_bound, or scaled through a spec's label bounds)."""

    _loss = "huber"

    def __init__(self, epsilon=1.0, delta=0.0, l2=None, l1=None, algorithm=None,
                 huber_delta=None, target_bound=None, fit_intercept=None, intercept=None,
                 feature_bound=None, radius=None, iterations=None, step_size=None,
                 batch_size=None, ls_sigma=None, accountant=None, neighbors=None, dataset=None,
                 seed=None, options=None, name=None, connection=None):
        self.epsilon, self.delta, self.l2, self.l1, self.algorithm = epsilon, delta, l2, l1, algorithm
        self.huber_delta, self.target_bound = huber_delta, target_bound
        self.fit_intercept, self.intercept, self.feature_bound = fit_intercept, intercept, feature_bound
        self.radius, self.iterations, self.step_size = radius, iterations, step_size
        self.batch_size, self.ls_sigma, self.accountant = batch_size, ls_sigma, accountant
        self.neighbors, self.dataset, self.seed, self.options = neighbors, dataset, seed, options
        self.name, self.connection = name, connection

    def _set_coefficients(self):
        m = self.model_
        self.coef_ = m.coef
        self.intercept_ = m.intercept
        self.classes_ = None

    def predict(self, X):
        """Predictions in the label's units (dperm.predict)."""
        self._check_fitted()
        return self.model_.decision_function(self.encode(X))

    def score(self, X, y):
        """R² on (X, y), exact and not private."""
        y = np.asarray(y, dtype=float)
        r = y - self.predict(X)
        return float(1 - np.sum(r * r) / np.sum((y - y.mean()) ** 2))

    def coefficients(self):
        """The coefficients as a Series named by the encoded features, the intercept first."""
        return pd.Series([self.intercept_] + list(self.coef_),
                         index=["intercept"] + self.feature_names_, name="coefficient")
