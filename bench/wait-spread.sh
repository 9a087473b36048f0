#!/usr/bin/env bash
# How steady a Unix stream round trip is under each wait: `ipcperf latency unix
# --wait block,poll,epoll --pin 0,1 -r SERIES` at polling idle (and at the
# machine's idle), and for each case the standard deviation of its series' p50s
# over their median (the figure `compare` and the noisy flag judge by), in
# ROUNDS runs; tcp and pipe beside it. A blocking Unix stream reader is woken
# early by the other side's read (bench/explain-waits.sh), and whether that
# wake-up wins the race decides which of two modes a series lands in.
# Beside each case, its floor (FLOOR=1, the default): bench/floor/wait-rtt.c
# making the same calls, SERIES series on one connection of as many round trips
# as ipcperf's series held in that round, at the same idle (polling: the C loop
# with /dev/cpu_dma_latency held at 0), right after ipcperf: a spread the C
# loop shows too is the machine's, not ipcperf's.
#
#   bench/wait-spread.sh          # ROUNDS=3 SERIES=10 D=200ms SIZE=64 IDLES="poll as-is"
#
# Needs root (polling idle), two CPUs, python3, cc. Keeps nothing.
export IPCPERF_NO_SAVE=1
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
SERIES=${SERIES:-10}
D=${D:-200ms}
SIZE=${SIZE:-64}
IDLES=${IDLES:-poll as-is}
FLOOR=${FLOOR:-1}
BIN=${IPCPERF:-target/release/ipcperf}
[ -x "$BIN" ] || cargo build --release -q -p ipcperf
# shellcheck source=bench/lib.sh
. bench/lib.sh
work=$(mktemp -d)
out=$work/rows
trap 'rm -rf "$work"' EXIT
[ "$FLOOR" = 0 ] || cc -O2 -o "$work/wait-rtt" bench/floor/wait-rtt.c
secs=$(python3 -c 'import sys; d = sys.argv[1]; print(float(d[:-2]) / 1e3 if d.endswith("ms") else float(d.rstrip("s")))' "$D")
echo "wait-spread: $ROUNDS rounds of $SERIES series of $D, $SIZE B, pins 0,1$([ "$FLOOR" = 0 ] || echo ", each beside its C floor (C: rows)")"
for r in $(seq 1 "$ROUNDS"); do
    for idle in $IDLES; do
        : > "$work/round"
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
          "%.4f" % (statistics.stdev(p) / m))' "$r" "$idle" | tee -a "$out" "$work/round" >/dev/null
        [ "$FLOOR" = 0 ] && continue
        [ "$idle" != poll ] || hold_poll
        while read -r _ _ m w med _; do
            # as many round trips a series as ipcperf's held, a tenth more for the warm-up
            n=$(python3 -c 'import sys; s, d, k = map(float, sys.argv[1:]); print(int(k * d / (s * 1e-6) / 0.9))' "$med" "$secs" "$SERIES")
            SERIES=$SERIES timeout 120 "$work/wait-rtt" "$m" "$w" 0 1 "$n" "$SIZE" |
                python3 -c '
import statistics, sys
r, idle, m, w = sys.argv[1:]
p = [int(x) / 1e3 for x in sys.stdin.read().split()]
if len(p) > 1:
    md = statistics.median(p)
    print(r, idle, "C:" + m, w, "%.2f" % md, "%.2f" % min(p), "%.2f" % max(p),
          "%.4f" % (statistics.stdev(p) / md))' "$r" "$idle" "$m" "$w" >> "$out" || true
        done < "$work/round"
        release_hold
    done
done
cat "$out"
echo
python3 - "$out" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    r, idle, m, w, med, lo, hi, rel = line.split()
    rows.setdefault((idle, m, w), []).append((float(med), float(lo), float(hi), float(rel)))
print("| idle | mechanism (C: its floor) | wait | series p50s: median µs (lowest–highest over all) | sd / median, each round | at most 8% |")
print("|---|---|---|---|---|---|")
order = {"block": 0, "poll": 1, "epoll": 2}
for (idle, m, w), v in sorted(rows.items(), key=lambda k: (k[0][0] != "poll", k[0][1].removeprefix("C:"), order[k[0][2]], k[0][1][:2] == "C:")):
    rels = [x[3] for x in v]
    print("| %s | %s | %s | %.2f (%.2f–%.2f) | %s | %s |" % (
        idle, m, w, statistics.median(x[0] for x in v), min(x[1] for x in v), max(x[2] for x in v),
        ", ".join("%.1f%%" % (100 * x) for x in rels), "yes" if max(rels) <= 0.08 else "no"))
EOF
