#!/usr/bin/env bash
# `--explain`'s two tracers side by side (issue 56), release build, as root:
# ROUNDS interleaved rounds of `latency --explain` with `--tracer perf` and with
# `--tracer tracefs` (then one with `auto`), across CPUs, for pipe, unix,
# eventfd and shm's futex wake. Printed per mechanism and tracer, median
# (min-max) over the rounds:
#   seen       of the round trips whose server was woken, the share whose
#              sched_wakeup the tracer saw (target >= 0.99 where the kernel
#              records it);
#   no-switch  wake-ups seen without their switch-in, per wake-up (a secondary
#              CPU's idle task whose switch out the kernel does not write);
#   cost       traced over untraced median round trip;
#   regime     the rounds whose traced series ran in another regime;
#   wake       the server's wake-up part (waking to runnable), µs;
#   return     the server's return from its wait, µs;
# and which tracer `auto` chose, and why.
#
#   bench/explain-tracers.sh [--bin PATH] [--pin A,B] [--rounds N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin="" pin="0,1" rounds=${ROUNDS:-3}
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --pin) pin=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "usage: $0 [--bin PATH] [--pin A,B] [--rounds N]" >&2; exit 2 ;;
  esac
done
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release -q -p ipcperf)
  bin="$root/target/release/ipcperf"
fi
export IPCPERF_NO_SAVE=1
work=$(mktemp -d /tmp/ipcperf-tracers.XXXXXX)
trap 'rm -rf "$work"' EXIT
for r in $(seq "$rounds"); do
  for t in perf tracefs; do
    timeout 300 "$bin" latency pipe unix eventfd --pin "$pin" -n 2000 -r 1 --explain \
      --tracer "$t" --format json >"$work/$t-$r-a.json" 2>/dev/null || true
    timeout 300 "$bin" latency shm --wake futex --pin "$pin" -n 2000 -r 1 --explain \
      --tracer "$t" --format json >"$work/$t-$r-b.json" 2>/dev/null || true
  done
done
timeout 300 "$bin" latency pipe --pin "$pin" -n 2000 -r 1 --explain --tracer auto \
  --format json >"$work/auto.json" 2>/dev/null || true
python3 - "$work" <<'PY'
import glob, json, os, statistics, sys
work = sys.argv[1]
def mr(v, f="{:.2f}"):
    v = sorted(v)
    return (f.format(statistics.median(v)) + " (" + f.format(v[0]) + "-" + f.format(v[-1]) + ")") if v else "n/a"
def load(f):
    try:
        return json.load(open(f))["cases"]
    except (OSError, ValueError, KeyError):
        return []
def part(x, name):
    return next((p["median_ns"] / 1e3 for p in x["parts"] if p["name"] == name), 0.0)
rows = {}
for f in sorted(glob.glob(os.path.join(work, "*-*-*.json"))):
    tracer = os.path.basename(f).split("-")[0]
    for c in load(f):
        key = (c["mechanism"], tracer)
        d = rows.setdefault(key, {"seen": [], "nosw": [], "cost": [], "regime": 0, "n": 0,
                                  "wake": [], "ret": [], "not": None})
        x = c.get("explain")
        if not x:
            d["not"] = c.get("options", {}).get("explain_not_traced") or c.get("message")
            continue
        d["n"] += 1
        if x.get("server_wakeup_seen_share") is not None:
            d["seen"].append(x["server_wakeup_seen_share"])
        woken = max(1.0, 2 * x["round_trips"] * x["woken_share"])
        d["nosw"].append(x.get("switch_ins_unseen", 0) / woken)
        if x.get("overhead_ratio"):
            d["cost"].append(x["overhead_ratio"])
        d["regime"] += 1 if x.get("other_regime") else 0
        d["wake"].append(part(x, "wake"))
        d["ret"].append(part(x, "receive_return"))
print(f"{'mechanism':10} {'tracer':8} {'seen':>18} {'no-switch':>18} {'cost':>18} {'regime':>7} {'wake µs':>18} {'return µs':>18}")
for (mech, tracer) in sorted(rows):
    d = rows[(mech, tracer)]
    if not d["n"]:
        print(f"{mech:10} {tracer:8} not traced: {d['not']}")
        continue
    print(f"{mech:10} {tracer:8} {mr(d['seen']):>18} {mr(d['nosw']):>18} {mr(d['cost']):>18} "
          f"{str(d['regime']) + '/' + str(d['n']):>7} {mr(d['wake']):>18} {mr(d['ret']):>18}")
for c in load(os.path.join(work, "auto.json")):
    x = c.get("explain")
    if x:
        print(f"auto chose {x.get('tracer')}: {x.get('tracer_reason')}")
    else:
        print(f"auto: not traced: {c.get('options', {}).get('explain_not_traced')}")
PY
