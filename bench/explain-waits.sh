#!/usr/bin/env bash
# The wake-ups of a round trip under each wait, from the kernel's own events:
# `ipcperf latency MECH --wait WAIT --pin 0,1 --explain` for unix, tcp and pipe
# with block, poll and epoll, at the machine's idle and at polling idle, in
# interleaved rounds. Each row: the untraced p50 (µs), the wake-ups asked
# (sched_waking) a round trip, the share of round trips whose client was woken
# before the server's reply call (early: the Unix stream reader frees room and
# wakes the writer's side), the share of there-and-backs with a side asleep
# when its message came, and the context switches a round trip (both sides,
# the kernel's accounting over the timed series); medians over the rounds.
#
#   bench/explain-waits.sh        # ROUNDS=3 COUNT=2000 SIZE=64
#
# Needs root (tracing; polling idle) and two CPUs, python3. Keeps nothing.
export IPCPERF_NO_SAVE=1
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
COUNT=${COUNT:-2000}
SIZE=${SIZE:-64}
BIN=${IPCPERF:-target/release/ipcperf}
[ -x "$BIN" ] || cargo build --release -q -p ipcperf
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "explain-waits: $ROUNDS rounds, $COUNT round trips of $SIZE B, pins 0,1, idle driver $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)"
for r in $(seq 1 "$ROUNDS"); do
    for idle in as-is poll; do
        for m in unix tcp pipe; do
            "$BIN" latency "$m" --wait block,poll,epoll --pin 0,1 --sizes "$SIZE" -n "$COUNT" -r 1 \
                --mode processes --idle "$idle" --explain --format json 2>/dev/null |
                python3 -c '
import json, sys
r, idle = sys.argv[1], sys.argv[2]
for c in json.load(sys.stdin)["cases"]:
    x = c.get("explain")
    if c["status"] != "ok" or not x:
        continue
    s = c["series"][0]
    sw = (s["writer_counts"]["voluntary_switches"] + s["reader_counts"]["voluntary_switches"]
          + s["writer_counts"]["involuntary_switches"] + s["reader_counts"]["involuntary_switches"]) / s["blocks"]
    print(r, idle, c["mechanism"], c["wait"], c["p50_ns"] / 1e3, x.get("wakings_per_round_trip", "n/a"),
          x.get("early_wake_share", "n/a"), x["woken_share"], sw)' "$r" "$idle" | tee -a "$out"
        done
    done
done
echo
python3 - "$out" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    r, idle, m, w, p50, wk, early, woken, sw = line.split()
    rows.setdefault((idle, m, w), []).append(tuple(float(x) for x in (p50, wk, early, woken, sw)))
print("| idle | mechanism | wait | p50 µs (untraced) | wake-ups asked a round trip | client woken early | a side asleep (there-and-backs) | switches a round trip |")
print("|---|---|---|---|---|---|---|---|")
order = {"block": 0, "poll": 1, "epoll": 2}
for (idle, m, w), v in sorted(rows.items(), key=lambda k: (k[0][0], k[0][1], order[k[0][2]])):
    med = [statistics.median(x[i] for x in v) for i in range(5)]
    rng = lambda i: "%.2f–%.2f" % (min(x[i] for x in v), max(x[i] for x in v))
    print("| %s | %s | %s | %.1f (%s) | %.2f (%s) | %.0f%% | %.0f%% | %.2f (%s) |" % (
        idle, m, w, med[0], rng(0), med[1], rng(1), 100 * med[2], 100 * med[3], med[4], rng(4)))
EOF
