"""The held-out report's sections on dperm's default and on l2 => 'auto'
(bench/scripts/heldout/heldout.py; the rest of the report: heldout_markdown.py).
"""

import numpy as np

from heldout_common import AUTO_GRID, DATASETS, METRIC_NAMES, NO_L2, fmt_l2, fmt_num


def auto_section(r, w, datasets, E, L2, metric, what):
    """dperm auto (l2 => 'auto': the l2 chosen privately, charged in the same
    epsilon) against dperm's default at l2 = 0 and at its test-oracle best l2
    (not private), and diffprivlib at its oracle best l2."""
    if not datasets or len(r.df[r.df.method == "dperm auto"]) == 0:
        return
    w(f"## dperm auto: l2 chosen privately (test {what})")
    w("")
    w("`l2 => 'auto'` (select_l2.hpp, docs/accountant.md *Choosing l2 privately*): every l2 of "
      "the public grid " + "{" + ", ".join(f"{v:g}" for v in AUTO_GRID) + "} trained on 80 % of "
      "the training rows, their accuracy (Huber: absolute error capped at B) on the other 20 % "
      "released with discrete Gaussian noise, the best one kept — all inside the same (ε, δ). "
      "The \"best l2\" columns pick l2 on the **test** split (an oracle no private user has). "
      "Chosen l2: how often each grid value won over the seeds.")
    w("")
    w(f"| dataset | ε | dperm auto | chosen l2 | dperm default, l2 = 0 | dperm default, best l2 "
      f"(oracle) | diffprivlib, best μ (oracle) | auto vs diffprivlib |")
    w("|---|---:|---:|---|---:|---:|---:|:-:|")
    peer = "diffprivlib, at the same μ" if metric == "acc" else "diffprivlib LinearRegression"
    for ds in datasets:
        for eps in E:
            a = r.values(ds, "dperm auto", -1, eps, metric)
            cell = r.cell(ds, "dperm auto", -1, eps)
            counts = cell["chosen_l2"].value_counts().sort_index() if len(cell) else {}
            chosen = ", ".join(f"{l2:g}×{int(c)}" for l2, c in counts.items()) if len(cell) else "—"
            d0 = r.values(ds, "dperm default", 0.0, eps, metric)
            bd = r.best_l2(ds, "dperm default", eps, metric, L2)
            db = r.values(ds, "dperm default", bd, eps, metric)
            if metric == "acc":
                bp = r.best_l2(ds, peer, eps, metric, L2)
                b = r.values(ds, peer, bp, eps, metric)
                bl = f" [{fmt_l2(bp)}]"
            else:
                b = r.values(ds, peer, -1, eps, metric)
                bl = ""
            v, _ = r.compare(a, b, metric)
            w(f"| {DATASETS[ds][0].split(' ')[0]} | {eps:g} | {r.mse(a)} | {chosen} | {r.mse(d0)} | "
              f"{r.mse(db)} [{fmt_l2(bd)}] | {r.mse(b)}{bl} | {f'**{v}**' if v != 'tie' else v} |")
    w("")


def tally_text(tally):
    """'test accuracy: W / T / L; ...' of {metric: {verdict: count}}."""
    return "; ".join(f"{METRIC_NAMES[m]}: {t.get('win', 0)} / {t.get('tie', 0)} / "
                     f"{t.get('loss', 0)}" for m, t in tally.items())


