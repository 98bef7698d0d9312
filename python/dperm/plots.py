"""Pictures of where the budget went, saved as PNG (matplotlib, Agg).

* ``plot_spend``: a relation's spend over time, stacked by role and by
  model, with the composed spend and the budget line;
* ``plot_forecast``: the spend run by run of a model's scheduled
  retraining until the budget is exhausted;
* ``plot_privacy_utility``: the planned noise across epsilon from
  dp_explain (no data read, no budget spent), and the private evaluations
  already paid for (dperm.evaluate) as points.
"""
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.dates as mdates  # noqa: E402
import matplotlib.ticker  # noqa: E402,F401
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .budget import budgets, forecast, ledger  # noqa: E402
from .connection import as_connection, scalar  # noqa: E402
from .errors import DPermError  # noqa: E402

__all__ = ["plot_spend", "plot_forecast", "plot_privacy_utility"]

EPS_UNIT = "ε (privacy loss; dimensionless)"


def _time_axis(ax, span=None):
    """Dates on x: hours, minutes and seconds when the span is short (the
    date then goes into the axis label), else concise dates."""
    locator = mdates.AutoDateLocator(minticks=4, maxticks=9)
    ax.xaxis.set_major_locator(locator)
    if span is not None and span < pd.Timedelta(days=1):
        ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M:%S"))
    else:
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))


def _group_label(row, by):
    if by == "role":
        return str(row["role"])
    if row["model"] is not None and not pd.isna(row["model"]):
        return f"model {row['model']}"
    if row["algorithm"] == "evaluate":
        return "evaluations"
    return "one-off releases"


def plot_spend(conn, relation, path="spend.png", by=("role", "model"), title=None):
    """Saves a PNG of ``relation``'s spend over time: one panel per
    grouping in ``by`` ("role", "model"), each the cumulative basic ε
    (sums) stacked by group, the spend as the budget's accounting composes
    it (black) and the budget (red). Returns the ledger DataFrame drawn."""
    conn = as_connection(conn)
    df = ledger(conn, relation)
    if len(df) == 0:
        raise DPermError(f"no ledger rows of {relation} are visible to this role")
    status = budgets(conn)
    rel = scalar(conn, "SELECT %s::regclass::text", (relation,))
    st = status[status["relation"] == rel]
    budget = float(st["epsilon_budget"].iloc[0]) if len(st) else None
    accounting = st["accounting"].iloc[0] if len(st) else "none"
    t = pd.to_datetime(df["released_at"], utc=True)
    span = (t.max() - t.min()) or pd.Timedelta(seconds=1)
    t0 = t.min() - span * 0.05
    t_end = t.max() + span * 0.05  # the last level stays visible
    times = [t0] + list(t) + [t_end]
    fig, axes = plt.subplots(len(by), 1, figsize=(10, 4.2 * len(by)), sharex=True, squeeze=False)
    for ax, grouping in zip(axes[:, 0], by):
        labels = [_group_label(r, grouping) for _, r in df.iterrows()]
        groups = list(dict.fromkeys(labels))
        stacks = []
        for g in groups:
            eps = np.where(np.array(labels) == g, df["epsilon"].to_numpy(dtype=float), 0.0)
            cum = np.cumsum(eps)
            stacks.append(np.concatenate([[0.0], cum, cum[-1:]]))
        colors = plt.cm.tab10(np.arange(len(groups)) % 10)
        ax.stackplot(times, *stacks, labels=[f"{g} (Σε = {s[-1]:.3g})" for g, s in zip(groups, stacks)],
                     step="post", colors=colors, alpha=0.75)
        spent = df["epsilon_spent"].to_numpy(dtype=float)
        spent = np.concatenate([[0.0], spent, spent[-1:]])
        ax.step(times, spent, where="post", color="black", linewidth=2,
                label=f"spent under {accounting} accounting (now {spent[-1]:.3g})")
        if budget is not None:
            ax.axhline(budget, color="red", linestyle="--", linewidth=2,
                       label=f"budget ε = {budget:g}")
            if len(st) and abs(float(st["epsilon_spent"].iloc[0]) - spent[-1]) > 1e-9:
                ax.plot([times[-1]], [float(st["epsilon_spent"].iloc[0])], "kx", markersize=10,
                        label="spent, all roles (budget_status)")
        ax.set_ylabel(f"cumulative {EPS_UNIT}")
        ax.set_title(f"by {grouping}")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", fontsize=8, framealpha=0.9)
    _time_axis(axes[-1, 0], t_end - t0)
    day = "" if (t_end - t0) >= pd.Timedelta(days=1) else f", {t.min().strftime('%Y-%m-%d')}"
    axes[-1, 0].set_xlabel(f"release time (UTC{day})")
    fig.suptitle(title or f"Privacy budget of {rel}: {len(df)} releases", fontsize=13)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return df


