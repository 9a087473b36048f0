#!/usr/bin/env bash
# The verdicts' power and false-alarm rates (issue 43), release build:
#  (a) simulation on real series: a default suite is measured here, then
#      compare's A/A false alarms and its power to call one case slowed by 5%,
#      10% and 25% are simulated on its series (crates/ipcperf-results/src/compare/
#      simulate.rs; --trials per case and shift); fleet's planted-host power and
#      false hosts (30 hosts spread by 6%), trend's step placement and false
#      steps (30 nights of 3% noise, a 10% step at night 20), from their tests;
#  (b) real A/A: a sequence of default-suite runs, run i compared with run
#      i + LAG (minutes apart) through `compare --fail-on-regression`, for
#      --pairs pairs: how many fail the gate, and how many rows were called or
#      could not tell. Keep the machine otherwise idle while it runs.
#
#   bench/verdicts/run.sh [--trials N] [--pairs P] [--lag L] [--bin PATH] [--skip-sim]
#
# Targets: a 10% change called in >= 90% of trials for cases whose spread is
# <= 3%, 25% for <= 10%; no false call in >= 95% of A/A trials; <= 2 of 20 real
# A/A pairs failing the gate; fleet: the -30% host named in >= 95% of fleets, a
# healthy one in <= 10%; trend: the step within a night in >= 90%, <= 1 false
# step per 100 nights.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
trials=20 pairs=20 lag=10 bin="" sim=1
while [ $# -gt 0 ]; do
  case "$1" in
    --trials) trials=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --lag) lag=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --skip-sim) sim=0; shift ;;
    *) echo "usage: $0 [--trials N] [--pairs P] [--lag L] [--bin PATH] [--skip-sim]" >&2; exit 2 ;;
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
  echo "== (a) simulation on the series of a default suite measured now"
  "$bin" run --no-save --format json > "$work/suite.json" 2>/dev/null
  (cd "$root" && IPCPERF_VERDICT_RUN="$work/suite.json" IPCPERF_VERDICT_TRIALS="$trials" \
    cargo test -q --release -p ipcperf-results --lib verdicts_simulated -- --ignored --nocapture 2>/dev/null |
    grep -v '^running\|^test \|^$\|test result')
  echo
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
fails=0
for i in $(seq "$pairs"); do
  j=$((i + lag))
  set +e
  "$bin" compare "aa$i" "aa$j" --db "$db" --fail-on-regression --format json > "$work/c$i.json" 2> "$work/c$i.err"
  rc=$?
  set -e
  [ "$rc" = 0 ] || fails=$((fails + 1))
  python3 - "$work/c$i.json" "$i" "$j" "$rc" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ch = [c["change"] for c in d["cases"]]
called = [c["case"] + f' {c["ratio_b_over_a"]:.2f}x' for c in d["cases"] if c["change"] in ("faster", "slower")]
print(f"runs {sys.argv[2]:>2} and {sys.argv[3]:>2}: exit {sys.argv[4]}; slower {ch.count('slower')}, "
      f"faster {ch.count('faster')}, unchanged {ch.count('unchanged')}, "
      f"could not tell {ch.count('could-not-tell')}" + (f"; called: {', '.join(called)}" if called else ""))
PY
done
echo "real A/A: $fails of $pairs pairs failed compare --fail-on-regression"
