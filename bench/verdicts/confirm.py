#!/usr/bin/env python3
"""What `compare --confirm C` buys a gate, on real, independent runs.

    confirm.py BIN DIR RUNS K [JOBS]

DIR holds run1.json .. runRUNS.json, default suites measured back to back
(power.sh --keep). For each run B = K+1 .. RUNS-1, on a history of runs
1 .. B-1, B is compared with the K runs before it (`--baseline-runs K`, one
run as A where K is 1), as power.py does: B itself (A/A) and copies of B with
one case made 10% and 25% worse. Where that comparison called anything, it is
judged again with the next run as C (`--confirm`), C slowed the same way (a
change persists; a far figure of one run does not). Prints, plain and
confirmed: the slowed case called, by the case's run-to-run spread; another
case called; A/A pairs failing the gate; and how many runs B a gate would have
measured C for (those whose plain comparison called a row slower).
"""
import json
import math
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from power import BINS, MAIN_UNITS, common_shift, figure, ident, slowed  # noqa: E402


def judge_b(args):
    """All trials of run B = j: (A/A result, [slowed trials])."""
    bin_, runs, j, k, sd_keys = args
    work = tempfile.mkdtemp(prefix="ipcperf-confirm.")
    try:
        files = []
        for i in range(1, j):
            p = os.path.join(work, f"run{i}.json")
            with open(p, "w") as f:
                json.dump(runs[i - 1], f)
            files.append(p)
        base = os.path.join(work, "h.db")
        subprocess.run([bin_, "import", "-q", "--db", base] + files, check=True,
                       capture_output=True)

        def db_with(records):
            db = os.path.join(work, "t.db")
            for ext in ("", "-wal", "-shm"):
                if os.path.exists(db + ext):
                    os.remove(db + ext)
                if os.path.exists(base + ext):
                    shutil.copy(base + ext, db + ext)
            for i, rec in enumerate(records):
                p = os.path.join(work, f"x{i}.json")
                with open(p, "w") as f:
                    json.dump(rec, f)
                subprocess.run([bin_, "import", "-q", "--db", db, p], check=True,
                               capture_output=True)
            return db

        def rows(db, confirm):
            args = [bin_, "compare", str(j - 1), str(j), "--db", db, "--fail-on-regression",
                    "--format", "json"]
            if k > 1:
                args += ["--baseline-runs", str(k)]
            if confirm:
                args += ["--confirm", str(j + 1)]
            p = subprocess.run(args, capture_output=True, text=True)
            if p.returncode not in (0, 3):
                sys.exit(f"compare failed ({p.returncode}): {p.stderr.strip()}")
            return p.returncode, [r for r in json.loads(p.stdout)["cases"]
                                  if r["unit"] in MAIN_UNITS]

        def both(b, c):
            """(plain rc, rows), (confirmed rc, rows): C judged only where B called."""
            plain = rows(db_with([b]), False)
            if not any(r["change"] in ("faster", "slower") for r in plain[1]):
                return plain, plain
            return plain, rows(db_with([b, c]), True)

        def called(rs):
            return [f"{r['case']} {r['ratio_b_over_a']:.2f}x" for r in rs
                    if r["change"] in ("faster", "slower")]

        def what_c_did(plain, conf):
            # Each call of B with what C showed (compare's own words).
            out = []
            for p, c in zip(plain, conf):
                if p["change"] in ("faster", "slower"):
                    said = c["why"].split(f"run {j + 1} (")[-1].split(")")[0]
                    out.append(f"{p['case']} {p['ratio_b_over_a']:.2f}x, "
                               f"{'held' if c['change'] == p['change'] else 'not repeated'} "
                               f"({said})")
            return out

        (prc, prows), (crc, crows) = both(runs[j - 1], runs[j])
        aa = (j, prc, crc, what_c_did(prows, crows), called(crows))
        trials = []
        for idx, key in enumerate(ident(c) for c in runs[0]["cases"]):
            if key not in sd_keys:
                continue
            for slow in (1.10, 1.25):
                (_, p), (_, c) = both(slowed(runs[j - 1], idx, slow), slowed(runs[j], idx, slow))
                other = lambda rs: any(r["change"] in ("faster", "slower")  # noqa: E731
                                       for i, r in enumerate(rs) if i != idx)
                trials.append((list(key), slow, p[idx]["change"] == "slower",
                               c[idx]["change"] == "slower", other(p), other(c)))
        print(f"  B = run {j} judged", file=sys.stderr, flush=True)
        return aa, trials
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    bin_, dir_, n, k = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    jobs = int(sys.argv[5]) if len(sys.argv) > 5 else os.cpu_count() or 1
    runs = [json.load(open(os.path.join(dir_, f"run{i}.json"))) for i in range(1, n + 1)]
    ids = [ident(c) for c in runs[0]["cases"]]
    sd = {}
    for idx, key in enumerate(ids):
        logs = [math.log(statistics.median(figure(r["cases"][idx])[0])) for r in runs
                if idx < len(r["cases"]) and ident(r["cases"][idx]) == key
                and r["cases"][idx]["status"] == "ok"]
        if len(logs) == n:
            sd[key] = statistics.stdev(logs)
    work = [(bin_, runs, j, k, set(sd)) for j in range(k + 1, n)]
    with multiprocessing.Pool(jobs) as pool:
        out = pool.map(judge_b, work)
    aa = [a for a, _ in out]
    trials = [(tuple(t[0]),) + tuple(t[1:]) for _, ts in out for t in ts]
    m = len(sd)
    z = statistics.NormalDist().inv_cdf(1 - 0.05 / (2 * m))
    sds = sorted(sd.values())
    print(f"{n} default suites; B = runs {k + 1}..{n - 1} against the {k} run(s) before it, "
          f"C = run B+1; {m} cases, run-to-run sd quartiles "
          f"{100 * sds[m // 4]:.2f}% {100 * sds[m // 2]:.2f}% {100 * sds[3 * m // 4]:.2f}%")
    # A machine that moves as a whole for minutes moves B and C alike: C
    # holds such calls (compare's whole-run line names them).
    common_shift(runs, ids, sd)
    print()
    print("| run-to-run sd | cases | slowed 10%: plain | confirmed | (limit) | slowed 25%: plain "
          "| confirmed | (limit) |")
    print("|---|---|---|---|---|---|---|---|")
    for lo, hi in BINS:
        keys = [key for key, s in sd.items() if lo <= s < hi]
        if not keys:
            continue
        cells = []
        for slow in (1.10, 1.25):
            t = [x for x in trials if x[0] in keys and x[1] == slow]
            pred = statistics.mean(
                statistics.NormalDist().cdf(abs(math.log(slow)) / (sd[x[0]] * math.sqrt(1 + 1 / k)) - z)
                for x in t)
            for col in (2, 3):
                got = sum(1 for x in t if x[col])
                cells.append(f"{got}/{len(t)} = {100 * got / len(t):.0f}%")
            cells.append(f"{100 * pred:.0f}%")
        hi_s = f"{hi * 100:.0f}%" if hi < 1 else "more"
        print(f"| {lo * 100:.0f}%–{hi_s} | {len(keys)} | " + " | ".join(cells) + " |")
    print()
    for name, col in (("plain", 4), ("confirmed", 5)):
        o = sum(1 for x in trials if x[col])
        print(f"another case called, {name}: {o} of {len(trials)} slowed trials "
              f"({100 * o / max(len(trials), 1):.1f}%)")
    print(f"A/A: plain, {sum(1 for a in aa if a[1] == 3)} of {len(aa)} pairs failed the gate; "
          f"confirmed, {sum(1 for a in aa if a[2] == 3)}; a gate measured C for "
          f"{sum(1 for a in aa if a[1] == 3)} of {len(aa)} runs B")
    for j, _, _, p, _ in aa:
        if p:
            print(f"  B = run {j}, C = run {j + 1}: " + "; ".join(p))


if __name__ == "__main__":
    main()