def plot_forecast(conn, model, path="forecast.png", schedule=None, title=None):
    """Saves a PNG of the spend of each budget a named model is charged to
    after each future run of its latest version, until the budget is
    exhausted (the first run that does not fit, in red), against the run's
    time when the model has a pg_cron schedule (or ``schedule`` is given:
    a hypothetical one), else the run number. Returns the forecast
    DataFrame (budget.forecast)."""
    conn = as_connection(conn)
    df = forecast(conn, model, schedule=schedule)
    info = df.attrs["forecast"]
    timed = info["schedule"] is not None and df["run_at"].notna().any()
    fig, ax = plt.subplots(figsize=(10, 5))
    if len(df) == 0:
        ax.text(0.5, 0.5, "no budget limits this model's retraining", ha="center",
                va="center", transform=ax.transAxes, fontsize=12)
    for i, (rel, g) in enumerate(df.groupby("relation", sort=True)):
        color = plt.cm.tab10(i % 10)
        if timed:
            x = [pd.Timestamp.now(tz="UTC") if k == 0 else r for k, r in zip(g["k"], g["run_at"])]
            x = pd.to_datetime(pd.Series(x), utc=True)
        else:
            x = g["k"]
        fits = g["fits"].to_numpy(dtype=bool)
        y = g["epsilon_spent"].to_numpy(dtype=float)
        ax.plot(np.asarray(x)[fits], y[fits], "o-", color=color, markersize=4,
                label=f"{rel}: spent after k more runs")
        ax.annotate("now", (np.asarray(x)[0], y[0]), textcoords="offset points", xytext=(6, -12),
                    fontsize=9)
        if (~fits).any():
            ax.plot(np.asarray(x)[~fits], y[~fits], "o", color="red", markersize=8,
                    label="first run that does not fit (refused"
                          + (", schedule paused)" if timed else ")"))
        ax.axhline(float(g["epsilon_budget"].iloc[0]), color=color, linestyle="--",
                   label=f"{rel}: budget ε = {float(g['epsilon_budget'].iloc[0]):g}")
    runs = info["runs"]
    what = f"{runs} more runs fit" if runs is not None and not pd.isna(runs) else "no budget limits it"
    when = ""
    if timed:
        last = df[df["fits"] & (df["k"] > 0)]["run_at"]
        if len(last):
            when = f"; last run that fits: {pd.Timestamp(last.max()).strftime('%Y-%m-%d %H:%M')} UTC"
        sched = info["schedule"] + (" (hypothetical)" if info["hypothetical_schedule"] else "")
        ax.set_xlabel(f"time of run (UTC), schedule '{sched}'")
        _time_axis(ax, None)
    else:
        ax.set_xlabel("future retraining runs k (count)")
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_ylabel(f"{EPS_UNIT} spent after the runs")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
    ax.set_title(title or (f"Retraining forecast of model {model} (version {info['version']}, "
                           f"ε = {info['epsilon_per_run']:g} per run)\n{what}{when}"), fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return df


def plot_privacy_utility(estimator, path="utility.png", n=None, d=None, epsilons=None,
                         evaluations=None, algorithm="fitted", title=None):
    """Saves a PNG of the privacy–utility trade-off of an estimator's
    options at n rows: for each ε, dp_explain's planned noise — the RMS
    norm √E‖z‖² of the noise vector the release adds (in the units of what
    its algorithm perturbs: the model for output perturbation, the
    objective or gradients otherwise; the algorithm is marked) — at no
    cost. ``evaluations`` (budget.evaluations: private metrics already
    paid for) adds accuracy or RMSE against each version's training ε on a
    second axis. ``algorithm``: "fitted" (default) keeps the algorithm the
    fitted model was released by, so that every point perturbs the same
    quantity; None lets dperm choose per ε (the plan's algorithm_rule);
    a name fixes it. Returns the plans as a DataFrame."""
    if n is None:
        if getattr(estimator, "privacy_", None) is None:
            raise DPermError("plot_privacy_utility needs n (or a fitted estimator)")
        n = int(estimator.privacy_["n"])
    if epsilons is None:
        epsilons = np.geomspace(0.05, 10, 16)
    fixed = {}
    if algorithm == "fitted":
        plan_ = getattr(estimator, "plan_", None)
        if getattr(estimator, "algorithm", None) is None and plan_ is not None:
            fixed["algorithm"] = plan_["algorithm"]
            # and its l2 (a given algorithm otherwise gets l2 = 0): only ε varies
            mu = plan_.get("l2", plan_.get("mu"))
            if getattr(estimator, "l2", None) is None and mu is not None:
                fixed["l2"] = mu
    elif algorithm is not None:
        fixed["algorithm"] = algorithm
    rows = []
    for e in epsilons:
        try:
            plan = estimator.explain(n, d, epsilon=float(e), **fixed)
        except DPermError:
            continue  # an algorithm outside its analysis at this epsilon: no point
        if isinstance(plan, str):
            plan = json.loads(plan)
        noise_sq = plan.get("expected_noise_norm_sq")
        rows.append({"epsilon": float(e), "algorithm": plan.get("algorithm"),
                     "noise": plan.get("noise"), "noise_scale": plan.get("noise_scale"),
                     "expected_noise_norm": np.sqrt(noise_sq) if noise_sq is not None else None,
                     "l2": plan.get("l2"), "iterations": plan.get("iterations")})
    df = pd.DataFrame(rows)
    fig, ax = plt.subplots(figsize=(10, 5.5))
    markers = "osD^v<>p*h"
    for i, (alg, g) in enumerate(df.groupby("algorithm", sort=False)):
        ax.plot(g["epsilon"], g["expected_noise_norm"], marker=markers[i % len(markers)],
                linestyle="-", label=f"planned noise √E‖z‖², algorithm {alg}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("ε of the release (log scale; dimensionless)")
    ax.set_ylabel("planned noise √E‖z‖² (log scale; units of the perturbed quantity)")
    ax.grid(True, which="both", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if evaluations is not None and len(evaluations):
        metric = next((m for m in ("accuracy", "rmse", "log_loss") if m in evaluations.columns), None)
        if metric is not None:
            ax2 = ax.twinx()
            ev = evaluations.dropna(subset=[metric])
            ax2.plot(ev["train_epsilon"], ev[metric], "s", color="tab:red", markersize=9,
                     label=f"private {metric} (dperm.evaluate, paid)")
            unit = "fraction correct" if metric == "accuracy" else "label units"
            ax2.set_ylabel(f"{metric} ({unit})", color="tab:red")
            ax2.tick_params(axis="y", colors="tab:red")
            if metric == "accuracy":
                ax2.set_ylim(0, 1)
            h2, l2 = ax2.get_legend_handles_labels()
            handles, labels = handles + h2, labels + l2
    ax.legend(handles, labels, loc="upper right", fontsize=8, framealpha=0.9)
    loss = estimator._loss
    held = ", ".join(f"{k} = {v:.3g}" if isinstance(v, float) else f"{k} = {v}"
                     for k, v in fixed.items())
    ax.set_title(title or (f"Privacy–utility trade-off, {loss} at n = {n}"
                           f"{'' if d is None else f', d = {d}'}{', ' + held if held else ''}\n"
                           "(dp_explain: no data read, no budget spent)"), fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return df
