#!/usr/bin/env python3
"""Which way of running a case's series makes its median steadiest from round to round.

    fresh.py DIR

DIR holds fresh1.txt .. freshN.txt (bench/verdicts/fresh.sh), lines
`mode mech bs wcpu rcpu rate...`, mode same, rebuf or fresh. For each case and
mode: the run-to-run sd of the log median over the rounds, and how much of
that variance the rounds' own series account for (pi/2 * var(log series) / n,
the variance of a median of n series): where it is small, what moves a round
comes with the round as a whole, and only more rounds (or a round made of
independent parts) average it out.
"""
import math
import os
import statistics
import sys

MODES = ("same", "rebuf", "fresh")


def name(key):
    mech, bs, w, r = key
    size = f"{bs // 1048576} MiB" if bs >= 1048576 else f"{bs // 1024} KiB" if bs >= 1024 else f"{bs} B"
    return f"{mech} {size} {w}→{r}"


def main():
    dir_ = sys.argv[1]
    n = 0
    while os.path.exists(os.path.join(dir_, f"fresh{n + 1}.txt")):
        n += 1
    logs, within = {}, {}
    for i in range(1, n + 1):
        for line in open(os.path.join(dir_, f"fresh{i}.txt")):
            w = line.split()
            if len(w) < 7:
                continue
            mode, key = w[0], (w[1], int(w[2]), int(w[3]), int(w[4]))
            rates = [math.log(float(x)) for x in w[5:]]
            logs.setdefault(key, {}).setdefault(mode, []).append(statistics.median(rates))
            within.setdefault(key, {}).setdefault(mode, []).append(
                math.pi / 2 * statistics.variance(rates) / len(rates))
    keys = [k for k in logs if all(len(logs[k].get(m, [])) == n for m in MODES)]
    keys.sort(key=lambda x: (x[0] != "pipe", x[2] != x[3], x[1]))
    print(f"{n} rounds, {len(keys)} cases, each three ways per round: its series in one pair of "
          f"processes and buffers (same), new buffers each series (rebuf), new processes each (fresh)")
    print()
    print("| case | run-to-run sd: same | rebuf | fresh | rebuf / same | fresh / same "
          "| series' share: same | fresh | median figure, fresh / same |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios = {m: [] for m in MODES[1:]}
    for key in keys:
        sd = {m: statistics.stdev(logs[key][m]) for m in MODES}
        share = {m: statistics.mean(within[key][m]) / sd[m] ** 2 for m in MODES}
        for m in MODES[1:]:
            ratios[m].append(sd[m] / sd["same"])
        level = math.exp(statistics.median(logs[key]["fresh"]) - statistics.median(logs[key]["same"]))
        fmt = lambda x: "over 100%" if x > 1 else f"{100 * x:.0f}%"  # noqa: E731
        print(f"| {name(key)} | {100 * sd['same']:.2f}% | {100 * sd['rebuf']:.2f}% | {100 * sd['fresh']:.2f}% "
              f"| {sd['rebuf'] / sd['same']:.2f} | {sd['fresh'] / sd['same']:.2f} "
              f"| {fmt(share['same'])} | {fmt(share['fresh'])} | {level:.2f} |")
    print()
    for m in MODES[1:]:
        r = ratios[m]
        print(f"{m} / same, run-to-run sd: median {statistics.median(r):.2f} "
              f"(range {min(r):.2f}-{max(r):.2f}; {sum(1 for x in r if x < 1)} of {len(r)} cases steadier)")


if __name__ == "__main__":
    main()
