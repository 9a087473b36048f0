#!/usr/bin/env bash
# How steady a Unix stream round trip is under each wait: `ipcperf latency unix
# --wait block,poll,epoll --pin 0,1 -r SERIES` at polling idle (and at the
# machine's idle), and for each case the standard deviation of its series' p50s
# over their median (the figure `compare` and the noisy flag judge by), in
# ROUNDS runs; tcp and pipe beside it. A blocking Unix stream reader is woken
# early by the other side's read (bench/explain-waits.sh), and whether that
# wake-up wins the race decides which of two modes a series lands in.
#
#   bench/wait-spread.sh          # ROUNDS=3 SERIES=10 D=200ms SIZE=64
#
# Needs root (polling idle), two CPUs, python3. Keeps nothing.
export IPCPERF_NO_SAVE=1
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
SERIES=${SERIES:-10}
D=${D:-200ms}
SIZE=${SIZE:-64}
BIN=${IPCPERF:-target/release/ipcperf}
[ -x "$BIN" ] || cargo build --release -q -p ipcperf
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "wait-spread: $ROUNDS rounds of $SERIES series of $D, $SIZE B, pins 0,1"
for r in $(seq 1 "$ROUNDS"); do
    for idle in poll as-is; do
        "$BIN" latency unix tcp pipe --wait block,poll,epoll --pin 0,1 --sizes "$SIZE" -d "$D" \
            -r "$SERIES" --mode processes --idle "$idle" --format json 2>/dev/null |
            python3 -c '
import json, statistics, sys
r, idle = sys.argv[1], sys.argv[2]
for c in json.load(sys.stdin)["cases"]:
    if c["status"] != "ok":
        continue
    p = [x / 1e3 for x in c["series_p50_ns"]]
    m = statistics.median(p)
    print(r, idle, c["mechanism"], c["wait"], "%.2f" % m, "%.2f" % min(p), "%.2f" % max(p),
          "%.4f" % (statistics.stdev(p) / m))' "$r" "$idle" | tee -a "$out"
    done
done
echo
python3 - "$out" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    r, idle, m, w, med, lo, hi, rel = line.split()
    rows.setdefault((idle, m, w), []).append((float(med), float(lo), float(hi), float(rel)))
print("| idle | mechanism | wait | series p50s: median µs (lowest–highest over all) | sd / median, each round | at most 8% |")
print("|---|---|---|---|---|---|")
order = {"block": 0, "poll": 1, "epoll": 2}
for (idle, m, w), v in sorted(rows.items(), key=lambda k: (k[0][0] != "poll", k[0][1], order[k[0][2]])):
    rels = [x[3] for x in v]
    print("| %s | %s | %s | %.2f (%.2f–%.2f) | %s | %s |" % (
        idle, m, w, statistics.median(x[0] for x in v), min(x[1] for x in v), max(x[2] for x in v),
        ", ".join("%.1f%%" % (100 * x) for x in rels), "yes" if max(rels) <= 0.08 else "no"))
EOF
