#!/usr/bin/env python3
"""Summarize bench/before-after.sh's outputs: every ratio the peer benchmarks
printed (ipcperf against a reference measured in the same round), for the old and
the new binary in each round, and new/old of their medians over the rounds.
A refactoring moved nothing when new/old stays within the old rounds' own spread.

    python3 bench/before-after-summary.py OUTDIR [SCRIPT]
"""
import glob, os, re, statistics, sys

out = sys.argv[1]
script = sys.argv[2] if len(sys.argv) > 2 else "compare"
vals = {}  # metric -> side -> [values]
order = []
for path in sorted(glob.glob(os.path.join(out, f"{script}.*.*"))):
    side = path.rsplit(".", 2)[-2]
    section = ""
    head = ""
    for line in open(path, errors="replace"):
        line = line.rstrip()
        if line.startswith("== "):
            section = line[3:].split(",")[0][:34]
            continue
        # the peers' table: a row's peer and case, then its statistic and figures
        m = re.match(r"^ {4}(\S.*?)\s+ipcperf\s+\S+\s+peer\s+\S+\s+ratio\s+(\d+\.\d+)", line)
        if m and head:
            key = f"table: {head} / {m.group(1)}"
            val = float(m.group(2))
        elif line and not line[0].isspace() and ":" not in line and not line.startswith("#"):
            head = re.sub(r"\s+", " ", line)
            continue
        else:
            m = re.match(r"^\s*(.*?):\s+median\s+([\d.]+)", line)
            if not m:
                continue
            key = f"{section}: {m.group(1)}" if section else m.group(1)
            val = float(m.group(2))
        if key not in vals:
            vals[key] = {"old": [], "new": []}
            order.append(key)
        vals[key][side].append(val)

print(f"{'ratio (ipcperf / reference, as the script prints it)':<78} {'old rounds':>15} {'new rounds':>15} {'new/old':>8}")
for k in order:
    o, n = vals[k]["old"], vals[k]["new"]
    if not o or not n:
        continue
    mo, mn = statistics.median(o), statistics.median(n)
    ratio = mn / mo if mo else float("nan")
    spread = (max(o) - min(o)) / mo if mo else float("nan")
    fmt = lambda v: "/".join(f"{x:.3g}" for x in v)
    print(f"{k[:78]:<78} {fmt(o):>15} {fmt(n):>15} {ratio:>8.3f}  (old spread {spread:.0%})")
