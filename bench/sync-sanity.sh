#!/usr/bin/env bash
# Sanity of `ipcperf sync` (issue 4 targets), as ratios measured side by side in one run:
#   1. uncontended posix-sem, mutex and futex request/release (no syscall on the fast
#      path) run at >= 10x the rate of sysv-sem (a syscall per operation);
#   2. set/clear through futex between two processes is within 0.5x-2x of the pipe
#      round trip (a one-byte token over two pipes, the `pipe` row) of the same run.
# Each run is one `ipcperf sync` invocation; the script repeats it RUNS times and
# prints every run's ratios and their spread (the machine is shared and noisy).
#
# Usage: bench/sync-sanity.sh [RUNS] [DURATION]     (defaults: 3 runs, 300ms series)
# Benchmarks keep nothing in the run history.
export IPCPERF_NO_SAVE=1
set -euo pipefail
RUNS=${1:-3}
DURATION=${2:-300ms}
cd "$(dirname "$0")/.."
cargo build --release --quiet
BIN=target/release/ipcperf

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq 1 "$RUNS"); do
  "$BIN" sync sysv-sem posix-sem mutex futex pipe --mode processes \
    --duration "$DURATION" --format json >"$tmp/run$i.json"
done

python3 - "$tmp" "$RUNS" <<'PY'
import json, sys, statistics as st
tmp, runs = sys.argv[1], int(sys.argv[2])
rows = []
for i in range(1, runs + 1):
    d = json.load(open(f"{tmp}/run{i}.json"))
    by = {c["sync"]["primitive"]: c for c in d["cases"]}
    def get(p, k):
        c = by[p]
        if c["status"] != "ok":
            sys.exit(f"run {i}: {p} {c['status']}: {c.get('message')}")
        v = c["sync"][k]
        if v is None:
            sys.exit(f"run {i}: {p} {k}: no figure ({c['sync'].get(k.replace('_per_sec','_note'))})")
        return v
    sysv = get("sysv-sem", "request_release_per_sec")
    r = {
        "posix-sem/sysv-sem r/r": get("posix-sem", "request_release_per_sec") / sysv,
        "mutex/sysv-sem r/r": get("mutex", "request_release_per_sec") / sysv,
        "futex/sysv-sem r/r": get("futex", "request_release_per_sec") / sysv,
        # set/clear rate of futex over the pipe's: both are a wake-up each way.
        "futex/pipe set/clear": get("futex", "set_clear_per_sec") / get("pipe", "set_clear_per_sec"),
    }
    raw = {p: (by[p]["sync"]["request_release_per_sec"], by[p]["sync"]["set_clear_per_sec"]) for p in by}
    print(f"run {i}: " + "  ".join(f"{p} r/r={a and f'{a/1e6:.2f}M' or '-'} s/c={b and f'{b/1e3:.1f}k' or '-'}" for p, (a, b) in raw.items()))
    rows.append(r)

print()
targets = {
    "posix-sem/sysv-sem r/r": (10, None),
    "mutex/sysv-sem r/r": (10, None),
    "futex/sysv-sem r/r": (10, None),
    "futex/pipe set/clear": (0.5, 2.0),
}
ok_all = True
print(f"{'ratio':<24} {'per run':<30} {'median':>8}  {'target':<12} verdict")
for k, (lo, hi) in targets.items():
    vals = [r[k] for r in rows]
    med = st.median(vals)
    tgt = f">= {lo}x" if hi is None else f"{lo}x-{hi}x"
    ok = med >= lo and (hi is None or med <= hi)
    every = all(v >= lo and (hi is None or v <= hi) for v in vals)
    ok_all &= ok
    verdict = ("met" if ok else "NOT MET") + ("" if every == ok else " (not in every run)")
    print(f"{k:<24} {' '.join(f'{v:.2f}' for v in vals):<30} {med:>8.2f}  {tgt:<12} {verdict}")
sys.exit(0 if ok_all else 1)
PY
