#!/usr/bin/env bash
# Is a case's run-to-run spread ipcperf's or the machine's? (issue 55: the
# spread is what limits compare's verdicts.) ROUNDS rounds back to back, each a
# default suite (`ipcperf run`, saved and exported) and, right beside it, the
# suite's pipe, memcpy and null cases as bare C loops (bench/floor/suite-cases.c)
# doing the same work: the same block size, CPUs, series and blocks per series
# as that run's case, the series taken in passes (series 1 of every case, then
# series 2, each on a new pair of processes and buffers, as ipcperf takes the
# suite's; `--together`: each case's series back to back in one pair). The
# order alternates between rounds. bench/verdicts/floor.py
# then holds each case's run-to-run spread, its tails and the false calls of a
# rule that knew its spread, ipcperf's beside the floor's, and how far their
# moves go together. Keep the machine otherwise idle.
#
#   bench/verdicts/floor.sh [--rounds N] [--k K] [--together] [--bin PATH] [--keep DIR]
#   bench/verdicts/floor.sh --from DIR [--k K]   # rounds kept by --keep
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=30 k=5 bin="" from="" keep="" together=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --k) k=$2; shift 2 ;;
    --together) together=1; shift ;;
    --bin) bin=$2; shift 2 ;;
    --from) from=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--k K] [--together] [--bin PATH] [--keep DIR] | --from DIR [--k K]" >&2; exit 2 ;;
  esac
done
if [ -n "$from" ]; then
  [ -f "$from/run$((k + 2)).json" ] && [ -f "$from/floor$((k + 2)).txt" ] ||
    { echo "$0: --from DIR with run1.json, floor1.txt .. run$((k + 2)).json, floor$((k + 2)).txt or more" >&2; exit 2; }
  echo "== rounds measured beforehand ($from): $(cat "$from/how" 2>/dev/null || echo "the floor's series: not recorded")"
  exec python3 "$here/floor.py" "$from" "$k"
fi
[ "$rounds" -gt "$((k + 1))" ] || { echo "$0: --rounds must exceed --k + 1" >&2; exit 2; }
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release -q -p ipcperf)
  bin="$root/target/release/ipcperf"
fi
work=$(mktemp -d /tmp/ipcperf-floor.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/suite-cases" "$root/bench/floor/suite-cases.c"

suite() {
  "$bin" run --db "$work/suites.db" --label "s$1" > /dev/null 2>&1
  "$bin" export "s$1" --db "$work/suites.db" --format json > "$work/run$1.json"
}

# The floor of round $1 takes its blocks per series from run $2's cases (the
# round's own run where it ran first, else the round before's).
floor() {
  python3 "$here/floor.py" --cases "$work/run$2.json" > "$work/cases"
  if [ -n "$together" ]; then
    while read -r mech bs blocks series w r; do
      echo "$mech $bs $w $r $(one "$mech" "$bs" "$blocks" "$series" "$w" "$r" same)"
    done < "$work/cases" > "$work/floor$1.txt"
    return
  fi
  local passes
  passes=$(awk '{ if ($4 > n) n = $4 } END { print n }' "$work/cases")
  : > "$work/passes"
  for p in $(seq "$passes"); do
    while read -r mech bs blocks series w r; do
      [ "$p" -le "$series" ] || continue
      echo "$mech $bs $w $r $(one "$mech" "$bs" "$blocks" 1 "$w" "$r" fresh)"
    done < "$work/cases" >> "$work/passes"
  done
  # One line a case, its passes' rates in order.
  awk '{ k = $1 " " $2 " " $3 " " $4; if (!(k in v)) order[n++] = k; v[k] = v[k] " " $5 }
       END { for (i = 0; i < n; i++) print order[i] v[order[i]] }' "$work/passes" > "$work/floor$1.txt"
}

one() { # MECH BS BLOCKS SERIES WCPU RCPU MODE
  if [ "$1" = pipe ]; then
    "$work/suite-cases" pipe "$2" "$3" "$4" "$5" "$6" "$7"
  else
    "$work/suite-cases" "$1" "$2" "$3" "$4" "$5" "$7"
  fi
}

how="a default suite and its pipe, memcpy and null cases in C, back to back; the floor's series $([ -n "$together" ] && echo "of each case together, in one pair" || echo "in passes, each on a new pair")"
echo "$how" > "$work/how"
echo "== $rounds rounds: $how"
for i in $(seq "$rounds"); do
  if [ $((i % 2)) -eq 1 ]; then suite "$i"; floor "$i" "$i"; else floor "$i" "$((i - 1))"; suite "$i"; fi
done
if [ -n "$keep" ]; then mkdir -p "$keep" && cp "$work"/run*.json "$work"/floor*.txt "$work/how" "$keep/"; fi
python3 "$here/floor.py" "$work" "$k"
