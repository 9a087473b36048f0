#!/usr/bin/env python3
"""How heavy the tails of run-to-run moves are, and what that costs any rule.

    tails.py DIR K

DIR holds run1.json .. runN.json: default suites measured back to back on one
machine (`ipcperf export`), as bench/verdicts/power.sh judges them. No ipcperf
rule is used here: each case's log median in each run, and
  * tails: each run's leave-one-out standardized move, (x_i - mean of the
    others) / (sd of the others * sqrt(1 + 1/(N-1))), which is Student's t on
    N-2 degrees of freedom if a case's runs are independent and normal; the
    count beyond 3, 3.5, 4 and 5 beside what that t expects;
  * a rule that knew each case's spread: its sd over all N runs (B's own run
    included, which only shrinks its moves), judging each run B = K+1..N against
    the run before it (k = 1) and the mean of the K before (k = K) at threshold
    z: in how many runs B it calls a case (no case changed: every call is
    false), and the power it would have for a case slowed 25% in the 3%-5%
    bin, Phi(ln 1.25 / (sd * sqrt(1 + 1/k)) - z), averaged over those cases;
  * the lag: the mean over cases and runs of e^2 / (sd^2 (1 + 1/k)), e a run's
    move from the mean of the k before it: 1 where runs are independent, under
    1 where neighbouring runs are alike (the machine drifts slowly).
"""
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from power import figure, ident  # noqa: E402

CASES = 48


def t_sf(t, df):
    """Upper tail of Student's t (regularized incomplete beta, continued fraction)."""
    x = df / (df + t * t)
    a, b = df / 2.0, 0.5
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / d
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 / (1.0 + aa * d)
        c = 1.0 + aa / c
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 / (1.0 + aa * d)
        c = 1.0 + aa / c
        h *= d * c
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log(1.0 - x))
    return 0.5 * front * h / a


def phi(x):
    return statistics.NormalDist().cdf(x)


def main():
    dir_, k = sys.argv[1], int(sys.argv[2])
    n = 0
    while os.path.exists(os.path.join(dir_, f"run{n + 1}.json")):
        n += 1
    runs = [json.load(open(os.path.join(dir_, f"run{i}.json"))) for i in range(1, n + 1)]
    logs = {}
    for c0 in runs[0]["cases"]:
        key, v = ident(c0), []
        for r in runs:
            m = [c for c in r["cases"] if ident(c) == key and c["status"] == "ok"]
            if m and figure(m[0])[0]:
                v.append(math.log(statistics.median(figure(m[0])[0])))
        if len(v) == n:
            logs[key] = v
    sd = {key: statistics.stdev(v) for key, v in logs.items()}
    print(f"{n} default suites, {len(logs)} cases that ran in every one")

    moves = []
    for v in logs.values():
        for i in range(n):
            o = v[:i] + v[i + 1:]
            moves.append(abs(v[i] - statistics.mean(o))
                         / (statistics.stdev(o) * math.sqrt(1 + 1 / len(o))))
    total = len(moves)
    print(f"tails: {total} case-runs, each against the case's other {n - 1} runs "
          f"(Student's t on {n - 2} degrees of freedom if independent and normal)")
    for z in (3.0, 3.5, 4.0, 5.0):
        seen = sum(1 for m in moves if m > z)
        want = total * 2 * t_sf(z, n - 2)
        print(f"  beyond {z}: {seen} (t expects {want:.2f})")
    worst = sorted(((m, i) for i, m in enumerate(moves)), reverse=True)[:3]
    keys = list(logs)
    for m, i in worst:
        key = keys[i // n]
        print(f"  {m:.1f}: run {i % n + 1}, {key[0]} {key[1]} {key[3]} B {key[6]}")

    z0 = statistics.NormalDist().inv_cdf(1 - 0.05 / CASES / 2)
    bin_ = [key for key in logs if 0.03 <= sd[key] < 0.05]
    print(f"a rule that knew each case's sd over all {n} runs, B = runs {k + 1}..{n}; "
          f"power: a case slowed 25% in the 3%-5% bin ({len(bin_)} cases), k = {k}")
    for z in (z0, 3.6, 4.0, 4.5):
        said = []
        for kk in (1, k):
            bad = []
            for b in range(k + 1, n + 1):
                for key, v in logs.items():
                    e = v[b - 1] - statistics.mean(v[b - 1 - kk:b - 1])
                    if abs(e) / (sd[key] * math.sqrt(1 + 1 / kk)) > z:
                        bad.append(b)
                        break
            said.append(f"k = {kk}: a call in {len(bad)} of {n - k} runs B "
                        f"({100 * len(bad) / (n - k):.0f}%){' ' + str(bad) if bad else ''}")
        power = (statistics.mean(phi(math.log(1.25) / (sd[key] * math.sqrt(1 + 1 / k)) - z)
                                 for key in bin_) if bin_ else float("nan"))
        print(f"  z = {z:.2f}: {'; '.join(said)}; power {100 * power:.0f}%")

    # The least bar that keeps this rule's false calls within the 5%
    # of runs B against K runs, and what it leaves of both power targets.
    def runs_called(z, kk):
        return sum(1 for b in range(k + 1, n + 1)
                   if any(abs(v[b - 1] - statistics.mean(v[b - 1 - kk:b - 1]))
                          / (sd[key] * math.sqrt(1 + 1 / kk)) > z for key, v in logs.items()))

    def power_at(z, r, lo, hi):
        keys_ = [key for key in logs if lo <= sd[key] < hi]
        if not keys_:
            return "no case", 0
        p = statistics.mean(phi(math.log(r) / (sd[key] * math.sqrt(1 + 1 / k)) - z) for key in keys_)
        return f"{100 * p:.0f}%", len(keys_)

    z = z0
    while runs_called(z, k) > 0.05 * (n - k) and z < 9.0:
        z += 0.05
    p25, c25 = power_at(z, 1.25, 0.03, 0.05)
    p10, c10 = power_at(z, 1.10, 0.0, 0.02)
    print(f"the least z keeping k = {k} calls within 5% of runs B: z = {z:.2f} "
          f"({runs_called(z, k)} of {n - k}); there 25% among the 3%-5% cases: {p25} "
          f"({c25} cases); 10% among the cases under 2%: {p10} ({c10} cases)")

    lags = []
    for kk in (1, 2, 3, k):
        r = [(v[b - 1] - statistics.mean(v[b - 1 - kk:b - 1])) ** 2 / (sd[key] ** 2 * (1 + 1 / kk))
             for key, v in logs.items() for b in range(k + 2, n + 1)]
        lags.append(f"k = {kk}: {statistics.mean(r):.2f}")
    print(f"lag: mean e^2 / (sd^2 (1 + 1/k)), B = runs {k + 2}..{n}: " + "; ".join(lags))


if __name__ == "__main__":
    main()
