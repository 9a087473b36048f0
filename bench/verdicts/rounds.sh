#!/usr/bin/env bash
# What more series in a run buy a verdict (issue 55, item 4): ROUNDS rounds, each
# a default suite (5 series a case) and one with `-r 10` (10 series, each as
# long: twice the time), in an order that turns each round; then
# bench/verdicts/rounds.py compares each case's run-to-run spread with 5 and
# with 10 series, and the limit compare's history rule gives each. Keep the
# machine otherwise idle.
#
#   bench/verdicts/rounds.sh [--rounds N] [--bin PATH]
#   bench/verdicts/rounds.sh --from DIR        # aN.json / bN.json measured elsewhere
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=5 bin="" from=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --from) from=$2; shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--bin PATH] [--from DIR]" >&2; exit 2 ;;
  esac
done
if [ -n "$from" ]; then
  python3 "$here/rounds.py" "$from"
  exit
fi
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release -q -p ipcperf)
  bin="$root/target/release/ipcperf"
fi
work=$(mktemp -d /tmp/ipcperf-rounds.XXXXXX)
trap 'rm -rf "$work"' EXIT
five() { "$bin" -q run --no-save --format json >"$work/a$1.json"; }
ten() { "$bin" -q run -r 10 --no-save --format json >"$work/b$1.json"; }
for i in $(seq "$rounds"); do
  if ((i % 2)); then five "$i"; ten "$i"; else ten "$i"; five "$i"; fi
  echo "  round $i done"
done
python3 "$here/rounds.py" "$work"
