"""Training and scoring of the held-out benchmark (bench/scripts/heldout/heldout.py):
dperm through the C++ driver (bench/scripts/heldout/heldout_main.cpp), diffprivlib,
the non-private ceilings and the baselines, one dataset at a time.
"""

import subprocess
import sys
import time
import warnings

import numpy as np
from sklearn.linear_model import LinearRegression as SkLinear
from sklearn.linear_model import LogisticRegression as SkLogistic
from sklearn.linear_model import Ridge

from heldout_common import (BENCH, DATASETS, NO_L2, logistic_metrics, regression_metrics,
                            splits_for)

sys.path.insert(0, str(BENCH))
import load_datasets as ld  # noqa: E402  (the benches' one preprocessing)


def run_dperm(driver, X, ylab, loss, splits, jobs, tmp):
    """Runs the C++ driver over jobs; returns {job id: (algorithm, seconds, w)}."""
    n, d = X.shape
    data = tmp / "data.bin"
    with open(data, "wb") as f:
        f.write(np.array([n], dtype="<i8").tobytes())
        f.write(np.array([d, 0 if loss == "logistic" else 1], dtype="<i4").tobytes())
        f.write(np.ascontiguousarray(np.column_stack([X, ylab]), dtype="<f8").tobytes())
    split_file = tmp / "splits.bin"
    with open(split_file, "wb") as f:
        f.write(np.array([len(splits)], dtype="<i4").tobytes())
        f.write(np.array([len(splits[0][0])], dtype="<i8").tobytes())
        for tr, _ in splits:
            f.write(np.asarray(tr, dtype="<i8").tobytes())
    text = "".join(f"{j['id']} {j['split']} {j['eps']!r} {j['delta']!r} "
                   f"{'none' if j['l2'] is None else repr(j['l2'])} "
                   f"{j['huber_delta']!r} {j['method']} {j['seed']}\n" for j in jobs)
    proc = subprocess.run([str(driver), str(data), str(split_file)], input=text,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"heldout: driver failed ({proc.returncode}): {proc.stderr}")
    out = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if parts[1] == "ERROR":
            out[parts[0]] = ("ERROR " + " ".join(parts[2:]), 0.0, None)
        else:
            out[parts[0]] = (parts[1], float(parts[2]), np.array([float(v) for v in parts[3:]]))
    return out


