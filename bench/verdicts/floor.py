#!/usr/bin/env python3
"""Is a case's run-to-run spread ipcperf's or the machine's? (issue 55)

    floor.py DIR K           # the rounds bench/verdicts/floor.sh measured
    floor.py --cases RUN     # the pipe and memcpy cases of one run, for the floor

DIR holds run1.json .. runN.json (`ipcperf export` of default suites measured
back to back) and floor1.txt .. floorN.txt, each line `mech bs wcpu rcpu rate...`:
the same cases as bare C loops (bench/floor/suite-cases.c) measured beside each
run. For each case present in both, the log of its median over the series in
each round, then
  * run-to-run sd of that log, ipcperf's and the floor's, and Pearson's r of
    the two over the rounds (near 1: the rounds that ran fast ran fast for both:
    the machine moved, not the harness);
  * the smallest lone change a run could call against the mean of K earlier
    runs at that sd among the suite's 48 rows, e^(z sd sqrt(1 + 1/K)) - 1,
    z = 3.28 (the limit, as compare prints it);
  * how much of the run-to-run variance a run's own series account for (the
    variance of a median of n series, pi/2 * their variance / n);
  * tails: each round's leave-one-out standardized move, beyond 4 (Student's t
    on N-2 degrees of freedom expects the count given);
  * a rule that knew each case's sd (over all N rounds) judging round B against
    the mean of the K before at z: the rounds B with a call, for each tool (no
    case changed: every call is false), and the rounds whose cases on one CPU
    moved as a whole (mean of their moves), for each tool.
"""
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from power import figure, phi  # noqa: E402
from tails import t_sf  # noqa: E402

Z = statistics.NormalDist().inv_cdf(1 - 0.05 / 48 / 2)


def floor_cases(path):
    run = json.load(open(path))
    for c in run["cases"]:
        p = c["placement"]
        if (c["workload"] == "stream" and c["status"] == "ok" and c.get("payload") == "touch"
                and (c["mechanism"], c["mode"]) in (("pipe", "processes"), ("memcpy", "single"), ("null", "single"))):
            w, r = p["writer_cpu"], p.get("reader_cpu")
            print(c["mechanism"], c["block_size_bytes"], c["series"][0]["blocks"], len(c["series"]),
                  w, w if r is None else r)


def key_of(case):
    p = case["placement"]
    r = p.get("reader_cpu")
    return (case["mechanism"], case["block_size_bytes"], p["writer_cpu"],
            p["writer_cpu"] if r is None else r)


def name(key):
    mech, bs, w, r = key
    size = f"{bs // 1048576} MiB" if bs >= 1048576 else f"{bs // 1024} KiB" if bs >= 1024 else f"{bs} B"
    return f"{mech} {size} {w}→{r}"


def within(rates):
    """Variance of the log median of these series: pi/2 * var(log series) / n."""
    logs = [math.log(x) for x in rates]
    return math.pi / 2 * statistics.variance(logs) / len(logs)


def share(x):
    """A share of the variance; over 100% where the series scatter more than the runs."""
    return "over 100%" if x > 1 else f"{100 * x:.0f}%"


def loo_moves(v):
    out = []
    for i in range(len(v)):
        o = v[:i] + v[i + 1:]
        out.append(abs(v[i] - statistics.mean(o)) / (statistics.stdev(o) * math.sqrt(1 + 1 / len(o))))
    return out


