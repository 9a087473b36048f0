#!/usr/bin/env bash
# Does a figure turn on where the process's stack begins? memcpy 64 B (one
# thread copying a 64-byte block, the suite's fastest loop) measured with the
# stack moved 8 bytes at a time over a page: address randomization off
# (`setarch -R`), the environment padded by PAD bytes, so each position is
# one a process can start at. Each binary given and the C floor
# (bench/floor/suite-cases.c: the same copy, a register barrier), built as C
# calls memcpy (through the PLT) and as Rust does (through the GOT,
# -fno-plt), are measured at every position in turn: all see the same machine.
#
#   bench/memcpy-stack.sh [BINARY...]     # default target/release/ipcperf; STEP=8
#
# Prints, for each: positions, the median GB/s, min and max, how many
# positions ran below 0.9x its median, and the median by PAD modulo 64 (where
# in a cache line a store the loop makes to the stack falls).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v setarch >/dev/null || { echo "needs setarch (util-linux)" >&2; exit 2; }
[ $# -gt 0 ] || set -- target/release/ipcperf
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/floor" bench/floor/suite-cases.c
cc -O2 -fno-plt -o "$work/floor-got" bench/floor/suite-cases.c
STEP=${STEP:-8} WORK="$work" python3 - "$@" <<'PY'
import json, os, statistics, subprocess, sys
bins = sys.argv[1:]
step = int(os.environ["STEP"])
floors = {"C floor": "floor", "C floor -fno-plt": "floor-got"}
rates = {b: [] for b in bins + list(floors)}
for pad in range(0, 4096, step):
    env = {"PATH": os.environ["PATH"], "PAD": "x" * pad}
    for b in bins:
        r = subprocess.run(["setarch", "-R", b, "run", "memcpy", "--sizes", "64", "-r", "3",
                            "-d", "30ms", "--no-save", "--format", "json", "-q"],
                           env=env, capture_output=True, text=True, check=True)
        rates[b].append((pad, json.loads(r.stdout)["cases"][0]["median_bytes_per_sec"] / 1e9))
    for name, exe in floors.items():
        r = subprocess.run(["setarch", "-R", os.path.join(os.environ["WORK"], exe), "memcpy", "64",
                            "20000000", "3", "0"], env=env, capture_output=True, text=True, check=True)
        rates[name].append((pad, statistics.median(float(x) for x in r.stdout.split()) / 1e9))
    print(f"\r  position {pad + step}/4096", end="\r", file=sys.stderr, flush=True)
print(f"memcpy 64 B on CPU 0, the stack moved {step} bytes at a time over a page:")
for name, pts in rates.items():
    v = [r for _, r in pts]
    m = statistics.median(v)
    slow = [p for p, r in pts if r < 0.9 * m]
    print(f"{name}: {len(v)} positions, median {m:.1f} GB/s (min {min(v):.1f}, max {max(v):.1f});"
          f" below 0.9x its median at {len(slow)} of {len(v)} positions")
    band = {}
    for p, r in pts:
        band.setdefault(p % 64 // 16 * 16, []).append(r)
    print("  by PAD mod 64: " + ", ".join(
        f"{k}-{k + 15}: {statistics.median(b):.1f}" for k, b in sorted(band.items())))
PY