def default_sections(r, w, logistic, regression, E, L2):
    """Issue 15's targets for dperm's DEFAULT: neither l2 nor algorithm given
    (DefaultL2, then DefaultAlgorithm), no oracle; l2 => 'auto' beside it."""
    bold = lambda v: f"**{v}**" if v != "tie" else v
    def used_l2(ds, eps):  # the mean l2 DefaultL2 chose, as text
        v = r.cell(ds, NO_L2, -1, eps)["l2_used"].mean()
        return "0" if v == 0 else fmt_num(v)
    if logistic:
        w("## Issue 15's classification targets: dperm's default (no l2, no algorithm given)")
        w("")
        w("Target: dperm's default at least diffprivlib's best-l2 accuracy at every ε on every "
          "dataset, and never below the majority baseline by more than its standard error. "
          "dperm default: neither `l2` nor `algorithm` given — `DefaultL2` (include/dperm/planning/plan_release.hpp, "
          "docs/user-guide.md *Choosing l2*) sets l2 from public n and ε (mean l2 used in brackets), then "
          "`DefaultAlgorithm` picks the mechanism; nothing is tuned on the test split. "
          "diffprivlib best: its μ picked on the **test** split (an oracle); diffprivlib default: "
          "C = 1. dperm auto: `l2 => 'auto'` (private selection inside the same ε). "
          "Verdicts: Mann–Whitney over the seeds, p < 0.05. \"met?\": the default's mean accuracy "
          "≥ diffprivlib best's and ≥ majority − s.e.")
        w("")
        w("| dataset | ε | majority acc | dperm default acc [l2] | dperm auto acc | "
          "diffprivlib best acc [μ] | diffprivlib default acc | default vs best | "
          "default − best | met? | dperm default AUC | diffprivlib best AUC [μ] | AUC |")
        w("|---|---:|---:|---:|---:|---:|---:|:-:|---:|:-:|---:|---:|:-:|")
        met, tally, missed = 0, {}, []
        peer = "diffprivlib, at the same μ"
        for ds in logistic:
            maj = r.values(ds, "majority class", -1, np.inf, "acc")
            for eps in E:
                a = r.values(ds, NO_L2, -1, eps, "acc")
                au = r.values(ds, "dperm auto", -1, eps, "acc")
                bp = r.best_l2(ds, peer, eps, "acc", L2)
                if len(a) == 0 or bp is None:  # a partial run (--from-csv parts)
                    continue
                b = r.values(ds, peer, bp, eps, "acc")
                bdef = r.values(ds, "diffprivlib, defaults (C = 1)", -1, eps, "acc")
                v, _ = r.compare(a, b, "acc")
                se = np.std(a, ddof=1) / np.sqrt(len(a)) if len(a) > 1 else 0.0
                ok = len(a) and len(b) and a.mean() >= b.mean() and a.mean() >= maj.mean() - se
                met += bool(ok)
                if not ok:
                    missed.append(f"{DATASETS[ds][0].split(' ')[0]} ε = {eps:g} "
                                  f"({a.mean() - b.mean():+.4f}, {v})")
                bpa = r.best_l2(ds, peer, eps, "auc", L2)
                aa = r.values(ds, NO_L2, -1, eps, "auc")
                ba = r.values(ds, peer, bpa, eps, "auc")
                va, _ = r.compare(aa, ba, "auc")
                for m, vv in (("acc", v), ("auc", va)):
                    tally.setdefault(m, {}).setdefault(vv, 0)
                    tally[m][vv] += 1
                gap = a.mean() - b.mean() if len(a) and len(b) else np.nan
                w(f"| {DATASETS[ds][0].split(' ')[0]} | {eps:g} | {r.mse(maj)} | "
                  f"{r.mse(a)} [{used_l2(ds, eps)}] | {r.mse(au)} | "
                  f"{r.mse(b)} [{fmt_l2(bp)}] | {r.mse(bdef)} | {bold(v)} | {gap:+.4f} | "
                  f"{'yes' if ok else '**no**'} | {r.mse(aa)} | {r.mse(ba)} [{fmt_l2(bpa)}] | "
                  f"{bold(va)} |")
        w("")
        w(f"Targets met (means) in {met} of {len(logistic) * len(E)} cells. Win/tie/loss of the "
          "default against diffprivlib's oracle best (dperm's view): " + tally_text(tally) + "." +
          (" Missed by the means (gap to diffprivlib's best, verdict): " + "; ".join(missed) +
           "." if missed else ""))
        w("")
    if regression:
        w("## Huber: dperm's default (no l2, no algorithm given)")
        w("")
        w("Test RMSE in the target's original units, mean ± s.e. dperm default: DefaultL2's l2 "
          "(mean in brackets); `l2 => 0`: the call that gives l2 = 0 (dp_gd); best l2: the grid's "
          "l2 picked on the test split (an oracle); auto: `l2 => 'auto'`. diffprivlib "
          "LinearRegression clipped to the public range [0, 1] (its unclipped RMSE is far worse, "
          "per-dataset tables). Verdicts: Mann–Whitney, p < 0.05, dperm default's view.")
        w("")
        w("| dataset | ε | training mean | dperm default [l2] | dperm, l2 => 0 | "
          "dperm, best l2 (oracle) | dperm auto | diffprivlib clipped | default vs l2 => 0 | "
          "default vs diffprivlib clipped |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|:-:|:-:|")
        DPLC = "diffprivlib LinearRegression, clipped to [0, 1]"
        for ds in regression:
            base = r.values(ds, "training mean", -1, np.inf, "rmse")
            for eps in E:
                a = r.values(ds, NO_L2, -1, eps, "rmse")
                z = r.values(ds, "dperm default", 0.0, eps, "rmse")
                bd = r.best_l2(ds, "dperm default", eps, "rmse", L2)
                o = r.values(ds, "dperm default", bd, eps, "rmse")
                au = r.values(ds, "dperm auto", -1, eps, "rmse")
                dc = r.values(ds, DPLC, -1, eps, "rmse")
                v0, _ = r.compare(a, z, "rmse")
                v1, _ = r.compare(a, dc, "rmse")
                w(f"| {DATASETS[ds][0]} | {eps:g} | {r.mse(base)} | {r.mse(a)} "
                  f"[{used_l2(ds, eps)}] | {r.mse(z)} | {r.mse(o)} [{fmt_l2(bd)}] | "
                  f"{r.mse(au)} | {r.mse(dc)} | {bold(v0)} | {bold(v1)} |")
        w("")
