#!/usr/bin/env bash
# compare's power and false alarms on real, independent runs (issue 55), the
# headline beside bench/verdicts/run.sh's A/A gate: RUNS default suites back to
# back (each saved, exported), then for each later run B, one case at a time
# made 10% and 25% worse in a copy of B, compared with the run before it (k = 1)
# and with a baseline of K runs, each on the history of the runs before B.
# Prints power by run-to-run spread beside the power the limit predicts, false
# calls of the other cases (also by the runs of history before B), A/A gate
# failures, each row's could-call against its limit, the fitted prior and its
# check, and what more series a run would buy (bench/verdicts/power.py says
# how). Keep the machine otherwise idle.
#
#   bench/verdicts/power.sh [--runs N] [--k K] [--bin PATH] [--keep DIR]
#   bench/verdicts/power.sh --from DIR [--k K]   # suites measured elsewhere
#   bench/verdicts/power.sh --history FILE [--k K]  # trials kept by POWER_TRIALS
#
# --from DIR: judge DIR's run1.json .. runN.json (`ipcperf export`, measured
# back to back on another machine, as bench/device16.sh does) instead of
# measuring here; --runs is then how many there are. --keep DIR: keep the
# suites measured here there (run1.json ..), to judge again with --from.
# POWER_TRIALS=FILE in the environment keeps every trial there (JSON), which
# --history FILE reads back: the table by how many runs the history held
# before B, without judging again.
#
# Targets (issue 55): 10% called in >= 80% of trials for cases of spread <= 2%,
# 25% for <= 5% (k = 5); A/A <= 2 of 20 pairs failing; could-call within 1.5x of
# the limit (median); another case called in <= 5% of slowed trials.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=14 k=5 bin="" from="" keep="" history=""
while [ $# -gt 0 ]; do
  case "$1" in
    --history) history=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --k) k=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --from) from=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--k K] [--bin PATH] [--from DIR] [--keep DIR] [--history FILE]" >&2; exit 2 ;;
  esac
done
if [ -n "$history" ]; then
  [ -f "$history" ] || { echo "$0: --history: no such file: $history" >&2; exit 2; }
  exec python3 "$here/power.py" --history "$history" "$k"
fi
if [ -n "$from" ]; then
  runs=0
  while [ -f "$from/run$((runs + 1)).json" ]; do runs=$((runs + 1)); done
fi
[ "$runs" -gt "$((k + 1))" ] || { echo "$0: --runs must exceed --k + 1" >&2; exit 2; }
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release -q -p ipcperf)
  bin="$root/target/release/ipcperf"
fi
work=$(mktemp -d /tmp/ipcperf-power.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ -n "$from" ]; then
  echo "== $runs default suites measured back to back beforehand, here or elsewhere ($from)"
  cp "$from"/run*.json "$work/"
else
  echo "== $runs default suites back to back"
  for i in $(seq "$runs"); do
    "$bin" run --db "$work/suites.db" --label "s$i" > /dev/null 2>&1
    "$bin" export "s$i" --db "$work/suites.db" --format json > "$work/run$i.json"
  done
  if [ -n "$keep" ]; then mkdir -p "$keep" && cp "$work"/run*.json "$keep/"; fi
fi
echo "== trials"
python3 "$here/power.py" "$bin" "$work" "$runs" "$k"
