# Before/after table of the intercept offset (bench/reports/heldout.md, "Intercept offset"): dperm default at l2 = 0 and at its best l2, the majority/mean baseline and diffprivlib best, from two bench/heldout.py CSVs.
import csv, sys, math, collections
def load(p):
    d = collections.defaultdict(list)
    for r in csv.DictReader(open(p)):
        if r.get('huber_delta') not in (None, '', '0', '0.0'): continue
        if r['method'] not in ('dperm default', 'diffprivlib, at the same μ', 'majority class', 'training mean'):
            continue
        key = (r['dataset'], r['method'], float(r['l2']) if r['l2'] else 0.0, float(r['eps']) if r['eps'] else 0.0)
        v = r['acc'] if r['acc'] else r['r2']
        if v: d[key].append(float(v))
    return d
def ms(v):
    m = sum(v)/len(v); s = math.sqrt(sum((x-m)**2 for x in v)/(len(v)-1)/len(v)) if len(v) > 1 else 0
    return m, s
# Usage: compare.py BEFORE.csv AFTER.csv (bench/heldout.py --csv outputs; bench/reports/heldout.md, "Intercept offset")
b, a = load(sys.argv[1]), load(sys.argv[2])
methods = set(k[1] for k in b)
print(methods, file=sys.stderr)
print("| dataset | ε | majority | before: l2 = 0 | after: l2 = 0 | before: best l2 | after: best l2 | diffprivlib best |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for ds in ('bank', 'adult', 'creditcard', 'wine'):
    for eps in (0.1, 1.0):
        def best(d, method):
            c = [(ms(v)[0], ms(v)[1], k[2]) for k, v in d.items() if k[0] == ds and k[1] == method and k[3] == eps and k[2] > 0]
            return max(c) if c else None
        def at0(d):
            v = d.get((ds, 'dperm default', 0.0, eps)); return ms(v) if v else None
        maj = [v for k, v in b.items() if k[0] == ds and k[1] in ('majority class', 'training mean')]
        mj = ms(maj[0]) if maj else (float('nan'), 0)
        bb, ab, db = best(b, 'dperm default'), best(a, 'dperm default'), best(b, 'diffprivlib, at the same μ')
        b0, a0 = at0(b), at0(a)
        f = lambda x: "—" if x is None else f"{x[0]:.4f} ± {x[1]:.4f}" + (f" [{x[2]:g}]" if len(x) > 2 else "")
        print(f"| {ds} | {eps:g} | {f(mj)} | {f(b0)} | {f(a0)} | {f(bb)} | {f(ab)} | {f(db)} |")
