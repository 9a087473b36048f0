#!/usr/bin/env python3
"""compare's power and false alarms on real, independent runs (issue 55).

    power.py BIN DIR RUNS K

DIR holds run1.json .. runRUNS.json: default suites measured back to back on one
machine (`ipcperf export`). For each later run j (K+1 .. RUNS) a history of runs
1 .. j-1 is imported into a fresh SQLite file; then
  * A/A: run j itself is imported and compared with run j-1 (one run as A) and
    with --baseline-runs K (runs j-K .. j-1 as A) through
    `compare --fail-on-regression --format json`;
  * one case slowed: a copy of run j with one case's figure made worse by 10% and
    by 25% (its series and medians scaled) is imported instead, and compared the
    same two ways: is that case called slower, and is any other case called?
Cases are binned by their run-to-run spread (sd of log median over all RUNS
runs); each bin's power stands beside the power the limit predicts,
Phi(|ln r| / (sd * sqrt(1 + 1/k)) - z), z at two-sided 0.05 over the rows.
"""
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

MAIN_UNITS = ("MB/s", "µs p50", "cycles/s")
BINS = [(0.0, 0.01), (0.01, 0.02), (0.02, 0.03), (0.03, 0.05), (0.05, 0.10), (0.10, 9.0)]


def figure(case):
    """A case's series figures and whether lower is better (as compare takes them)."""
    w = case["workload"]
    if w == "stream":
        return [s["bytes"] * 1e9 / max(s["elapsed_ns"], 1) for s in case["series"]], False
    if w in ("round-trip", "replay"):
        return [float(x) for x in case["latency"]["series_p50_ns"]], True
    sync = case["sync"]
    series = sync["set_clear_series"] or sync["request_release_series"]
    return [x["cycles"] * 1e9 / x["elapsed_ns"] for x in series if x["elapsed_ns"] > 0], False


def ident(case):
    p = case["placement"]
    return (case["workload"], case["mechanism"], case["mode"], case.get("block_size_bytes"),
            p.get("writer_cpu"), p.get("reader_cpu"), p.get("label"), case.get("payload"))


def slowed(run, index, r):
    """Run `run` with case `index` made worse by factor r (series and medians)."""
    out = json.loads(json.dumps(run))
    c = out["cases"][index]
    w = c["workload"]
    if w == "stream":
        for s in c["series"]:
            s["elapsed_ns"] = int(round(s["elapsed_ns"] * r))
        for k in ("median_bytes_per_sec", "min_bytes_per_sec", "max_bytes_per_sec",
                  "median_blocks_per_sec"):
            if c.get(k) is not None:
                c[k] = c[k] / r
    elif w in ("round-trip", "replay"):
        lat = c["latency"]
        for k in ("series_p50_ns", "series_p99_ns"):
            lat[k] = [int(round(x * r)) for x in lat.get(k) or []]
    else:
        sync = c["sync"]
        for k in ("set_clear_series", "request_release_series"):
            for x in sync.get(k) or []:
                x["elapsed_ns"] = int(round(x["elapsed_ns"] * r))
    return out


def phi(x):
    return statistics.NormalDist().cdf(x)


def compare(bin_, db, a, b, k):
    args = [bin_, "compare", str(a), str(b), "--db", db, "--fail-on-regression",
            "--format", "json"]
    if k > 1:
        args += ["--baseline-runs", str(k)]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode not in (0, 3):
        sys.exit(f"compare failed ({p.returncode}): {p.stderr.strip()}")
    d = json.loads(p.stdout)
    rows = [r for r in d["cases"] if r["unit"] in MAIN_UNITS]
    return p.returncode, rows, d


