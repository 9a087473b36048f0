#!/usr/bin/env bash
# trend's newest-run verdict on real runs (issue 55, point 6: a night against
# the host's own runs, by compare's variance model). RUNS default suites back to
# back (or a history kept before, --from DB), then bench/verdicts/newest.py takes
# each run from the FIRST-th on as the newest night, its history cut after it:
# what trend calls as it stands (A/A), and with one case slowed by 10% and by
# 25%, binned by the case's run-to-run spread beside the power the limit
# predicts. Keep the machine otherwise idle while it measures.
#
#   bench/verdicts/newest.sh [--runs N] [--first F] [--bin PATH] [--keep DB]
#   bench/verdicts/newest.sh --from DB [--first F] [--bin PATH]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=30 first=6 bin="" from="" keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --first) first=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --from) from=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--first F] [--bin PATH] [--keep DB] | --from DB [--first F] [--bin PATH]" >&2; exit 2 ;;
  esac
done
[ "$first" -ge 3 ] || { echo "$0: --first must be 3 or more (two runs before the newest at least)" >&2; exit 2; }
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release -q -p ipcperf)
  bin="$root/target/release/ipcperf"
fi
if [ -z "$from" ]; then
  [ "$runs" -ge "$first" ] || { echo "$0: --runs must be at least --first" >&2; exit 2; }
  from=${keep:-$(mktemp -d /tmp/ipcperf-newest.XXXXXX)/h.db}
  echo "== $runs default suites back to back into $from"
  for k in $(seq "$runs"); do
    "$bin" run --db "$from" --label "night$k" > /dev/null 2>&1
  done
else
  [ -f "$from" ] || { echo "$0: --from $from: no such history" >&2; exit 2; }
  echo "== runs measured beforehand ($from)"
fi
python3 "$here/newest.py" "$bin" "$from" "$first"
