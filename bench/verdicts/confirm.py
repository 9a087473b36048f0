#!/usr/bin/env python3
"""What `compare --confirm C` buys a gate, on real, independent runs.

    confirm.py BIN DIR RUNS K [JOBS] [--again]

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

With --again, each call is held both to DIR's againB.json (the same suite
measured right after B with each case's series back to back, as
`compare --remeasure` measures the cases called: bench/verdicts/remeasure.sh)
and to the next run, each in its own column.
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
    """All trials of run B = j, each C of `c_runs` in turn: (A/A, [slowed trials])."""
    bin_, runs, j, k, sd_keys, c_runs = args
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

        def judged(b, cs):
            """(plain rc, rows), then (rc, rows) held to each C of `cs`: C judged
            only where B called."""
            plain = rows(db_with([b]), False)
            if not any(r["change"] in ("faster", "slower") for r in plain[1]):
                return plain, [plain for _ in cs]
            return plain, [rows(db_with([b, c]), True) for c in cs]

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

        (prc, prows), held = judged(runs[j - 1], c_runs)
        aa = (j, prc, [rc for rc, _ in held], [what_c_did(prows, rs) for _, rs in held])
        trials = []
        for idx, key in enumerate(ident(c) for c in runs[0]["cases"]):
            if key not in sd_keys:
                continue
            for slow in (1.10, 1.25):
                (_, p), cs = judged(slowed(runs[j - 1], idx, slow),
                                    [slowed(c, idx, slow) for c in c_runs])
                other = lambda rs: any(r["change"] in ("faster", "slower")  # noqa: E731
                                       for i, r in enumerate(rs) if i != idx)
                trials.append((list(key), slow, p[idx]["change"] == "slower",
                               [c[idx]["change"] == "slower" for _, c in cs], other(p),
                               [other(c) for _, c in cs]))
        print(f"  B = run {j} judged", file=sys.stderr, flush=True)
        return aa, trials
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    again = "--again" in sys.argv
    argv = [a for a in sys.argv if a != "--again"]
    bin_, dir_, n, k = argv[1], argv[2], int(argv[3]), int(argv[4])
    jobs = int(argv[5]) if len(argv) > 5 else os.cpu_count() or 1
    runs = [json.load(open(os.path.join(dir_, f"run{i}.json"))) for i in range(1, n + 1)]
    # Each B's Cs: the next run, and with --again first B measured again at
    # once; B's range is where every C is there (the next run: up to n - 1).
    names = (["B measured again at once"] if again else []) + ["the next run"]
    cs_of = []
    for j in range(k + 1, n):
        cs = [runs[j]]
        if again:
            cs.insert(0, json.load(open(os.path.join(dir_, f"again{j}.json"))))
        cs_of.append(cs)
    ids = [ident(c) for c in runs[0]["cases"]]
    for cs in cs_of:
        assert all([ident(c) for c in x["cases"]] == ids for x in cs), "case order differs"
    sd = {}
    for idx, key in enumerate(ids):
        logs = [math.log(statistics.median(figure(r["cases"][idx])[0])) for r in runs
                if idx < len(r["cases"]) and ident(r["cases"][idx]) == key
                and r["cases"][idx]["status"] == "ok"]
        if len(logs) == n:
            sd[key] = statistics.stdev(logs)
    work = [(bin_, runs, j, k, set(sd), cs_of[j - k - 1]) for j in range(k + 1, n)]
    with multiprocessing.Pool(jobs) as pool:
        out = pool.map(judge_b, work)
    aa = [a for a, _ in out]
    trials = [(tuple(t[0]),) + tuple(t[1:]) for _, ts in out for t in ts]
    m = len(sd)
    z = statistics.NormalDist().inv_cdf(1 - 0.05 / (2 * m))
    sds = sorted(sd.values())
    print(f"{n} default suites; B = runs {k + 1}..{n - 1} against the {k} run(s) before it, "
          f"C = {' or '.join(names)}; {m} cases, run-to-run sd quartiles "
          f"{100 * sds[m // 4]:.2f}% {100 * sds[m // 2]:.2f}% {100 * sds[3 * m // 4]:.2f}%")
    # A machine that moves as a whole for minutes moves B and C alike: C
    # holds such calls (compare's whole-run line names them).
    common_shift(runs, ids, sd)
    print()
    heads = "".join(f" | held to {nm}" for nm in names)
    print(f"| run-to-run sd | cases | slowed 10%: plain{heads} | (limit) | slowed 25%: plain{heads} "
          "| (limit) |")
    print("|---|---|" + "---|" * (2 * (len(names) + 2)))
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
            for got in [sum(1 for x in t if x[2])] + [
                    sum(1 for x in t if x[3][ci]) for ci in range(len(names))]:
                cells.append(f"{got}/{len(t)} = {100 * got / len(t):.0f}%")
            cells.append(f"{100 * pred:.0f}%")
        hi_s = f"{hi * 100:.0f}%" if hi < 1 else "more"
        print(f"| {lo * 100:.0f}%–{hi_s} | {len(keys)} | " + " | ".join(cells) + " |")
    print()
    o = sum(1 for x in trials if x[4])
    print(f"another case called, plain: {o} of {len(trials)} slowed trials "
          f"({100 * o / max(len(trials), 1):.1f}%)")
    for ci, nm in enumerate(names):
        o = sum(1 for x in trials if x[5][ci])
        print(f"another case called, held to {nm}: {o} of {len(trials)} slowed trials "
              f"({100 * o / max(len(trials), 1):.1f}%)")
    print(f"A/A: plain, {sum(1 for a in aa if a[1] == 3)} of {len(aa)} pairs failed the gate; "
          + "; ".join(f"held to {nm}, {sum(1 for a in aa if a[2][ci] == 3)}"
                      for ci, nm in enumerate(names))
          + f"; a gate measured C for {sum(1 for a in aa if a[1] == 3)} of {len(aa)} runs B")
    for j, _, _, said in aa:
        for ci, nm in enumerate(names):
            if said[ci]:
                print(f"  B = run {j}, C = {nm}: " + "; ".join(said[ci]))


if __name__ == "__main__":
    main()