def main():
    if sys.argv[1] == "--history":
        # Trials kept by an earlier judging (POWER_TRIALS): their table by history.
        kept = json.load(open(sys.argv[2]))
        sd = {tuple(key): s for key, s in kept["sd"]}
        trials = [(tuple(x[0]),) + tuple(x[1:]) for x in kept["trials"]]
        print(f"{len(trials)} trials kept in {sys.argv[2]}; {len(sd)} cases")
        by_history(sd, int(sys.argv[3]), trials)
        return
    bin_, dir_, n, k = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    runs = [json.load(open(os.path.join(dir_, f"run{i}.json"))) for i in range(1, n + 1)]
    ids = [ident(c) for c in runs[0]["cases"]]
    # Each case's run-to-run sd of log median over all the runs.
    sd = {}
    for i, key in enumerate(ids):
        logs = []
        for r in runs:
            m = [c for c in r["cases"] if ident(c) == key and c["status"] == "ok"]
            if m:
                logs.append(math.log(statistics.median(figure(m[0])[0])))
        if len(logs) == n:
            sd[key] = statistics.stdev(logs)
    work = tempfile.mkdtemp(prefix="ipcperf-power.")
    try:
        run_trials(bin_, work, runs, ids, sd, n, k)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_trials(bin_, work, runs, ids, sd, n, k):
    for i, r in enumerate(runs):
        with open(os.path.join(work, f"run{i + 1}.json"), "w") as f:
            json.dump(r, f)
    aa = {1: [], k: []}
    ratios = {1: [], k: []}
    near = {1: [0, 0], k: [0, 0]}
    trials = []  # (key, r, baseline, called, other_called)
    prior = None
    for j in range(k + 1, n + 1):
        base = os.path.join(work, f"h{j}.db")
        files = [os.path.join(work, f"run{i}.json") for i in range(1, j)]
        subprocess.run([bin_, "import", "-q", "--db", base] + files, check=True,
                       capture_output=True)

        def with_b(record):
            db = os.path.join(work, "t.db")
            for ext in ("", "-wal", "-shm"):
                if os.path.exists(base + ext):
                    shutil.copy(base + ext, db + ext)
                elif os.path.exists(db + ext):
                    os.remove(db + ext)
            path = os.path.join(work, "b.json")
            with open(path, "w") as f:
                json.dump(record, f)
            subprocess.run([bin_, "import", "-q", "--db", db, path], check=True,
                           capture_output=True)
            return db

        db = with_b(runs[j - 1])
        for kk in (1, k):
            rc, rows, d = compare(bin_, db, j - 1, j, kk)
            prior = d.get("run_to_run_prior") or prior
            if prior and prior.get("df") is None:
                prior["df"] = math.inf
            # Each called case with its ratio and what its per-message counters
            # did (the kernel's own account), as their own rows judged them.
            called = []
            for r in rows:
                if r["change"] not in ("faster", "slower"):
                    continue
                def counter(x):
                    lo, hi = x.get("interval_low"), x.get("interval_high")
                    within = f": 95% interval {lo:.2f}-{hi:.2f}x" if lo and hi else ""
                    return (f"{x['case'].split(' · ')[-1]} {x['ratio_b_over_a']:.2f}x "
                            f"({x['change']}{within})")
                said = [counter(x) for x in d["cases"]
                        if x["case"].startswith(r["case"] + " · ") and x.get("ratio_b_over_a")
                        and x["unit"] not in MAIN_UNITS and "p99" not in x["case"]]
                extra = f"; {', '.join(said)}" if said else ""
                called.append(f"{r['case']} ({r['change']}, B/A {r['ratio_b_over_a']:.2f}x{extra})")
            aa[kk].append((j, rc, called, d.get("whole_run") or []))
            for r in rows:
                if r.get("limit") and r.get("smallest_callable_change"):
                    ratios[kk].append(r["smallest_callable_change"] / r["limit"])
            near[kk][0] += d.get("rows_near_limit", 0)
            near[kk][1] += d.get("rows_with_limit", 0)
        for idx, key in enumerate(ids):
            if key not in sd:
                continue
            for slow in (1.10, 1.25):
                db = with_b(slowed(runs[j - 1], idx, slow))
                for kk in (1, k):
                    _, rows, _ = compare(bin_, db, j - 1, j, kk)
                    main = rows[idx]
                    assert key[1] in main["case"], (key, main["case"])
                    hit = main["change"] == "slower"
                    others = any(r["change"] in ("faster", "slower")
                                 for i2, r in enumerate(rows) if i2 != idx)
                    # What the row's own test could call (its t and degrees of
                    # freedom): the power it predicts for this change.
                    could = main.get("smallest_callable_change")
                    rsd = main.get("run_to_run_sd")
                    own = (phi((abs(math.log(slow)) - math.log(1 + could))
                               / (rsd * math.sqrt(1 + 1 / kk)))
                           if could and rsd else float("nan"))
                    trials.append((key, slow, kk, hit, others, j, own))
        print(f"  B = run {j}: {len(trials)} slowed-copy comparisons so far", file=sys.stderr)
    if os.environ.get("POWER_TRIALS"):
        # Every trial, for another look without judging again.
        with open(os.environ["POWER_TRIALS"], "w") as f:
            json.dump({"sd": [[list(key), s] for key, s in sd.items()],
                       "trials": [[list(x[0])] + list(x[1:]) for x in trials]}, f)
    report(runs, ids, sd, n, k, aa, ratios, near, trials, prior)


