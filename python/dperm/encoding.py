"""Feature specs and dp_model scoring in numpy, as the server computes them.

* ``FeatureSpec.encode`` is src/core/model/feature_spec.cpp's EncodeRow on a
  DataFrame of raw columns: ``bounds`` 2 (v - lo)/(hi - lo) - 1 clamped to
  [-1, 1] (NULL, NaN or not a number -> 0), ``values`` one coordinate per
  declared value compared with the value's text form (unknown or NULL ->
  all 0), ``type: boolean`` 1 for true, 0 for false or NULL.
* ``Model`` reads a dp_model's JSON (src/core/model/model.cpp) and scores
  encoded rows: each row clipped to the model's feature_bound as
  src/core/rows/rows.cpp's ClipRow does, then the margin, the logistic
  probability or the softmax probabilities.
"""
import decimal
import json
import math

import numpy as np
import pandas as pd

from .errors import DPermError

__all__ = ["FeatureSpec", "Model", "jsonb_key_order", "value_text"]


def jsonb_key_order(spec):
    """The spec's columns in the order jsonb keeps its keys (by length in
    bytes, then bytes; a repeated key keeps its last value): the order the
    server encodes them in."""
    return sorted(spec.items(), key=lambda kv: (len(kv[0].encode()), kv[0].encode()))


def _is_null(v):
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, (float, np.floating)) and math.isnan(v)


def _float_text(x):
    """float8's text form (PostgreSQL 12+: the shortest digits that round
    trip, in exponent form when the exponent is < -4 or >= 15)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0" if math.copysign(1, x) < 0 else "0"
    sign, digits, exp = decimal.Decimal(repr(x)).normalize().as_tuple()
    digits = "".join(map(str, digits))
    e10 = exp + len(digits) - 1  # the exponent of the first digit
    minus = "-" if sign else ""
    if e10 < -4 or e10 >= 15:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{minus}{mantissa}e{'-' if e10 < 0 else '+'}{abs(e10):02d}"
    if exp >= 0:
        return minus + digits + "0" * exp
    point = len(digits) + exp
    if point > 0:
        return minus + digits[:point] + "." + digits[point:]
    return minus + "0." + "0" * (-point) + digits


def value_text(v):
    """A raw value's text form, as the column's output function writes it
    (what a ``values`` declaration is compared with); None for NULL."""
    if _is_null(v):
        return None
    if isinstance(v, (bool, np.bool_)):
        return "t" if v else "f"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return _float_text(float(v))
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, bytes):
        return v.decode()
    if hasattr(v, "isoformat") and not hasattr(v, "hour"):
        return v.isoformat()  # a date: PostgreSQL's ISO DateStyle
    return str(v)


def _number(v):
    """A bounds column's value as a double: NaN for NULL or not a number."""
    if _is_null(v):
        return math.nan
    if isinstance(v, (bool, np.bool_)):
        return math.nan  # a boolean is not a number column (the spec refuses it)
    if isinstance(v, (int, float, np.integer, np.floating, decimal.Decimal)):
        return float(v)
    try:
        return float(str(v).strip())
    except ValueError:
        return math.nan


def _is_true(v):
    if _is_null(v):
        return False
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    return str(v) in ("t", "true")


class FeatureSpec:
    """A feature spec (a dict, or its JSON text) and its encoding."""

    def __init__(self, spec):
        if isinstance(spec, str):
            spec = json.loads(spec)
        if not isinstance(spec, dict) or not spec:
            raise DPermError("a feature spec must be a non-empty dict of columns")
        self.spec = dict(spec)
        self.columns = []      # (name, declaration), features in encoding order
        self.label = None      # (name, declaration) of the column marked "label"
        self.names = []        # encoded coordinates: "age", "home=owner", ...
        for name, decl in jsonb_key_order(self.spec):
            if decl.get("label") is True:
                self.label = (name, decl)
                continue
            self.columns.append((name, decl))
            if "values" in decl:
                self.names += [f"{name}={v}" for v in decl["values"]]
            else:
                self.names.append(name)
        self.norm_bound = math.sqrt(len(self.columns))

    @property
    def raw_columns(self):
        """The raw columns a row needs (the features, in encoding order)."""
        return [name for name, _ in self.columns]

    @property
    def label_values(self):
        """The declared values of a ``values`` label, else None."""
        if self.label is not None and "values" in self.label[1]:
            return list(self.label[1]["values"])
        return None

    def encode(self, X):
        """The encoded rows (n x d float64) of a DataFrame (or dict of
        columns, or list of dicts) holding at least the spec's columns."""
        if not isinstance(X, pd.DataFrame):
            X = pd.DataFrame(X)
        # A column the DataFrame spells in another case (PostgreSQL folds
        # unquoted names to lower case) is that column when it is the only one.
        lower = {}
        for c in X.columns:
            lower.setdefault(str(c).lower(), []).append(c)
        renames = {}
        for c in self.raw_columns:
            if c not in X.columns and len(lower.get(c.lower(), [])) == 1:
                renames[lower[c.lower()][0]] = c
        if renames:
            X = X.rename(columns=renames)
        missing = [c for c in self.raw_columns if c not in X.columns]
        if missing:
            raise DPermError("the DataFrame lacks the feature spec's columns: " + ", ".join(missing))
        out = np.zeros((len(X), len(self.names)))
        j = 0
        for name, decl in self.columns:
            col = X[name].tolist()
            if "bounds" in decl:
                lo, hi = float(decl["bounds"][0]), float(decl["bounds"][1])
                v = np.array([_number(x) for x in col], dtype=float)
                with np.errstate(invalid="ignore", over="ignore"):
                    scaled = 2 * ((v - lo) / (hi - lo)) - 1
                scaled = np.where(np.isnan(scaled), 0.0, np.clip(scaled, -1.0, 1.0))
                out[:, j] = scaled
                j += 1
            elif "values" in decl:
                index = {str(v): i for i, v in enumerate(decl["values"])}
                for r, x in enumerate(col):
                    hit = index.get(value_text(x))
                    if hit is not None:
                        out[r, j + hit] = 1.0
                j += len(decl["values"])
            else:
                out[:, j] = [1.0 if _is_true(x) else 0.0 for x in col]
                j += 1
        return out


