#!/usr/bin/env bash
# Would another way of borrowing strength across the cases call more (issue 55,
# item 1)? compare's history rule emulated on kept default suites with six ways
# of estimating each case's run-to-run variance, from the one no rule can have
# (each case's spread over all the runs) to nonparametric priors
# (bench/verdicts/shrink.py says which and how). No ipcperf run; python3 alone.
#
#   bench/verdicts/shrink.sh [--k K] --from DIR [--from DIR ...]
#
# DIR holds run1.json .. runN.json (`ipcperf export`): `power.sh --keep DIR`
# or bench/device16.sh keeps them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
k=5 dirs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --k) k=$2; shift 2 ;;
    --from) dirs+=("$2"); shift 2 ;;
    *) echo "usage: $0 [--k K] --from DIR [--from DIR ...]" >&2; exit 2 ;;
  esac
done
[ "${#dirs[@]}" -gt 0 ] || { echo "usage: $0 [--k K] --from DIR [--from DIR ...]" >&2; exit 2; }
for d in "${dirs[@]}"; do
  [ -f "$d/run$((k + 2)).json" ] || { echo "$0: $d: no run$((k + 2)).json (want run1.json .. runN.json, N > K + 1)" >&2; exit 2; }
done
python3 "$here/shrink.py" "$k" "${dirs[@]}"
