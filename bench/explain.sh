#!/usr/bin/env bash
# `latency --explain` (issue 44), release build, as root: for every mechanism
# the issue names (and shm's five wakes), across CPUs and on one CPU, in
# processes and in threads, ROUNDS interleaved rounds of a run without
# --explain and one with it. Printed per case, median (min-max) over the rounds:
#   explained  the share of the mean round trip in parts bounded by the
#              kernel's events (not the client's own time before its send and
#              after its wait, not "no kernel event"): how much the events cut;
#   traced/untraced  what tracing costs the round trip (target <= 1.15 for a
#              cross-CPU pipe);
#   woken      the share of wake-ups that happened; unseen: those without a
#              sched_wakeup/switch-in (a kernel that gives perf no idle-task events);
# and per configuration the time of the run with --explain over the one
# without (target <= 2x with the default counts; these runs are short).
#
#   bench/explain.sh [--bin PATH] [--pin A,B] [--one CPU] [--rounds N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin="" pin="0,1" one="0" rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --pin) pin=$2; shift 2 ;;
    --one) one=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "usage: $0 [--bin PATH] [--pin A,B] [--one CPU] [--rounds N]" >&2; exit 2 ;;
  esac
done
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release -q -p ipcperf)
  bin="$root/target/release/ipcperf"
fi
export IPCPERF_NO_SAVE=1
mechs="pipe fifo unix unix-dgram unix-seqpacket tcp udp posix-mq sysv-msg eventfd signal shm"
work=$(mktemp -d /tmp/ipcperf-explain.XXXXXX)
trap 'rm -rf "$work"' EXIT
for r in $(seq "$rounds"); do
  for where in "$pin" "$one,$one"; do
    for mode in processes threads; do
      tag="$where-$mode-$r"
      t0=$(date +%s.%N)
      "$bin" latency $mechs --pin "$where" --mode "$mode" -n 2000 -r 3 -q >/dev/null 2>&1 || true
      t1=$(date +%s.%N)
      "$bin" latency $mechs --pin "$where" --mode "$mode" -n 2000 -r 3 --explain --format json \
        >"$work/x-$tag.json" 2>/dev/null || true
      t2=$(date +%s.%N)
      "$bin" latency shm --wake spin,eventfd,sem,adaptive --pin "$where" --mode "$mode" \
        -n 2000 -r 3 --explain --format json >"$work/w-$tag.json" 2>/dev/null || true
      echo "$where $mode $(python3 -c "print(($t2-$t1)/($t1-$t0))")" >>"$work/time.txt"
    done
  done
done
python3 - "$work" <<'PY'
import glob, json, os, statistics, sys
work = sys.argv[1]
def mr(v):
    v = sorted(v)
    return f"{statistics.median(v):.2f} ({v[0]:.2f}-{v[-1]:.2f})" if v else "n/a"
rows = {}
for f in sorted(glob.glob(os.path.join(work, "[xw]-*.json"))):
    where, mode = os.path.basename(f)[2:-5].rsplit("-", 2)[:2]
    try:
        cases = json.load(open(f))["cases"]
    except (OSError, ValueError):
        continue
    for c in cases:
        x = c.get("explain")
        key = (where, mode, c["mechanism"], c["wait"])
        d = rows.setdefault(key, {"explained": [], "overhead": [], "woken": [], "unseen": [], "not": None})
        if not x:
            d["not"] = c["options"].get("explain_not_traced") or c.get("message")
            continue
        own = sum(p["share"] for p in x["parts"] if p["name"] in ("client_to_send", "client_after", "user_only"))
        d["explained"].append(1 - own)
        d["overhead"].append(x["overhead_ratio"])
        d["woken"].append(x["woken_share"])
        d["unseen"].append(x["wakeups_unseen"] / max(1, 2 * x["round_trips"]))
times = {}
for line in open(os.path.join(work, "time.txt")):
    w, m, t = line.split()
    times.setdefault((w, m), []).append(float(t))
last = None
for key in sorted(rows, key=lambda k: (k[0] != k[0].split(",")[0] + "," + k[0].split(",")[0], k[0], k[1])):
    where, mode, mech, wait = key
    if (where, mode) != last:
        last = (where, mode)
        print(f"== --pin {where}, {mode}: with --explain the run took {mr(times.get(last, []))}x the run without")
        print(f"{'mechanism':15} {'wait':8} {'explained':>18} {'traced/untraced':>18} {'woken':>18} {'unseen':>18}")
    d = rows[key]
    if not d["overhead"]:
        print(f"{mech:15} {wait:8} not traced: {d['not']}")
        continue
    print(f"{mech:15} {wait:8} {mr(d['explained']):>18} {mr(d['overhead']):>18} {mr(d['woken']):>18} {mr(d['unseen']):>18}")
PY