def calls(logs, sd, k, n):
    """Rounds B (k+1..n) in which a rule that knew each sd calls a case, and which."""
    said = {}
    for b in range(k + 1, n + 1):
        for key, v in logs.items():
            e = v[b - 1] - statistics.mean(v[b - 1 - k:b - 1])
            if abs(e) / (sd[key] * math.sqrt(1 + 1 / k)) > Z:
                said.setdefault(b, []).append(f"{name(key)} {math.exp(e):.2f}x")
    return said


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--cases":
        return floor_cases(sys.argv[2])
    dir_, k = sys.argv[1], int(sys.argv[2])
    n = 0
    while (os.path.exists(os.path.join(dir_, f"run{n + 1}.json"))
           and os.path.exists(os.path.join(dir_, f"floor{n + 1}.txt"))):
        n += 1
    ours, theirs, own_w, floor_w = {}, {}, {}, {}
    for i in range(1, n + 1):
        for c in json.load(open(os.path.join(dir_, f"run{i}.json")))["cases"]:
            if c["status"] == "ok" and c["workload"] == "stream" and c.get("payload") == "touch":
                f = figure(c)[0]
                if f:
                    ours.setdefault(key_of(c), {})[i] = math.log(statistics.median(f))
                    own_w.setdefault(key_of(c), []).append(within(f))
        for line in open(os.path.join(dir_, f"floor{i}.txt")):
            w = line.split()
            if len(w) > 5:
                key, rates = (w[0], int(w[1]), int(w[2]), int(w[3])), [float(x) for x in w[4:]]
                theirs.setdefault(key, {})[i] = math.log(statistics.median(rates))
                floor_w.setdefault(key, []).append(within(rates))
    keys = [key for key in theirs if len(theirs[key]) == n and len(ours.get(key, {})) == n]
    keys.sort(key=lambda x: (["pipe", "memcpy", "null"].index(x[0]), x[2] != x[3], x[1]))
    a = {key: [ours[key][i] for i in range(1, n + 1)] for key in keys}
    b = {key: [theirs[key][i] for i in range(1, n + 1)] for key in keys}
    sa = {key: statistics.stdev(v) for key, v in a.items()}
    sb = {key: statistics.stdev(v) for key, v in b.items()}
    print(f"{n} rounds, {len(keys)} cases measured by both in every round; "
          f"K = {k}, z = {Z:.2f} (two-sided 0.05/48)")
    print()
    print("| case | run-to-run sd: ipcperf | C floor | floor / ipcperf | r of their rounds "
          "| limit at the floor's sd (ipcperf's) | series' share of the variance: ipcperf | floor "
          "| median figure, floor / ipcperf |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios, rs = [], []
    for key in keys:
        r = statistics.correlation(a[key], b[key])
        rs.append(r)
        ratios.append(sb[key] / sa[key])
        lim = lambda s: 100 * (math.exp(Z * s * math.sqrt(1 + 1 / k)) - 1)  # noqa: E731
        share_a = statistics.mean(own_w[key]) / sa[key] ** 2
        share_b = statistics.mean(floor_w[key]) / sb[key] ** 2
        level = math.exp(statistics.median(b[key]) - statistics.median(a[key]))
        print(f"| {name(key)} | {100 * sa[key]:.2f}% | {100 * sb[key]:.2f}% | {sb[key] / sa[key]:.2f} "
              f"| {r:+.2f} | {lim(sb[key]):.1f}% ({lim(sa[key]):.1f}%) | {share(share_a)} "
              f"| {share(share_b)} | {level:.2f} |")
    print()
    print(f"floor sd / ipcperf sd: median {statistics.median(ratios):.2f} "
          f"(range {min(ratios):.2f}-{max(ratios):.2f}); r: median {statistics.median(rs):+.2f} "
          f"(range {min(rs):+.2f} to {max(rs):+.2f})")
    for tool, s in (("ipcperf", sa), ("floor", sb)):
        quiet = sum(1 for key in keys if s[key] <= 0.02)
        mid = sum(1 for key in keys if 0.02 < s[key] <= 0.05)
        print(f"  {tool}: {quiet} cases of sd <= 2% (the 10% target's), {mid} of 2%-5%")

    total = len(keys) * n
    want = total * 2 * t_sf(4.0, n - 2)
    for tool, logs in (("ipcperf", a), ("floor", b)):
        moves = [(m, i, key) for key, v in logs.items() for i, m in enumerate(loo_moves(v))]
        far = sorted((x for x in moves if x[0] > 4.0), reverse=True)
        listed = ", ".join(f"{name(key)} round {i + 1} at {m:.1f}" for m, i, key in far[:4])
        print(f"tails, {tool}: {len(far)} of {total} case-rounds beyond 4 units "
              f"(t expects {want:.2f}){': ' + listed if far else ''}")

    print(f"a rule that knew each case's sd, rounds B = {k + 1}..{n} against the {k} before, z = {Z:.2f}:")
    for tool, logs, s in (("ipcperf", a, sa), ("floor", b, sb)):
        said = calls(logs, s, k, n)
        listed = "; ".join(f"round {bb}: {', '.join(v)}" for bb, v in sorted(said.items()))
        print(f"  {tool}: a call in {len(said)} of {n - k} rounds B{' (' + listed + ')' if said else ''}")

    one = [key for key in keys if key[2] == key[3]]
    if len(one) >= 2:
        def shift(logs):
            return [statistics.mean(logs[key][i] - statistics.mean(logs[key]) for key in one)
                    for i in range(n)]
        sh_a, sh_b = shift(a), shift(b)
        print(f"each round's common shift, the {len(one)} cases on one CPU "
              f"(r of ipcperf's and the floor's: {statistics.correlation(sh_a, sh_b):+.2f}):")
        print("  ipcperf: " + " ".join(f"{100 * (math.exp(x) - 1):+.0f}%" for x in sh_a))
        print("  floor:   " + " ".join(f"{100 * (math.exp(x) - 1):+.0f}%" for x in sh_b))
    print()
    print("the power a 10% and a 25% slowing would have against K runs at each tool's sd "
          "(the limit's Phi(|ln r| / (sd sqrt(1 + 1/K)) - z)), median over the cases:")
    for tool, s in (("ipcperf", sa), ("floor", sb)):
        p10 = statistics.median(phi(math.log(1.1) / (s[key] * math.sqrt(1 + 1 / k)) - Z) for key in keys)
        p25 = statistics.median(phi(math.log(1.25) / (s[key] * math.sqrt(1 + 1 / k)) - Z) for key in keys)
        print(f"  {tool}: 10%: {100 * p10:.0f}%, 25%: {100 * p25:.0f}%")


if __name__ == "__main__":
    main()
