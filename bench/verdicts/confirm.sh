#!/usr/bin/env bash
# What `compare --confirm C` buys a gate (issue 55's false calls): each run B of
# DIR's default suites compared with the K runs before it, plain and with the
# next run as C, on real, independent runs: the slowed case called, another
# case called, A/A pairs failing the gate (bench/verdicts/confirm.py says how).
#
#   bench/verdicts/confirm.sh --from DIR [--k K] [--bin PATH] [--again]
#
# DIR holds run1.json .. runN.json (`ipcperf export`): `power.sh --keep DIR`
# or bench/device16.sh keeps them. --again: C of run B is DIR's againB.json,
# B measured again at once (bench/verdicts/remeasure.sh keeps them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
k=5 from="" bin="" again=""
while [ $# -gt 0 ]; do
  case "$1" in
    --k) k=$2; shift 2 ;;
    --from) from=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --again) again=--again; shift ;;
    *) echo "usage: $0 --from DIR [--k K] [--bin PATH] [--again]" >&2; exit 2 ;;
  esac
done
[ -n "$from" ] && [ -f "$from/run$((k + 2)).json" ] ||
  { echo "$0: --from DIR with run1.json .. run$((k + 2)).json or more" >&2; exit 2; }
runs=0
while [ -f "$from/run$((runs + 1)).json" ]; do runs=$((runs + 1)); done
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release -q -p ipcperf)
  bin="$root/target/release/ipcperf"
fi
echo "== $runs default suites measured back to back beforehand ($from)"
python3 "$here/confirm.py" "$bin" "$from" "$runs" "$k" ${again:+"$(nproc)"} $again
