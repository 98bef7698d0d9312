"""The held-out benchmark's common ground (bench/scripts/heldout/heldout.py):
the datasets, the metrics and their names, the 70/30 splits, number
formatting and the report's table of per-seed results (Report).
"""

from pathlib import Path

import numpy as np
import scipy
import scipy.stats
from sklearn.metrics import roc_auc_score

BENCH = Path(__file__).resolve().parents[2]  # bench/ (load_datasets.py)
REPO = BENCH.parent

# name -> (title, loss)
DATASETS = {
    "bank": ("BANK", "logistic"),
    "adult": ("ADULT", "logistic"),
    "creditcard": ("CREDIT (default of credit card clients)", "logistic"),
    "bike": ("BIKE", "huber"),
    "wine": ("WINE", "huber"),
}
DELTA = 1e-6
NO_L2 = "dperm default, no l2"  # neither l2 nor algorithm given: DefaultL2 (include/dperm/planning/plan_release.hpp)
AUTO_GRID = [1e-3, 1e-2, 1e-1, 1.0]  # L2Grid() in src/core/release/select_l2.cpp
HIGHER_BETTER = {"acc": True, "bacc": True, "auc": True, "logloss": False, "rmse": False,
                 "r2": True}
METRIC_NAMES = {"acc": "test accuracy", "bacc": "test balanced accuracy",
                "auc": "test ROC AUC", "logloss": "test log-loss",
                "rmse": "test RMSE (original units)", "r2": "test R²"}


def fmt_num(v):
    """A compact number: 0.1234, 1.23e-05, 12.3."""
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "—"
    a = abs(v)
    if a != 0 and (a < 1e-3 or a >= 1e4):
        return f"{v:.2e}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 10:
        return f"{v:.2f}"
    return f"{v:.4f}" if a < 1 else f"{v:.3f}"


def fmt_l2(v):
    return "0" if v == 0 else f"{v:g}"


def splits_for(n, seeds):
    """Per seed: (train indices, test indices), a 70/30 random split."""
    out = []
    for s in seeds:
        perm = np.random.default_rng(s).permutation(n)
        m = int(round(0.7 * n))
        out.append((perm[:m], perm[m:]))
    return out


def logistic_metrics(z, y):
    """Accuracy, AUC and exact log-loss of margins z for labels y in {0, 1}."""
    s = np.where(y == 1, 1.0, -1.0)
    hit = (z > 0) == (y == 1)
    return {"acc": float(np.mean(hit)),
            "bacc": float(0.5 * (np.mean(hit[y == 1]) + np.mean(hit[y != 1]))),
            "auc": float(roc_auc_score(y, z)) if np.ptp(z) > 0 else 0.5,
            "logloss": float(np.mean(np.logaddexp(0.0, -s * z))),
            "pos": float(np.mean(z > 0))}


def regression_metrics(pred, y, scale):
    """RMSE in the target's original units (scale = max - min) and R²."""
    sse = float(np.sum((pred - y) ** 2))
    sst = float(np.sum((y - y.mean()) ** 2))
    return {"rmse": float(np.sqrt(sse / len(y))) * scale, "r2": 1.0 - sse / sst}


def summarise(df):
    """Mean and standard error over seeds per (dataset, method, l2, eps)."""
    keys = ["dataset", "method", "l2", "eps"]
    g = df.fillna({"l2": -1}).groupby(keys)
    out = {}
    for key, grp in g:
        out[key] = grp
    return out


class Report:
    def __init__(self, df, args):
        self.df = df.copy()
        self.df["l2"] = self.df["l2"].fillna(-1.0)
        self.args = args

    def cell(self, dataset, method, l2, eps):
        sel = self.df[(self.df.dataset == dataset) & (self.df.method == method)
                      & np.isclose(self.df.l2, l2) & (self.df.eps == eps)]
        return sel

    def values(self, dataset, method, l2, eps, metric):
        sel = self.cell(dataset, method, l2, eps).sort_values("seed")
        return sel[metric].to_numpy()

    @staticmethod
    def mse(v):
        if len(v) == 0:
            return "—"
        se = np.std(v, ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0
        return f"{fmt_num(float(np.mean(v)))} ± {fmt_num(float(se))}"

    def best_l2(self, dataset, method, eps, metric, grid):
        """The l2 of the grid with the best mean test metric (an oracle)."""
        best, best_v = None, None
        for l2 in grid:
            v = self.values(dataset, method, l2, eps, metric)
            if len(v) == 0:
                continue
            m = float(np.mean(v))
            if best_v is None or (m > best_v if HIGHER_BETTER[metric] else m < best_v):
                best, best_v = l2, m
        return best

    def compare(self, a, b, metric):
        """Win/tie/loss of sample a against b: Mann-Whitney two-sided p < 0.05."""
        if len(a) == 0 or len(b) == 0:
            return "—", 1.0
        if np.all(a == a[0]) and np.all(b == b[0]) and a[0] == b[0]:
            return "tie", 1.0
        p = float(scipy.stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)
        if p >= 0.05:
            return "tie", p
        better = np.mean(a) > np.mean(b) if HIGHER_BETTER[metric] else np.mean(a) < np.mean(b)
        return ("win" if better else "loss"), p
