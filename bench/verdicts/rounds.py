#!/usr/bin/env python3
"""What more series in a run buy a verdict (issue 55, item 4), on real runs.

    rounds.py DIR

DIR holds aN.json (default suites, `run --format json`: 5 series a case) and
bN.json (`run -r 10`: 10 series a case, each as long: twice the time), taken
interleaved on one machine. For each case, the run-to-run sd of the log of its
median over the a-runs and over the b-runs; their ratio says how much of a
case's run-to-run spread a run's own series can take away (1.00: none, all of
it moves between runs; 0.71: all of it, were the series independent). Then
the limit compare's history rule gives the median case with a baseline of 5
runs (z = 3.28, two-sided 0.05 over 48 rows): e^(z * sd * sqrt(1 + 1/5)) - 1.
"""
import glob
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import power  # noqa: E402  (the case identity and figure power.py judges)

Z, K = 3.28, 5


def load(d, prefix):
    runs = []
    for f in sorted(glob.glob(os.path.join(d, prefix + "[0-9]*.json"))):
        try:
            runs.append(json.load(open(f)))
        except ValueError:
            print(f"  {os.path.basename(f)}: no run (skipped)")
    return runs


def medians(runs):
    x = {}
    for r in runs:
        for c in r["cases"]:
            if c.get("status") == "ok":
                f, _ = power.figure(c)
                x.setdefault(power.ident(c), []).append(math.log(statistics.median(f)))
    return x


def main():
    d = sys.argv[1]
    a, b = load(d, "a"), load(d, "b")
    xa, xb = medians(a), medians(b)
    ids = [i for i in xa if len(xa[i]) == len(a) and len(xb.get(i, [])) == len(b)]
    if len(a) < 3 or len(b) < 3 or not ids:
        sys.exit("rounds.py: needs at least 3 runs of each and cases in all of them")
    va = [statistics.variance(xa[i]) for i in ids]
    vb = [statistics.variance(xb[i]) for i in ids]
    ratio = [math.sqrt(q / p) for p, q in zip(va, vb) if p > 0]
    qs = statistics.quantiles(ratio, n=4)
    print(f"{len(a)} runs of 5 series a case, {len(b)} runs of 10 (twice the time), interleaved; {len(ids)} cases")
    for name, v in (("5 series", va), ("10 series", vb)):
        sd = statistics.median([math.sqrt(x) for x in v])
        print(f"  run-to-run sd of a case's median, {name}: median over the cases {100 * sd:.2f}%")
    print(f"  per case, sd with 10 series / with 5: median {statistics.median(ratio):.2f} (quartiles {qs[0]:.2f}-{qs[2]:.2f})")
    print(f"  pooled over the cases (root of the mean variances' ratio): {math.sqrt(statistics.mean(vb) / statistics.mean(va)):.2f}")
    print(f"  (0.71 were every series independent of the run it is in; 1.00 were all the spread between runs)")
    for name, v in (("5 series", va), ("10 series", vb)):
        sd = math.sqrt(statistics.median(v))
        lim = math.exp(Z * sd * math.sqrt(1 + 1 / K)) - 1
        print(f"  the limit for the median case, baseline of {K} runs, {name} in every run: {100 * lim:.1f}%")


if __name__ == "__main__":
    main()