def report(runs, ids, sd, n, k, aa, ratios, near, trials, prior):
    m = len(sd)
    z = statistics.NormalDist().inv_cdf(1 - 0.05 / (2 * m))
    print(f"{n} default suites back to back; B = runs {k + 1}..{n}, each against run B-1 (k = 1) "
          f"and against runs B-{k}..B-1 (k = {k}); {m} cases; z = {z:.2f} (two-sided 0.05/{m})")
    if prior:
        print(f"prior fitted over the cases (history of runs 1..{n - 1}): typical run-to-run sd "
              f"{prior['sd'] * 100:.2f}%, {prior['df']:.1f} degrees of freedom, {prior['cases']} cases")
        t = prior.get("trend")
        if t:
            print(f"  following each case's kind: sd x{math.exp(t['across'] / 2):.2f} across CPUs, "
                  f"x (the series' own scatter)^{t['within']:.2f}; {100 * t['explained']:.0f}% of "
                  f"the cases' scatter beyond chance explained")
    sds = sorted(sd.values())
    q = lambda p: sds[min(len(sds) - 1, int(p * len(sds)))] * 100
    print(f"cases' run-to-run sd over {n} runs: min {sds[0] * 100:.2f}%, quartiles {q(0.25):.2f}% "
          f"{q(0.5):.2f}% {q(0.75):.2f}%, max {sds[-1] * 100:.2f}%")
    if prior and math.isfinite(prior["df"]):
        check_prior(sd, n, prior, runs[:n - 1], ids)
    more_series(runs, ids, sd)
    common_shift(runs, ids, sd)
    print()
    print("called: trials where the slowed case was called slower; (the limit's prediction, "
          "Phi(|ln r| / (sd * sqrt(1 + 1/k)) - z); the prediction of the row's own could-call, "
          "which pays for a spread estimated on finite degrees of freedom)")
    print("| run-to-run sd | cases | slowed 10%, k=1: called (predicted) | 10%, k=%d | 25%%, k=1 | 25%%, k=%d |"
          .replace("%d", str(k)).replace("%%", "%"))
    print("|---|---|---|---|---|---|")
    for lo, hi in BINS:
        keys = [key for key, s in sd.items() if lo <= s < hi]
        if not keys:
            continue
        cells = []
        for slow in (1.10, 1.25):
            for kk in (1, k):
                t = [x for x in trials if x[0] in keys and x[1] == slow and x[2] == kk]
                got = sum(1 for x in t if x[3])
                pred = statistics.mean(
                    phi(abs(math.log(slow)) / (sd[x[0]] * math.sqrt(1 + 1 / kk)) - z) for x in t)
                owns = [x[6] for x in t if not math.isnan(x[6])]
                own = statistics.mean(owns) if owns else float("nan")
                cells.append(f"{got}/{len(t)} = {100 * got / len(t):.0f}% ({100 * pred:.0f}%; {100 * own:.0f}%)")
        hi_s = f"{hi * 100:.0f}%" if hi < 1 else "more"
        print(f"| {lo * 100:.0f}%–{hi_s} | {len(keys)} | " + " | ".join(cells) + " |")
    print()
    for kk in (1, k):
        t = [x for x in trials if x[2] == kk]
        other = sum(1 for x in t if x[4])
        bs = sorted({x[5] for x in t})
        with_other = sorted({x[5] for x in t if x[4]})
        print(f"slowed copies, k = {kk}: another case called in {other} of {len(t)} trials "
              f"({100 * other / max(len(t), 1):.1f}%), in {len(with_other)} of the {len(bs)} runs B "
              f"(every trial of one B shares its other cases){': B = ' + ', '.join(map(str, with_other)) if with_other else ''}")
    by_history(sd, k, trials)
    for kk in (1, k):
        fails = sum(1 for (_, rc, _, _) in aa[kk] if rc == 3)
        called = sum(len(c) for (_, _, c, _) in aa[kk])
        r = sorted(ratios[kk])
        med = statistics.median(r) if r else float("nan")
        print(f"A/A, k = {kk}: {fails} of {len(aa[kk])} pairs failed the gate, {called} rows called in all; "
              f"could-call / limit median {med:.2f} over {len(r)} rows; "
              f"{near[kk][0]} of {near[kk][1]} rows within 1.5x of their limit")
        for (j, rc, c, whole) in aa[kk]:
            if c:
                print(f"  B = run {j}: called {', '.join(c)}")
            # compare's `whole_run`: the cases of a placement that moved together.
            for w in whole:
                if w["beyond_history"]:
                    print(f"  B = run {j}: its {w['cases']} cases {w['placement']} moved as a whole "
                          f"by {100 * w['slower']:+.1f}% (slower +), beyond the history's "
                          f"{100 * w['history_sd']:.1f}% over {w['history_runs']} runs")


