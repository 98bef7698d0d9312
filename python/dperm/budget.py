"""The budget as data: the ledger, the budgets and the retraining forecast as
pandas DataFrames. Reads only (no release, no charge).

What a role sees is what the catalog's row-level security shows it
(docs/user-guide.md, *Trust model*): the budgets of relations it may see,
its own ledger rows (all of them for members of pg_read_all_stats).
"""
import json

import numpy as np
import pandas as pd

from .connection import as_connection, frame, scalar
from .errors import DPermError

__all__ = ["ledger", "budgets", "forecast", "models", "evaluations", "set_budget",
           "budget_remaining"]

# Each ledger row with the spend of the relation after it, composed as
# dperm.budget_spent composes the rows (src/core/accounting/budget.cpp,
# ComposeTotals): basic sums; under rdp the curves summed order by order
# (Mironov 2017, Prop. 1) and converted at the delta the rows without a curve
# left, plus those rows' sums, and never more than the basic sum when its
# delta fits the budget.
_LEDGER_SQL = """
WITH b AS (
  SELECT accounting, epsilon AS epsilon_budget, delta AS delta_budget
    FROM dperm.budgets WHERE relation = %(rel)s::regclass),
l AS (
  SELECT l.*, dperm.is_ledger_curve(l.rdp) AS curved
    FROM dperm.ledger l WHERE l.relations @> ARRAY[%(rel)s::regclass]),
c AS (
  SELECT l.*,
         sum(l.epsilon) OVER w AS basic_epsilon,
         sum(l.delta) OVER w AS basic_delta,
         sum(CASE WHEN l.curved THEN 0 ELSE l.epsilon END) OVER w AS plain_epsilon,
         sum(CASE WHEN l.curved THEN 0 ELSE l.delta END) OVER w AS plain_delta,
         dperm.curve_sum(CASE WHEN l.curved THEN l.rdp END) OVER w AS curve
    FROM l WINDOW w AS (ORDER BY l.id))
SELECT c.id, c.released_at, c.role_name AS role, c.relation_names, c.algorithm, c.mechanism,
       c.loss, c.epsilon, c.delta, c.n, c.d, c.seeded, c.query, m.name AS model,
       m.version AS model_version,
       c.basic_epsilon AS epsilon_sum,
       CASE WHEN b.accounting = 'rdp' AND c.curve IS NOT NULL
                 AND b.delta_budget - c.plain_delta > 0
            THEN CASE WHEN c.basic_delta <= b.delta_budget
                      THEN least(c.basic_epsilon, c.plain_epsilon +
                                 dperm.rdp_to_epsilon(dperm.rdp_orders(), c.curve,
                                                      b.delta_budget - c.plain_delta))
                      ELSE c.plain_epsilon +
                           dperm.rdp_to_epsilon(dperm.rdp_orders(), c.curve,
                                                b.delta_budget - c.plain_delta) END
            ELSE c.basic_epsilon END AS epsilon_spent,
       b.accounting, b.epsilon_budget, b.delta_budget
  FROM c LEFT JOIN b ON true
  LEFT JOIN dperm.models m ON m.ledger_id = c.id
 ORDER BY c.id
"""


def ledger(conn, relation):
    """The ledger rows charged to ``relation`` that the role may see, oldest
    first: id, released_at, role, algorithm, mechanism, loss, epsilon, delta,
    n, d, seeded, query, the named model and version the row paid for (NULL
    for one-off releases and evaluations), and the relation's spend after
    the row: ``epsilon_sum`` (basic sums) and ``epsilon_spent`` (under the
    budget's accounting, as budget_status composes it), with the budget."""
    conn = as_connection(conn)
    return frame(conn, _LEDGER_SQL, {"rel": relation})


def budget_remaining(conn, relation):
    """What is left of a relation's budget: a dict of budget_status's row
    (epsilon_remaining, delta_remaining, epsilon_spent, ...); None when the
    relation has no budget the role may see."""
    conn = as_connection(conn)
    df = frame(conn, "SELECT relation::text AS relation, accounting, epsilon_budget, "
                     "delta_budget, epsilon_spent, delta_spent, epsilon_remaining, "
                     "delta_remaining, releases FROM dperm.budget_status "
                     "WHERE relation = %s::regclass", (relation,))
    return df.iloc[0].to_dict() if len(df) else None


def budgets(conn):
    """dperm.budget_status: each visible relation's budget, spent and remaining."""
    conn = as_connection(conn)
    return frame(conn, "SELECT relation::text AS relation, accounting, epsilon_budget, "
                       "delta_budget, epsilon_spent, delta_spent, epsilon_remaining, "
                       "delta_remaining, releases, privacy_unit, max_rows_per_unit "
                       "FROM dperm.budget_status ORDER BY relation::text")


def models(conn, name=None):
    """dperm.models (the versions the role may see), without the model JSON."""
    conn = as_connection(conn)
    where = "" if name is None else " WHERE name = %(name)s"
    return frame(conn, "SELECT name, version, status, owner::text AS owner, "
                       "relation::text AS relation, loss, options, ledger_id, epsilon, delta, "
                       "trained_by::text AS trained_by, trained_at, error, sqlstate, evaluation "
                       "FROM dperm.models" + where + " ORDER BY name, version", {"name": name})


