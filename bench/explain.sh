#!/usr/bin/env bash
# `latency --explain` (issue 44), release build, as root: for every mechanism
# the issue names, across CPUs and on one CPU, the median of the parts' sum
# against the traced round trip's median (target: within 10%), tracing's cost
# (traced over untraced median; target <= 1.15 for a cross-CPU pipe), the share
# of wake-ups seen, and how long the run took against the same run without
# --explain (target <= 2x). One run each; interleave by running it again.
#
#   bench/explain.sh [--bin PATH] [--pin A,B] [--one CPU]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin="" pin="0,1" one="0"
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --pin) pin=$2; shift 2 ;;
    --one) one=$2; shift 2 ;;
    *) echo "usage: $0 [--bin PATH] [--pin A,B] [--one CPU]" >&2; exit 2 ;;
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
for where in "$pin" "$one,$one"; do
  for mode in processes threads; do
    t0=$(date +%s.%N)
    "$bin" latency $mechs --pin "$where" --mode "$mode" -n 2000 -r 3 -q >/dev/null 2>&1 || true
    t1=$(date +%s.%N)
    "$bin" latency $mechs --pin "$where" --mode "$mode" -n 2000 -r 3 --explain --format json \
      >"$work/x.json" 2>/dev/null || true
    t2=$(date +%s.%N)
    echo "== --pin $where, $mode: run with --explain took $(python3 -c "print(f'{($t2-$t1)/($t1-$t0):.2f}')")x the run without"
    # shm's other four ways to wake the other side (futex is in the list above).
    "$bin" latency shm --wake spin,eventfd,sem,adaptive --pin "$where" --mode "$mode" \
      -n 2000 -r 3 --explain --format json >"$work/w.json" 2>/dev/null || true
    python3 - "$work/x.json" "$work/w.json" <<'PY'
import json, sys
print(f"{'mechanism':15} {'wait':8} {'sum/traced':>10} {'traced/untraced':>15} {'woken':>6} {'unseen':>7}  largest parts (median µs)")
cases = []
for f in sys.argv[1:]:
    try:
        cases += json.load(open(f))["cases"]
    except (OSError, ValueError):
        pass
for c in cases:
    x = c.get("explain")
    if not x:
        print(f"{c['mechanism']:15} {c['wait']:8} not traced: {c['options'].get('explain_not_traced') or c.get('message')}")
        continue
    ratio = x["sum_median_ns"] / max(x["traced_median_ns"], 1)
    top = sorted(x["parts"], key=lambda p: -p["median_ns"])[:3]
    print(f"{c['mechanism']:15} {c['wait']:8} {ratio:10.3f} {x['overhead_ratio']:15.2f} {x['woken_share']:6.2f} {x['wakeups_unseen']:7d}  "
          + ", ".join(f"{p['name']} {p['median_ns']/1e3:.1f}" for p in top))
PY
  done
done