def by_history(sd, k, trials):
    """The same trials (k = K) by how many runs the history held before B: the
    spreads a compare judges with are estimated from those runs, so a short
    history is where the prior weighs most; whether false calls gather there
    is what the table asks (read it beside tails.sh, whose rule knows every
    spread: odd runs that came early gather there too)."""
    js = sorted({x[5] for x in trials})
    if len(js) < 2:
        return
    edges = [e for e in (k, 10, 15, 20, 30, 50) if e < js[-1]] + [js[-1]]
    print()
    print(f"by the history before B (k = {k}): the targets' bins, and another case called")
    print("| runs of history | runs B | slowed 10%, sd < 2% | slowed 25%, sd < 5% | another case called: trials, runs B |")
    print("|---|---|---|---|---|")
    for lo, hi in zip(edges, edges[1:]):
        t = [x for x in trials if x[2] == k and lo <= x[5] - 1 < hi]
        if not t:
            continue
        bs = sorted({x[5] for x in t})
        cells = []
        for slow, top in ((1.10, 0.02), (1.25, 0.05)):
            u = [x for x in t if x[1] == slow and sd[x[0]] < top]
            got = sum(1 for x in u if x[3])
            cells.append(f"{got}/{len(u)} = {100 * got / max(len(u), 1):.0f}%")
        other = sum(1 for x in t if x[4])
        with_other = sorted({x[5] for x in t if x[4]})
        print(f"| {lo}–{hi - 1} | {len(bs)} | {cells[0]} | {cells[1]} | "
              f"{other}/{len(t)} = {100 * other / len(t):.1f}%, {len(with_other)} of {len(bs)} |")


