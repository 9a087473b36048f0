#!/usr/bin/env bash
# A conversation on two pipes (issue 47), release build: the program of
# crates/ipcperf/tests/programs/conv.c sends 400 requests of 100 B on one pipe,
# each ~2.4 ms after the last answer, and reads each 300 B answer from a second
# pipe before the next; traced by strace -f -ttt -yy. Then:
#  1. `ipcperf pattern`: the conversations found (target: 1, 400 + 400 messages);
#  2. `ipcperf replay` over pipe, unix and shm, both sides on one CPU (0,0) and
#     across two (0,1), rounds interleaved (every mechanism and placement once a
#     round): messages each way per pass, the schedule kept (median and range),
#     late sends (> 1 ms) and p99 latency from when due.
#
#   bench/replay/conversation.sh [--rounds K] [--bin PATH] [--count N] [--gap-us U]
#
# Target: 400 messages each way per pass, kept >= 99% for all six cases.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=3 bin="" count=400 gap=2400
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --gap-us) gap=$2; shift 2 ;;
    *) echo "usage: $0 [--rounds K] [--bin PATH] [--count N] [--gap-us U]" >&2; exit 2 ;;
  esac
done
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release -q -p ipcperf)
  bin="$root/target/release/ipcperf"
fi
command -v strace >/dev/null && command -v cc >/dev/null ||
  { echo "needs strace and cc (Debian: strace gcc)" >&2; exit 1; }
work=$(mktemp -d /tmp/ipcperf-conversation.XXXXXX)
trap 'rm -rf "$work"' EXIT
export IPCPERF_NO_SAVE=1

cc -O1 -o "$work/conv" "$root/crates/ipcperf/tests/programs/conv.c"
strace -f -ttt -yy -e trace=read,write -o "$work/two-pipes.trace" "$work/conv" pipes "$count" "$gap"
echo "== ipcperf pattern (the program: $count requests, ${gap} µs before each)"
"$bin" pattern "$work/two-pipes.trace"
echo

echo "== ipcperf replay, $rounds rounds interleaved"
for k in $(seq "$rounds"); do
  for pin in 0,0 0,1; do
    for m in pipe unix shm; do
      "$bin" replay "$work/two-pipes.trace" "$m" --pin "$pin" -r 1 --format json \
        > "$work/r-$k-$pin-$m.json" 2>/dev/null
    done
  done
done
python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
print(f"{'mechanism':<9} {'CPUs':<4} {'A→B':>5} {'B→A':>5} {'kept median':>12} {'range':>17}"
      f" {'late':>5} {'p99 µs':>8}")
for pin in ["0,0", "0,1"]:
    for m in ["pipe", "unix", "shm"]:
        kept, late, p99, ab, ba = [], [], [], set(), set()
        for k in range(1, rounds + 1):
            c = json.load(open(f"{work}/r-{k}-{pin}-{m}.json"))["cases"][0]
            r = c["replay"]
            kept.append(r["kept"][0] * 100)
            late.append(r["late_sends"])
            p99.append(c["p99_ns"] / 1e3)
            ab.add(r["a_to_b"]); ba.add(r["b_to_a"])
        print(f"{m:<9} {pin:<4} {'/'.join(map(str, sorted(ab))):>5} "
              f"{'/'.join(map(str, sorted(ba))):>5} {statistics.median(kept):>11.2f}% "
              f"{min(kept):>7.2f}–{max(kept):.2f}% {max(late):>5} {statistics.median(p99):>8.1f}")
PY
