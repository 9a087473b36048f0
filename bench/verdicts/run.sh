#!/usr/bin/env bash
# The verdicts' false-alarm rates and the fleet and trend simulations, release
# build (power on real runs is bench/verdicts/power.sh, issue 55):
#  (a) fleet's planted-host power and false hosts (30 hosts spread by 6%), trend's
#      step placement and false steps (30 nights of 3% noise, a 10% step at night
#      20), from their unit tests. compare's own resampling simulation
#      (compare/simulate.rs, --sim) redraws A and B from one run's series: it holds
#      no run-to-run variance, so it is a unit test of the machinery, not power;
#  (b) real A/A: a sequence of default-suite runs, run i compared with run
#      i + LAG (minutes apart) through `compare --fail-on-regression`, on the
#      history of the others, for --pairs pairs: how many fail the gate, and how
#      many rows were called or could not tell. Keep the machine otherwise idle.
#
#   bench/verdicts/run.sh [--trials N] [--pairs P] [--lag L] [--bin PATH] [--sim]
#
# Targets: <= 2 of 20 real A/A pairs failing the gate; fleet: the -30% host named
# in >= 95% of fleets, a healthy one in <= 10%; trend: the step within a night
# in >= 90%, <= 1 false step per 100 nights.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
trials=20 pairs=20 lag=10 bin="" sim=0
while [ $# -gt 0 ]; do
  case "$1" in
    --trials) trials=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --lag) lag=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --sim) sim=1; shift ;;
    *) echo "usage: $0 [--trials N] [--pairs P] [--lag L] [--bin PATH] [--sim]" >&2; exit 2 ;;
  esac
done
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release -q -p ipcperf)
  bin="$root/target/release/ipcperf"
fi
work=$(mktemp -d /tmp/ipcperf-verdicts.XXXXXX)
trap 'rm -rf "$work"' EXIT
db="$work/h.db"

if [ "$sim" = 1 ]; then
  echo "== compare's resampling simulation on the series of a default suite (not power: one run's series)"
  "$bin" run --no-save --format json > "$work/suite.json" 2>/dev/null
  (cd "$root" && IPCPERF_VERDICT_RUN="$work/suite.json" IPCPERF_VERDICT_TRIALS="$trials" \
    cargo test -q --release -p ipcperf-results --lib verdicts_simulated -- --ignored --nocapture 2>/dev/null |
    grep -v '^running\|^test \|^$\|test result')
  echo
fi
if true; then
  echo "== (a) fleet (30 hosts, host-to-host sd 6%, 200 fleets) and trend (30 nights, 3% noise, 100 months)"
  (cd "$root" && cargo test -q --release -p ipcperf-results --lib -- --nocapture --test-threads=1 \
    fleet::tests::a_host_is_judged_against_the_spread_of_its_peers_hosts \
    fleet::changes::tests::a_ten_percent_step_in_three_percent_noise 2>/dev/null |
    grep -oE '(fleet, 30 hosts|step placed).*')
  echo
fi

runs=$((pairs + lag))
echo "== (b) real A/A: $runs default suites back to back, run i against run i+$lag"
for k in $(seq "$runs"); do
  "$bin" run --db "$db" --label "aa$k" > /dev/null 2>&1
done
fails=0 fails5=0
for i in $(seq "$pairs"); do
  j=$((i + lag))
  for k in 1 5; do
    set +e
    "$bin" compare "aa$i" "aa$j" --db "$db" --baseline-runs "$k" --fail-on-regression --format json \
      > "$work/c$i-$k.json" 2> "$work/c$i.err"
    rc=$?
    set -e
    if [ "$rc" != 0 ]; then
      if [ "$k" = 1 ]; then fails=$((fails + 1)); else fails5=$((fails5 + 1)); fi
    fi
    python3 - "$work/c$i-$k.json" "$i" "$j" "$rc" "$k" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [c for c in d["cases"] if c["unit"] in ("MB/s", "µs p50", "cycles/s")]
ch = [c["change"] for c in rows]
called = [c["case"] + f' {c["ratio_b_over_a"]:.2f}x' for c in rows if c["change"] in ("faster", "slower")]
near = f'{d.get("rows_near_limit", 0)} of {d.get("rows_with_limit", 0)} near their limit'
print(f"runs {sys.argv[2]:>2} and {sys.argv[3]:>2}, {len(d['baseline'])} run(s) as A: exit {sys.argv[4]}; "
      f"slower {ch.count('slower')}, faster {ch.count('faster')}, unchanged {ch.count('unchanged')}, "
      f"could not tell {ch.count('could-not-tell')}, {near}" + (f"; called: {', '.join(called)}" if called else ""))
PY
  done
done
echo "real A/A, one run as A: $fails of $pairs pairs failed compare --fail-on-regression"
echo "real A/A, five runs as A (--baseline-runs 5): $fails5 of $pairs pairs failed"