def more_series(runs, ids, sd):
    """What more series in each run would buy: each case's run-to-run variance of
    its log median split into the part its own series explain (the variance of a
    median of n series, about 1.4 sd^2 / n for n = 5) and the rest, which no
    series within a run can shrink; the limit with twice the series."""
    shares, narrower = [], []
    for idx, key in enumerate(ids):
        if key not in sd:
            continue
        within = []
        for r in runs:
            v = [math.log(x) for x in figure(r["cases"][idx])[0] if x > 0]
            if len(v) >= 2:
                within.append(1.4 * statistics.variance(v) / len(v))
        total = sd[key] ** 2
        w = min(statistics.mean(within), total)
        shares.append(w / total)
        narrower.append(math.sqrt((total - w / 2) / total))
    print(f"more series: a run's own series explain a median {100 * statistics.median(shares):.0f}% "
          f"(quartiles {100 * sorted(shares)[len(shares) // 4]:.0f}%–"
          f"{100 * sorted(shares)[3 * len(shares) // 4]:.0f}%) of a case's run-to-run variance; twice "
          f"the series would narrow the median case's limit to {statistics.median(narrower):.2f}x "
          f"of today's (the rest moves between runs, whatever a run takes)")


def common_shift(runs, ids, sd):
    """Each run's shift shared by its cases (the median over cases of each
    case's log median less its mean over the runs), apart for the cases on one
    CPU and those across two: a machine that changes regime between runs moves
    many cases at once, which no test of one case against its spread can tell
    from a change."""
    for name, same in (("on one CPU", True), ("across CPUs", False)):
        keys = [(i, k) for i, k in enumerate(ids) if k in sd and (k[4] == k[5]) == same]
        if not keys:
            continue
        logs = {k: [math.log(statistics.median(figure(r["cases"][i])[0])) for r in runs]
                for i, k in keys}
        means = {k: statistics.mean(v) for k, v in logs.items()}
        shifts = [statistics.median(logs[k][j] - means[k] for _, k in keys) for j in range(len(runs))]
        print(f"each run's common shift, cases {name} ({len(keys)}): "
              + " ".join(f"{100 * x:+.0f}%" for x in shifts))


def digamma(x):
    acc = 0.0
    while x < 6:
        acc -= 1 / x
        x += 1
    x2 = 1 / (x * x)
    return acc + math.log(x) - 0.5 / x - x2 * (1 / 12 - x2 * (1 / 120 - x2 / 252))


def traits(runs, key):
    """A case's traits as compare takes them: two CPUs, and the mean over the
    runs of its median's within-run variance ((1.4826 MAD)^2 pi/2 / n of the logs)."""
    across, w = True, []
    for r in runs:
        for c in r["cases"]:
            if ident(c) != key or c["status"] != "ok":
                continue
            p = c["placement"]
            across = p.get("writer_cpu") is None or p.get("writer_cpu") != p.get("reader_cpu")
            logs = [math.log(x) for x in figure(c)[0] if x > 0]
            if len(logs) >= 3:
                m = statistics.median(logs)
                mad = 1.4826 * statistics.median(abs(x - m) for x in logs)
                w.append(mad * mad * math.pi / 2 / len(logs))
    return across, (sum(w) / len(w) if w else 0.0)


def check_prior(sd, n, prior, history, ids):
    """The prior predictive check: each case's s^2 / s0^2 against F(n - 1, d0),
    s0^2 the case's own where the prior follows the cases' kind."""
    rng = random.Random(1)
    d, d0 = n - 1, prior["df"]
    draws = sorted((rng.gammavariate(d / 2, 2) / d) / (rng.gammavariate(d0 / 2, 2) / d0)
                   for _ in range(20000))
    lo, hi = draws[int(0.05 * len(draws))], draws[int(0.95 * len(draws))]
    t = prior.get("trend")

    def s0(key):
        if not t:
            return prior["sd"] ** 2
        across, w = traits(history, key)
        if w <= 0 and t["within"] != 0:
            return prior["sd"] ** 2
        x = t["intercept"] + t["across"] * across + (t["within"] * math.log(w) if w > 0 else 0)
        return math.exp(x + digamma(d0 / 2) - math.log(d0 / 2))
    out = sum(1 for key, s in sd.items() if not lo <= s * s / s0(key) <= hi)
    print(f"prior check: {out} of {len(sd)} cases ({100 * out / len(sd):.0f}%) outside the central 90% "
          f"the prior predicts for a {d}-run spread (F({d}, {d0:.1f}) scaled by s0²; 10% expected)")


if __name__ == "__main__":
    main()