def bench_dataset(name, args, driver, tmp, rows, algos, timing):
    """Trains and scores every method on one dataset; appends to rows."""
    title, loss = DATASETS[name]
    t0 = time.time()
    feats, labels, raw = ld.prepare(name, args.data_dir)
    X = np.asarray(feats, dtype=float)
    n, d = X.shape
    if loss == "logistic":
        y = np.asarray(labels, dtype=int)          # 0/1 for sklearn/diffprivlib
        ylab = np.where(y == 1, 1.0, -1.0)         # dperm's logistic labels
        scale = 1.0
    else:
        y = np.asarray(labels, dtype=float)        # target min-max scaled to [0, 1]
        ylab = y
        scale = float(max(raw) - min(raw))
    seeds = list(range(1, args.seeds + 1))
    splits = splits_for(n, seeds)
    info = {"n": n, "d": d, "train": len(splits[0][0]), "test": len(splits[0][1]),
            "load_s": time.time() - t0}
    if loss == "logistic":
        info["pos"] = float(y.mean())
    else:
        info["range"] = (min(raw), max(raw))

    def add(method, l2, eps, seed, metrics, **extra):
        rows.append({"dataset": name, "method": method, "l2": l2, "eps": eps,
                     "seed": seed, **metrics, **extra})

    def score(z, te):
        if loss == "logistic":
            return logistic_metrics(z, y[te])
        return regression_metrics(z, y[te], scale)

    # dperm: one driver process per dataset
    t1 = time.time()
    jobs = []
    # huber_delta 0: not given, dperm's default (0.1 target_bound = 0.1: the
    # targets lie in [0, 1], the default target_bound); 1: the 0.5.0 default
    hdeltas = [0.0] + ([1.0] if loss == "huber" and not args.dperm_only else [])
    for k in range(len(seeds)):
        for eps in args.eps:
            dperm_l2 = [None] if args.default_only else [None, 0.0] + ([] if args.algos_only else args.l2)
            for l2 in dperm_l2:  # None: not given
                for hd in hdeltas:
                    jobs.append({"id": f"d{len(jobs)}", "split": k, "eps": eps, "delta": args.delta,
                                 "l2": l2, "huber_delta": hd, "method": "default",
                                 "seed": 1000003 * seeds[k] + len(jobs), "kind": "dperm"})
            for l2 in [0.0] + args.l2:  # --algos: each named algorithm at each l2
                for algo in args.algos:
                    jobs.append({"id": f"d{len(jobs)}", "split": k, "eps": eps, "delta": args.delta,
                                 "l2": l2, "huber_delta": 0.0, "method": f"algo={algo}",
                                 "seed": 1000003 * seeds[k] + len(jobs), "kind": "algo"})
        if args.dperm_only or args.default_only:  # no auto (and --dperm-only: no ceilings)
            if args.dperm_only:
                continue
            jobs.extend({"id": f"d{len(jobs) + i}", "split": k, "eps": 1.0, "delta": args.delta,
                         "l2": l2, "huber_delta": 0.0, "method": "newton", "seed": 0,
                         "kind": "newton"} for i, l2 in enumerate(args.l2))
            continue
        for eps in args.eps:  # l2 => 'auto' (select_l2.hpp): the job's l2 is ignored
            jobs.append({"id": f"d{len(jobs)}", "split": k, "eps": eps, "delta": args.delta,
                         "l2": 0.0, "huber_delta": 0.0, "method": "auto",
                         "seed": 1000003 * seeds[k] + len(jobs), "kind": "auto"})
        for l2 in args.l2:
            for hd in hdeltas:
                jobs.append({"id": f"d{len(jobs)}", "split": k, "eps": 1.0, "delta": args.delta,
                             "l2": l2, "huber_delta": hd, "method": "newton", "seed": 0,
                             "kind": "newton"})
    res = run_dperm(driver, X, ylab, loss, splits, jobs, tmp)
    for j in jobs:
        algo, secs, w = res[j["id"]]
        if w is None and j["kind"] == "algo":  # e.g. bolton refuses l2 = 0
            continue
        if w is None:
            sys.exit(f"heldout: dperm failed on {name} {j}: {algo}")
        tr, te = splits[j["split"]]
        z = X[te] @ w[:d] + (w[d] if len(w) > d else 0.0)
        algo, _, used = algo.partition("@")  # "default" jobs: ALGORITHM@L2 (the l2 used)
        suffix = "" if j["huber_delta"] == 0.0 else f", huber_delta = {j['huber_delta']:g}"
        if j["kind"] == "dperm" and j["l2"] is None:  # l2 not given: DefaultL2's l2
            add(NO_L2 + suffix, np.nan, j["eps"], seeds[j["split"]], score(z, te),
                seconds=secs, algorithm=algo, huber_delta=j["huber_delta"], l2_used=float(used))
            if loss == "huber" and not suffix:
                add(NO_L2 + ", clipped to [0, 1]", np.nan, j["eps"], seeds[j["split"]],
                    score(np.clip(z, 0.0, 1.0), te))
            algos.setdefault((name, "no l2", j["huber_delta"]), set()).add(algo)
            continue
        if j["kind"] == "auto":  # "auto:L2:ALGORITHM"
            _, chosen, algorithm = algo.split(":")
            add("dperm auto", np.nan, j["eps"], seeds[j["split"]], score(z, te),
                seconds=secs, algorithm=algorithm, chosen_l2=float(chosen))
        elif j["kind"] == "algo":
            add("dperm " + j["method"][5:], j["l2"], j["eps"], seeds[j["split"]], score(z, te),
                seconds=secs, algorithm=algo, huber_delta=j["huber_delta"], l2_used=float(used))
        elif j["kind"] == "dperm":
            add("dperm default" + suffix, j["l2"], j["eps"], seeds[j["split"]], score(z, te),
                seconds=secs, algorithm=algo, huber_delta=j["huber_delta"])
            if loss == "huber" and not suffix:  # free post-processing: the public range
                add("dperm default, clipped to [0, 1]", j["l2"], j["eps"], seeds[j["split"]],
                    score(np.clip(z, 0.0, 1.0), te))
            algos.setdefault((name, j["l2"], j["huber_delta"]), set()).add(algo)
        else:
            add("non-private dperm objective (Newton)" + suffix, j["l2"], np.inf,
                seeds[j["split"]], score(z, te), seconds=secs)
    info["dperm_s"] = time.time() - t1

    # diffprivlib, the sklearn ceilings and the baselines
    t2 = time.time()
    from diffprivlib.models import LinearRegression as DplLinear
    from diffprivlib.models import LogisticRegression as DplLogistic
    for k, s in enumerate(seeds):
        tr, te = splits[k]
        m = len(tr)
        if args.dperm_only:  # the baselines only
            if loss == "logistic":
                p = y[tr].mean()
                maj = 1 if p > 0.5 else 0
                add("majority class", np.nan, np.inf, s,
                    {"acc": float(np.mean(y[te] == maj)), "bacc": 0.5, "auc": 0.5, "pos": float(maj), "test_pos": float(y[te].mean())})
            else:
                add("training mean", np.nan, np.inf, s, score(np.full(len(te), y[tr].mean()), te))
            continue
        Xtr, Xte, ytr = X[tr], X[te], y[tr]
        if loss == "logistic":
            p = ytr.mean()
            maj = 1 if p > 0.5 else 0
            add("majority class", np.nan, np.inf, s,
                {"acc": float(np.mean(y[te] == maj)), "bacc": 0.5, "auc": 0.5, "pos": float(maj), "test_pos": float(y[te].mean()),
                 "logloss": float(-np.mean(np.where(y[te] == 1, np.log(p), np.log(1 - p))))})
            for l2 in args.l2 + [None]:
                C = 1.0 if l2 is None else 1.0 / (m * m * l2)
                label = "defaults (C = 1)" if l2 is None else "at the same μ"
                # sklearn's own objective is C * sum l_i + ||w||^2 / 2: mu <=> C = 1/(n mu)
                # (diffprivlib 0.6.5 on sklearn 1.2.1 scales it differently, above)
                C_sk = 1.0 if l2 is None else 1.0 / (m * l2)
                clf = SkLogistic(C=C_sk, max_iter=5000).fit(Xtr, ytr)
                add(f"non-private sklearn, {label}", np.nan if l2 is None else l2, np.inf, s,
                    score(Xte @ clf.coef_[0] + clf.intercept_[0], te))
                for eps in args.eps:
                    rs = np.random.RandomState(7919 * s + int(1000 * eps) + (0 if l2 is None else int(1 / l2)))
                    ts = time.time()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        dp = DplLogistic(epsilon=eps, data_norm=1.0, C=C, fit_intercept=True,
                                         random_state=rs).fit(Xtr, ytr)
                    add(f"diffprivlib, {label}", np.nan if l2 is None else l2, eps, s,
                        score(Xte @ dp.coef_[0] + dp.intercept_[0], te), seconds=time.time() - ts)
        else:
            add("training mean", np.nan, np.inf, s,
                score(np.full(len(te), ytr.mean()), te))
            ols = SkLinear().fit(Xtr, ytr)
            add("non-private sklearn OLS", np.nan, np.inf, s, score(ols.predict(Xte), te))
            for l2 in args.l2:  # mean (1/2) r^2 + (mu/2)||w||^2 <=> alpha = n mu
                rdg = Ridge(alpha=m * l2).fit(Xtr, ytr)
                add("non-private sklearn ridge", l2, np.inf, s, score(rdg.predict(Xte), te))
            for eps in args.eps:
                rs = np.random.RandomState(7919 * s + int(1000 * eps))
                ts = time.time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    dp = DplLinear(epsilon=eps, bounds_X=(np.zeros(d), np.ones(d)),
                                   bounds_y=(0.0, 1.0), fit_intercept=True,
                                   random_state=rs).fit(Xtr, ytr)
                add("diffprivlib LinearRegression", np.nan, eps, s, score(dp.predict(Xte), te),
                    seconds=time.time() - ts)
                add("diffprivlib LinearRegression, clipped to [0, 1]", np.nan, eps, s,
                    score(np.clip(dp.predict(Xte), 0.0, 1.0), te))
    info["peer_s"] = time.time() - t2
    timing[name] = info
    print(f"heldout: {name} done (load {info['load_s']:.0f} s, dperm {info['dperm_s']:.0f} s, "
          f"peers {info['peer_s']:.0f} s)", file=sys.stderr, flush=True)
