#!/usr/bin/env python3
"""Would another way of borrowing strength across the cases call more? (issue 55)

    shrink.py K DIR [DIR ...]

Each DIR holds run1.json .. runN.json (`ipcperf export`), default suites measured
back to back on one machine. compare's history rule is emulated here (not run):
for each run B = K+1 .. N, each case's run-to-run variance is estimated from the
runs before B (the newest 30), B's log median is held against the mean of the K
runs before it, Student's t (or the rule's own reference) gives p, Holm over the
cases at 0.05, and a call needs the 5% threshold too. Every case in turn is made
10% and 25% worse in B. The rules differ only in how each case's variance is
estimated:

  known        each case's sd over all N runs, taken as exact (normal): what no
               rule can know, the bound the others are held to
  one prior    Smyth 2004's moments over all the cases (compare's rule before
               the prior followed the cases' kind)
  kind         the prior's ln s0^2 a line in [two CPUs] and ln within-run
               variance (compare's rule today, without its keep-your-own rule
               for a case far outside the prior)
  kind+block   that line with ln block size added (issue 55 item 1: "or over
               cases of one mechanism family / block size, if you show that fits
               better")
  mixture      a nonparametric prior, not one scaled inverse chi^2: a grid of
               variances whose weights are fitted by maximum likelihood over the
               cases (EM), each case judged by the mixture of normals its own s^2
               weighs (Lu & Stephens 2016, "Variance adaptive shrinkage (vash)")
  mixture+kind the same grid about each case's line

Cases are binned by their sd over all N runs, as bench/verdicts/power.py does.
"""
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from power import digamma, figure, ident  # noqa: E402
from tails import t_sf  # noqa: E402

HISTORY = 30
RULES = ("known", "one prior", "kind", "kind+block", "mixture", "mixture+kind")


def trigamma(x):
    acc = 0.0
    while x < 6:
        acc += 1 / (x * x)
        x += 1
    x2 = 1 / (x * x)
    return acc + 1 / x + x2 / 2 + x2 / x * (1 / 6 - x2 * (1 / 30 - x2 / 42))


def lstsq(rows, y):
    """Least squares by the normal equations (a few columns)."""
    p = len(rows[0])
    a = [[sum(r[i] * r[j] for r in rows) for j in range(p)] + [sum(r[i] * v for r, v in zip(rows, y))]
         for i in range(p)]
    for c in range(p):
        piv = max(range(c, p), key=lambda i: abs(a[i][c]))
        a[c], a[piv] = a[piv], a[c]
        if abs(a[c][c]) < 1e-12:
            return None
        for i in range(p):
            if i != c:
                f = a[i][c] / a[c][c]
                a[i] = [x - f * z for x, z in zip(a[i], a[c])]
    return [a[i][p] / a[i][i] for i in range(p)]


def moments(s2, d, rows):
    """Smyth's prior by moments of ln s^2 about a line in `rows`: each case's s0^2, and d0."""
    e = [math.log(v) - digamma(d / 2) + math.log(d / 2) for v in s2]
    beta = lstsq(rows, e) or lstsq([[1.0]] * len(e), e)
    rows = rows if len(beta) == len(rows[0]) else [[1.0]] * len(e)
    fit = [sum(b * x for b, x in zip(beta, r)) for r in rows]
    resid = [v - f for v, f in zip(e, fit)]
    ev = sum(r * r for r in resid) / (len(e) - len(beta)) - trigamma(d / 2)
    if ev <= 0:
        return [math.exp(f) for f in fit], math.inf
    lo, hi = 1e-3, 1e7
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if trigamma(mid / 2) > ev else (lo, mid)
    d0 = mid
    return [math.exp(f + digamma(d0 / 2) - math.log(d0 / 2)) for f in fit], d0


def chi2_logpdf(x, d):
    return (d / 2 - 1) * math.log(x) - x / 2 - (d / 2) * math.log(2) - math.lgamma(d / 2)


def mixture(s2, d, base, points=40):
    """Each case's weights over a grid of variances base_i * g (NPMLE by EM)."""
    ratio = [v / b for v, b in zip(s2, base)]
    lo, hi = math.log(min(ratio) / 4), math.log(max(ratio) * 4)
    grid = [math.exp(lo + (hi - lo) * i / (points - 1)) for i in range(points)]
    like = [[math.exp(chi2_logpdf(d * r / g, d)) * d / g for g in grid] for r in ratio]
    w = [1 / points] * points
    for _ in range(300):
        post = []
        for row in like:
            p = [x * y for x, y in zip(row, w)]
            s = sum(p) or 1.0
            post.append([x / s for x in p])
        w = [sum(col) / len(post) for col in zip(*post)]
    return [[(b * g, pw) for g, pw in zip(grid, row) if pw > 1e-6] for b, row in zip(base, post)]


def two_sided(z):
    return math.erfc(abs(z) / math.sqrt(2))


def holm(p):
    called, m = set(), len(p)
    for i, (pv, key) in enumerate(sorted((v, k) for k, v in enumerate(p))):
        if pv > 0.05 / (m - i):
            break
        called.add(key)
    return called


