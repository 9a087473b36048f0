#!/usr/bin/env python3
"""`trend`'s newest-run verdict on real runs (issue 55, point 6: a night against
a host's own runs, by compare's variance model).

bench/verdicts/newest.py BIN DB FIRST: DB holds default suites of this host back
to back. Each run B from the FIRST-th on is taken as the newest night: the
history is cut after it (a copy), and `BIN trend MECH` is asked of each
mechanism (its cases judged together, Holm). A/A: what it calls as it stands.
Slowed: B's copy with one case's series scaled to 0.90 and to 0.75 of its
figure (its history untouched): is that case called slower, and is another
called? Results binned by each case's run-to-run spread (the sd of its log
medians over all the runs), beside the power the limit predicts,
Phi(|ln r| / (sd sqrt(1 + 1/k)) - z), z at two-sided 0.05 over the
mechanism's cases, k the runs before B.
"""
import json
import math
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict

BIN, DB, FIRST = sys.argv[1], sys.argv[2], int(sys.argv[3])
FACTORS = (0.90, 0.75)
BINS = [(0.0, 0.01), (0.01, 0.02), (0.02, 0.03), (0.03, 0.05), (0.05, 0.10), (0.10, 9.0)]


def phi(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def z_of(m):
    # Two-sided 0.05 / m, by bisection on the normal tail.
    target = 0.05 / (2.0 * m)
    lo, hi = 0.0, 10.0
    for _ in range(80):
        mid = (lo + hi) / 2.0
        if 1.0 - phi(mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


src = sqlite3.connect(f"file:{DB}?mode=ro", uri=True)
runs = [r[0] for r in src.execute("select id from runs where complete = 1 order by started_ms, id")]
rows = src.execute("select run_id, class_key, mechanism, figure_values from case_figures").fetchall()
src.close()
median = defaultdict(dict)  # case -> run -> median
mech_of = {}
for run, key, mech, values in rows:
    median[key][run] = statistics.median(json.loads(values))
    mech_of[key] = mech
mechs = sorted(set(mech_of.values()))
cases_of = {m: sorted(k for k in mech_of if mech_of[k] == m) for m in mechs}
sd = {}
for key, by_run in median.items():
    logs = [math.log(by_run[r]) for r in runs if r in by_run and by_run[r] > 0]
    sd[key] = statistics.stdev(logs) if len(logs) > 2 else float("nan")

work = tempfile.mkdtemp(prefix="ipcperf-newest.")


def trend(db, mech):
    out = subprocess.run([BIN, "trend", mech, "--db", db, "--format", "json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"trend {mech}: {out.stderr.strip()}")
    return {p["case"]: p["newest"] for p in json.loads(out.stdout) if "newest" in p}


def called(n):
    return n is not None and n["verdict"] in ("slower", "faster")


aa_nights = []  # per B: the calls in the A/A night
trend_nights = [0, 0]  # a trend of one night with a call, trends asked
aa_rows = 0
ratio_to_limit = []
trials = defaultdict(lambda: [0, 0])  # (factor, bin) -> [called, trials]
predicted = defaultdict(list)
other = [0, 0]  # slowed trials with another case called, trials
other_runs = set()
for b in runs[FIRST - 1:]:
    db = f"{work}/b.db"
    shutil.copy(DB, db)
    con = sqlite3.connect(db)
    later = [r for r in runs if runs.index(r) > runs.index(b)]
    for table, col in (("case_figures", "run_id"), ("series", "run_id"), ("cases", "run_id"), ("runs", "id")):
        con.executemany(f"delete from {table} where {col} = ?", [(r,) for r in later])
    con.commit()
    k = runs.index(b)  # runs before B
    night = []
    for mech in mechs:
        judged = trend(db, mech)
        trend_nights[1] += 1
        trend_nights[0] += int(any(called(n) for n in judged.values()))
        for case, n in judged.items():
            aa_rows += 1
            if called(n):
                night.append(f"{case} {n['ratio']:.2f}x")
            if n.get("could_call") and n.get("limit"):
                ratio_to_limit.append(n["could_call"] / n["limit"])
        for case in cases_of[mech]:
            if b not in median[case]:
                continue
            (before,) = con.execute(
                "select figure_values from case_figures where run_id = ? and class_key = ?", (b, case)).fetchone()
            for f in FACTORS:
                scaled = json.dumps([v * f for v in json.loads(before)])
                con.execute("update case_figures set figure_values = ? where run_id = ? and class_key = ?",
                            (scaled, b, case))
                con.commit()
                got = trend(db, mech)
                s = sd[case]
                bin_ = next(i for i, (lo, hi) in enumerate(BINS) if lo <= s < hi) if s == s else len(BINS) - 1
                t = trials[(f, bin_)]
                t[1] += 1
                n = got.get(case)
                t[0] += int(n is not None and n["verdict"] == "slower")
                kk = min(k, 30)
                z = z_of(len(cases_of[mech]))
                predicted[(f, bin_)].append(phi(abs(math.log(f)) / (s * math.sqrt(1 + 1 / max(kk, 1))) - z))
                others = [c for c, n in got.items() if c != case and called(n)]
                other[1] += 1
                if others:
                    other[0] += 1
                    other_runs.add(b)
            con.execute("update case_figures set figure_values = ? where run_id = ? and class_key = ?",
                        (before, b, case))
            con.commit()
    con.close()
    aa_nights.append((b, night))
    print(f"run {b} as the newest ({k} before it): " + ("; ".join(night) if night else "no call"), flush=True)

shutil.rmtree(work)
n_cases = len(median)
print()
print(f"{len(runs)} runs, {n_cases} cases in {len(mechs)} trends ({', '.join(mechs)}), newest = runs {FIRST}..{len(runs)}")
nights_called = sum(1 for _, n in aa_nights if n)
print(f"A/A: a call in {nights_called} of {len(aa_nights)} nights (any of the {len(mechs)} trends), "
      f"{sum(len(n) for _, n in aa_nights)} of {aa_rows} newest rows; "
      f"a call in {trend_nights[0]} of {trend_nights[1]} trends asked (each one mechanism's cases, held to 5% by Holm)")
if ratio_to_limit:
    within = sum(1 for r in ratio_to_limit if r <= 1.5)
    print(f"could call / limit: median {statistics.median(ratio_to_limit):.2f}, "
          f"{within} of {len(ratio_to_limit)} rows within 1.5x")
print(f"slowed trials with another case of its trend called: {other[0]} of {other[1]} "
      f"({100.0 * other[0] / max(other[1], 1):.1f}%), in {len(other_runs)} runs B")
print()
print("| run-to-run sd | cases | 10% slower: called | limit predicts | 25% slower: called | limit predicts |")
print("|---|---|---|---|---|---|")
for i, (lo, hi) in enumerate(BINS):
    cases = sum(1 for s in sd.values() if lo <= s < hi)
    if not cases:
        continue
    cells = []
    for f in FACTORS:
        c, t = trials[(f, i)]
        p = predicted[(f, i)]
        cells += [f"{c}/{t}", f"{100.0 * statistics.mean(p):.0f}%" if p else "-"]
    label = f"{lo * 100:.0f}-{hi * 100:.0f}%" if hi < 1 else f"over {lo * 100:.0f}%"
    print(f"| {label} | {cases} | " + " | ".join(cells) + " |")