def evaluations(conn, name):
    """The private evaluations stored with a named model's versions
    (dperm.evaluate; already paid for): one row per evaluation with the
    version's training epsilon and the metrics."""
    conn = as_connection(conn)
    df = frame(conn, "SELECT version, epsilon AS train_epsilon, e AS evaluation "
                     "FROM dperm.models, jsonb_array_elements(coalesce(evaluation, '[]')) e "
                     "WHERE name = %s AND status = 'trained' ORDER BY version", (name,))
    rows = []
    for _, r in df.iterrows():
        e = r["evaluation"] if isinstance(r["evaluation"], dict) else json.loads(r["evaluation"])
        flat = {"version": r["version"], "train_epsilon": r["train_epsilon"]}
        for k, v in e.items():
            if isinstance(v, (int, float, str, bool)) or v is None:
                flat[k] = v
        rows.append(flat)
    return pd.DataFrame(rows)


def forecast(conn, model, schedule=None, max_points=200):
    """The retraining forecast of a named model, run by run.

    dperm.retraining_forecast gives how many more runs of the latest
    version's charge fit (``runs``) and the limiting relation; this adds
    one row per future run k = 0 (now) .. runs + 1 (the first that does
    not fit): ``epsilon_spent`` of each budgeted relation the model is
    charged to after k more runs (dperm.budget_spent with k copies of the
    charge, the forecast's own test) and, with a cron schedule (the
    model's pg_cron schedule, else ``schedule``, e.g. '30 2 * * *'), when
    run k happens (dperm.cron_next_run; UTC). At most ``max_points`` values
    of k (evenly spaced) when runs is large. ``attrs`` holds the forecast's
    row."""
    conn = as_connection(conn)
    fc = frame(conn, "SELECT runs, last_run_at, next_run_at, cron_schedule, "
                     "limiting_relation::text AS limiting_relation, epsilon_per_run, "
                     "delta_per_run, version, paused_at, paused_reason "
                     "FROM dperm.retraining_forecast(%s)", (model,))
    row = fc.iloc[0].to_dict()
    sched = row["cron_schedule"] or schedule
    runs = row["runs"]
    top = (int(runs) + 1) if runs is not None and not pd.isna(runs) else 10
    ks = np.unique(np.linspace(0, top, num=min(top + 1, max_points)).round().astype(int))
    ks = np.unique(np.concatenate([ks, [top - 1, top] if top >= 1 else [top]]))
    df = frame(conn, """
        SELECT k, bu.relation::text AS relation, bu.accounting,
               bu.epsilon AS epsilon_budget, bu.delta AS delta_budget,
               s.epsilon AS epsilon_spent, s.delta AS delta_spent,
               CASE WHEN %(sched)s::text IS NOT NULL AND k > 0
                    THEN dperm.cron_next_run(%(sched)s, now(), k) END AS run_at,
               dperm.charges_fit(bu.relation, bu.accounting, bu.epsilon, bu.delta,
                                 c.rdp, c.epsilon, c.delta, k) AS fits
          FROM dperm.model(%(name)s) m,
               dperm.budgets bu,
               dperm.run_charge(m, bu.privacy_unit) c,
               unnest(%(ks)s::bigint[]) k,
               dperm.budget_spent(bu.relation, bu.accounting, bu.delta,
                   (SELECT array_agg(x * k ORDER BY i) FROM unnest(c.rdp) WITH ORDINALITY u(x, i)),
                   c.epsilon * k, c.delta * k) s
         WHERE bu.relation = ANY (coalesce(m.relations, ARRAY[m.relation]))
         ORDER BY bu.relation::text, k""",
        {"name": model, "sched": sched, "ks": [int(k) for k in ks]})
    if len(df) == 0 and runs is not None and not pd.isna(runs):
        raise DPermError(f"model {model!r}: no budget it is charged to is visible")
    row["schedule"] = sched
    row["hypothetical_schedule"] = row["cron_schedule"] is None and schedule is not None
    df.attrs["forecast"] = row
    return df


def set_budget(conn, relation, epsilon, delta=None, accounting=None,
               privacy_unit=None, max_rows_per_unit=None, units=None):
    """dperm.set_budget: sets a relation's total budget (its owner or a
    superuser; delta None keeps the budget's, 1e-5 for a new one), and
    optionally its privacy unit (a column naming the person, with
    max_rows_per_unit, the rows each contributes) and units, the number of
    units declared public (no noisy count; 0 withdraws it). None keeps
    each setting as it is."""
    conn = as_connection(conn)
    scalar(conn, "SELECT dperm.set_budget(%s::regclass, %s, %s, %s, "
                 "privacy_unit => %s, max_rows_per_unit => %s, units => %s)",
           (relation, epsilon, delta, accounting, privacy_unit, max_rows_per_unit, units))