def load(dir_):
    n = 0
    while os.path.exists(os.path.join(dir_, f"run{n + 1}.json")):
        n += 1
    runs = [json.load(open(os.path.join(dir_, f"run{i}.json"))) for i in range(1, n + 1)]
    cases = {}
    for j, r in enumerate(runs):
        for c in r["cases"]:
            f, lower_better = figure(c)
            logs = [math.log(x) for x in f if x > 0]
            if c["status"] != "ok" or len(logs) < 3:
                continue
            m = statistics.median(logs)
            mad = 1.4826 * statistics.median(abs(x - m) for x in logs)
            p = c["placement"]
            entry = cases.setdefault(ident(c), {"x": [None] * n, "w": [None] * n})
            entry["x"][j] = m if lower_better else -m  # + is slower
            entry["w"][j] = mad * mad * math.pi / 2 / len(logs)
            entry["across"] = p.get("writer_cpu") is None or p.get("writer_cpu") != p.get("reader_cpu")
            entry["block"] = c.get("block_size_bytes") or 64
    keep = {k: v for k, v in cases.items() if None not in v["x"] and min(v["w"]) > 0}
    return n, list(keep.values())


def judge(dir_, k):
    n, cases = load(dir_)
    m = len(cases)
    sd = [statistics.stdev(c["x"]) for c in cases]
    print(f"== {dir_}: {n} default suites, {m} cases; B = runs {k + 1}..{n} against the {k} before it")
    tally = {r: {"aa": 0, "p10": [0, 0], "p25": [0, 0], "hist": {}, "other": 0, "trials": 0, "runs": set()}
             for r in RULES}
    for j in range(k, n):
        hist = range(max(0, j - HISTORY), j)
        d = len(hist) - 1
        s2 = [statistics.variance([c["x"][i] for i in hist]) for c in cases]
        within = [statistics.mean(c["w"][i] for i in hist) for c in cases]
        kind = [[1.0, float(c["across"]), math.log(w)] for c, w in zip(cases, within)]
        block = [r + [math.log(c["block"])] for r, c in zip(kind, cases)]
        base_a = [statistics.mean(c["x"][j - k:j]) for c in cases]
        scale = math.sqrt(1 + 1 / k)
        refs = {"known": [("normal", v * v) for v in sd]}
        for name, rows in (("one prior", [[1.0]] * m), ("kind", kind), ("kind+block", block)):
            s0, d0 = moments(s2, d, rows)
            df = min(d0 + d, m * d)
            refs[name] = [("t", s0[i] if d0 == math.inf else (d0 * s0[i] + d * s2[i]) / (d0 + d), df)
                          for i in range(m)]
        for name, rows in (("mixture", [[1.0]] * m), ("mixture+kind", kind)):
            base = moments(s2, d, rows)[0] if name == "mixture+kind" else [1.0] * m
            refs[name] = [("mix", w) for w in mixture(s2, d, base)]

        def p_value(ref, diff):
            if ref[0] == "normal":
                return two_sided(diff / (math.sqrt(ref[1]) * scale))
            if ref[0] == "t":
                return 2 * t_sf(abs(diff) / (math.sqrt(ref[1]) * scale), ref[2])
            return sum(w * two_sided(diff / (math.sqrt(v) * scale)) for v, w in ref[1])

        diffs = [c["x"][j] - a for c, a in zip(cases, base_a)]
        for rule in RULES:
            t = tally[rule]
            p = [p_value(ref, x) for ref, x in zip(refs[rule], diffs)]
            called = {i for i in holm(p) if abs(diffs[i]) > math.log(1.05)}
            t["aa"] += bool(called)
            for r in (1.10, 1.25):
                for i in range(m):
                    dd = diffs[i] + math.log(r)
                    pi = p_value(refs[rule][i], dd)
                    p2 = p[:i] + [pi] + p[i + 1:]
                    d2 = diffs[:i] + [dd] + diffs[i + 1:]
                    called = {c for c in holm(p2) if abs(d2[c]) > math.log(1.05)}
                    hit = i in called and dd > 0
                    t["trials"] += 1
                    if called - {i}:
                        t["other"] += 1
                        t["runs"].add(j + 1)
                    if r == 1.10 and sd[i] < 0.02:
                        t["p10"][0] += hit
                        t["p10"][1] += 1
                    if r == 1.25 and 0.03 <= sd[i] < 0.05:
                        t["p25"][0] += hit
                        t["p25"][1] += 1
                        h = t["hist"].setdefault("5-9" if d + 1 < 10 else "10-19" if d + 1 < 20 else "20+",
                                                 [0, 0])
                        h[0] += hit
                        h[1] += 1
    print(f"cases under 2%: {sum(1 for v in sd if v < 0.02)}; of 3%-5%: "
          f"{sum(1 for v in sd if 0.03 <= v < 0.05)}; sd quartiles "
          + " ".join(f"{100 * q:.2f}%" for q in statistics.quantiles(sd, n=4)))
    print("| rule | A/A: runs B called | 10%, sd < 2% | 25%, sd 3-5% | same, by runs of history "
          "(5-9; 10-19; 20+) | another case called: trials (runs B) |")
    print("|---|---|---|---|---|---|")
    for rule in RULES:
        t = tally[rule]
        hist = "; ".join(f"{t['hist'][h][0]}/{t['hist'][h][1]}" if h in t["hist"] else "-"
                         for h in ("5-9", "10-19", "20+"))
        p10 = f"{t['p10'][0]}/{t['p10'][1]}" if t["p10"][1] else "no case"
        p25 = f"{t['p25'][0]}/{t['p25'][1]}" if t["p25"][1] else "no case"
        print(f"| {rule} | {t['aa']} of {n - k} | {p10} | {p25} | {hist} | "
              f"{t['other']} of {t['trials']} ({100 * t['other'] / t['trials']:.1f}%; "
              f"{len(t['runs'])} run{'' if len(t['runs']) == 1 else 's'} B) |")
    print()


def main():
    k = int(sys.argv[1])
    for dir_ in sys.argv[2:]:
        judge(dir_, k)


if __name__ == "__main__":
    main()