def clip_rows(x, bound):
    """Each row clipped to L2 norm ``bound`` exactly as ClipRow does
    (src/core/rows/rows.cpp): NaN -> 0, infinite entries share the bound,
    a row within (d + 8) eps of the bound or above it scaled to
    (1 - (d + 8) eps) times the bound."""
    x = np.array(x, dtype=float, copy=True)
    if x.ndim == 1:
        x = x[None, :]
    n, d = x.shape
    tol = (d + 8) * np.finfo(float).eps
    x[np.isnan(x)] = 0.0
    if n == 0 or d == 0:
        return x
    inf_rows = np.isinf(x).any(axis=1)
    for r in np.flatnonzero(inf_rows):
        row = x[r]
        inf = np.isinf(row)
        unit = bound / math.sqrt(inf.sum()) * (1.0 - tol)
        x[r] = np.where(inf, np.copysign(unit, row), 0.0)
    rest = ~inf_rows
    max_abs = np.max(np.abs(x), axis=1)
    rest &= max_abs > 0
    safe = np.where(rest, max_abs, 1.0)
    unit_rows = x / safe[:, None]
    scaled = np.sum(unit_rows * unit_rows, axis=1)
    norm = max_abs * np.sqrt(scaled)
    over = rest & (norm > bound * (1.0 - tol))
    if over.any():
        factor = bound / np.sqrt(scaled[over]) * (1.0 - tol)
        x[over] = unit_rows[over] * factor[:, None]
    return x


def _sigmoid(m):
    out = np.empty_like(m)
    pos = m >= 0
    out[pos] = 1 / (1 + np.exp(-m[pos]))
    e = np.exp(m[~pos])
    out[~pos] = e / (1 + e)
    return out


class Model:
    """A released dp_model read from its JSON (text or dict)."""

    def __init__(self, model):
        self.json = json.loads(model) if isinstance(model, str) else dict(model)
        j = self.json
        self.loss = j["loss"]
        pre = j["preprocessing"]
        self.feature_bound = float(pre["feature_bound"])
        self.fit_intercept = bool(pre["fit_intercept"])
        if self.loss == "softmax":
            self.classes = int(j["classes"])
            self.coef = np.array(j["coefficients"], dtype=float).reshape(self.classes, -1)
            self.intercept = (np.array(j["intercept"], dtype=float) if self.fit_intercept
                              else np.zeros(self.classes))
        else:
            self.classes = 2 if self.loss == "logistic" else None
            self.coef = np.array(j["coefficients"], dtype=float)
            self.intercept = float(j["intercept"]) if self.fit_intercept else 0.0
        self.d = self.coef.shape[-1]
        self.feature_names = j.get("feature_names") or [f"x{i + 1}" for i in range(self.d)]

    def _rows(self, x):
        x = np.asarray(x, dtype=float)
        if x.ndim == 1:
            x = x[None, :]
        if x.shape[1] != self.d:
            raise DPermError(f"rows have {x.shape[1]} features; the model has d = {self.d}")
        return clip_rows(x, self.feature_bound)

    def decision_function(self, x):
        """Margins (n,) of binary models; scores (n, K) of softmax models
        (clamped to +-1e300, NaN -> -1e300, as PredictSoftmax does)."""
        x = self._rows(x)
        if self.loss == "softmax":
            s = x @ self.coef.T + self.intercept
            s = np.where(np.isnan(s), -1e300, np.clip(s, -1e300, 1e300))
            return s
        return x @ self.coef + self.intercept

    def predict_proba(self, x):
        """(n, K) class probabilities, class 0 first (logistic: 1 - p, p)."""
        if self.loss == "huber":
            raise DPermError("a Huber model has no class probabilities", sqlstate="22023")
        s = self.decision_function(x)
        if self.loss == "logistic":
            p = _sigmoid(s)
            return np.column_stack([1 - p, p])
        s = s - s.max(axis=1, keepdims=True)
        e = np.exp(s)
        return e / e.sum(axis=1, keepdims=True)

    def predict_value(self, x):
        """What dperm.predict returns: the probability (logistic), the
        prediction (Huber), the class index (softmax: argmax, first on ties)."""
        if self.loss == "huber":
            return self.decision_function(x)
        if self.loss == "logistic":
            return _sigmoid(self.decision_function(x))
        return np.argmax(self.predict_proba(x), axis=1).astype(float)
