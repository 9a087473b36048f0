#!/usr/bin/env bash
# "Why is a 64 KiB pipe slower across CPUs than on one?" answered by
# `run --explain` (issue 56): ROUNDS interleaved rounds of `ipcperf run pipe
# --sizes SIZE --explain` on one CPU (--pin A,A), across CPUs (--pin A,B), and
# across CPUs at polling idle (--idle poll), release build, as root. Printed per
# placement, median (min-max) over the rounds: the throughput, the traced block
# time, each side's parts in µs per block, each side's parts' sum over the
# traced block time (1.00: nothing unexplained), tracing's cost (traced over
# untraced block time), the wake-ups asked a block and the share that sent an
# IPI, and which tracer ran.
#
#   bench/explain-streams.sh [--bin PATH] [--pin A,B] [--rounds N] [--size 64k]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin="" pin="0,1" rounds=${ROUNDS:-3} size=64k
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --pin) pin=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    *) echo "usage: $0 [--bin PATH] [--pin A,B] [--rounds N] [--size 64k]" >&2; exit 2 ;;
  esac
done
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release -q -p ipcperf)
  bin="$root/target/release/ipcperf"
fi
export IPCPERF_NO_SAVE=1
work=$(mktemp -d /tmp/ipcperf-streams.XXXXXX)
trap 'rm -rf "$work"' EXIT
a=${pin%,*}
for r in $(seq "$rounds"); do
  timeout 120 "$bin" -q run pipe --sizes "$size" --pin "$a,$a" --explain -r 3 -d 300ms \
    --format json >"$work/one-cpu-$r.json" 2>"$work/one-cpu-$r.err" || true
  timeout 120 "$bin" -q run pipe --sizes "$size" --pin "$pin" --explain -r 3 -d 300ms \
    --format json >"$work/across-$r.json" 2>"$work/across-$r.err" || true
  timeout 120 "$bin" -q run pipe --sizes "$size" --pin "$pin" --idle poll --explain -r 3 -d 300ms \
    --format json >"$work/across-poll-$r.json" 2>"$work/across-poll-$r.err" || true
done
python3 - "$work" "$pin" "$size" "$rounds" <<'PY'
import glob, json, os, statistics, sys
work, pin, size, rounds = sys.argv[1:5]
def mr(v, f="{:.2f}"):
    v = sorted(v)
    return (f.format(statistics.median(v)) + " (" + f.format(v[0]) + "-" + f.format(v[-1]) + ")") if v else "n/a"
names = {"write_running": "writer: in its write calls, running (copy, locks)",
         "write_asleep": "writer: in its calls, asleep (no room)",
         "write_runnable": "writer: woken, waiting to run",
         "writer_outside": "writer: between its calls",
         "read_running": "reader: in its read calls, running (copy, locks)",
         "read_asleep": "reader: in its calls, asleep (no data)",
         "read_runnable": "reader: woken, waiting to run",
         "reader_outside": "reader: between its calls"}
labels = {"one-cpu": f"one CPU (--pin {pin.split(',')[0]},{pin.split(',')[0]})",
          "across": f"across CPUs (--pin {pin}), the machine's idle",
          "across-poll": f"across CPUs (--pin {pin}), --idle poll"}
print(f"pipe, {size} blocks, processes, {rounds} interleaved rounds, median (min-max)")
for key in ["one-cpu", "across", "across-poll"]:
    mbs, block, cost, wake, ipi, sums, tracers, parts, why = [], [], [], [], [], {"writer": [], "reader": []}, set(), {}, None
    for f in sorted(glob.glob(os.path.join(work, f"{key}-[0-9]*.json"))):
        try:
            c = json.load(open(f))["cases"][0]
        except (OSError, ValueError, KeyError, IndexError):
            # No case: what ipcperf said instead (a refusal's one line).
            err = [l for l in open(f[:-5] + ".err").read().splitlines() if l.strip()]
            why = why or (err[-1] if err else "no output")
            continue
        x = c.get("explain")
        if not x:
            why = c.get("options", {}).get("explain_not_traced") or c.get("message")
            continue
        mbs.append(c["median_bytes_per_sec"] / 1e6)
        t = x["traced_median_ns"]
        block.append(t / 1e3)
        cost.append(x["overhead_ratio"])
        wake.append(x["wakings_per_round_trip"])
        ipi.append(x["ipi_share"])
        tracers.add(x.get("tracer", "?"))
        for p in x["parts"]:
            parts.setdefault(p["name"], []).append(p["mean_ns"] / 1e3)
        for side in sums:
            s = sum(p["mean_ns"] for p in x["parts"]
                    if p["name"].startswith("write" if side == "writer" else "read"))
            sums[side].append(s / t)
    print(f"\n== {labels[key]}")
    if not block:
        print(f"  not traced: {why}")
        continue
    print(f"  throughput                {mr(mbs, '{:.0f}')} MB/s")
    print(f"  traced block              {mr(block)} us")
    for n, label in names.items():
        if n in parts:
            print(f"  {label:<47} {mr(parts[n])} us")
    print(f"  writer's parts / block    {mr(sums['writer'], '{:.3f}')}")
    print(f"  reader's parts / block    {mr(sums['reader'], '{:.3f}')}")
    print(f"  tracing cost              x{mr(cost)}")
    print(f"  wake-ups asked a block    {mr(wake)}; sent an IPI {mr(ipi)}")
    print(f"  tracer                    {', '.join(sorted(tracers))}")
PY
