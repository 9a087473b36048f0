#!/usr/bin/env bash
# How heavy the tails of run-to-run moves are on a machine, and what they cost
# any rule that judges one run against earlier ones, even one that knew each
# case's spread (issue 55's false-call target against its power target): the
# default suites that bench/verdicts/power.sh judges, read as they are, no
# ipcperf rule used (bench/verdicts/tails.py says what it prints).
#
#   bench/verdicts/tails.sh --from DIR [--k K]
#
# DIR holds run1.json .. runN.json (`ipcperf export`): `power.sh --keep DIR`
# or bench/device16.sh keeps them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
k=5 from=""
while [ $# -gt 0 ]; do
  case "$1" in
    --k) k=$2; shift 2 ;;
    --from) from=$2; shift 2 ;;
    *) echo "usage: $0 --from DIR [--k K]" >&2; exit 2 ;;
  esac
done
[ -n "$from" ] && [ -f "$from/run$((k + 2)).json" ] ||
  { echo "$0: --from DIR with run1.json .. run$((k + 2)).json or more" >&2; exit 2; }
echo "== default suites measured back to back beforehand ($from)"
python3 "$here/tails.py" "$from" "$k"
