#!/usr/bin/env bash
# Does a case's run-to-run spread come with the processes and buffers a run
# happens to get? (issue 55: that spread is what limits compare's verdicts.)
# ROUNDS rounds back to back of the default suite's pipe, memcpy and null cases as
# bare C loops (bench/floor/suite-cases.c), each case three ways in every round
# (the order rotating): its series all in one pair of processes and buffers
# (as ipcperf runs them), in one pair with new buffers each series, and each in
# new processes with new buffers. If the spread comes with what a run is
# given, the last ways' medians move less from round to round than the first's
# (bench/verdicts/fresh.py prints each case's spread each way). The blocks per
# series are RUN's (a kept `ipcperf export` of a default suite: floor.sh --keep).
# Keep the machine otherwise idle.
#
#   bench/verdicts/fresh.sh --blocks RUN.json [--rounds N] [--keep DIR]
#   bench/verdicts/fresh.sh --from DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=40 run="" from="" keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --blocks) run=$2; shift 2 ;;
    --from) from=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "usage: $0 --blocks RUN.json [--rounds N] [--keep DIR] | --from DIR" >&2; exit 2 ;;
  esac
done
if [ -n "$from" ]; then
  [ -f "$from/fresh1.txt" ] || { echo "$0: --from DIR with fresh1.txt .." >&2; exit 2; }
  echo "== rounds measured beforehand ($from)"
  exec python3 "$here/fresh.py" "$from"
fi
[ -f "$run" ] || { echo "$0: --blocks RUN.json: a kept export of a default suite" >&2; exit 2; }
work=$(mktemp -d /tmp/ipcperf-fresh.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/suite-cases" "$root/bench/floor/suite-cases.c"
python3 "$here/floor.py" --cases "$run" > "$work/cases"
modes=(same rebuf fresh)
echo "== $rounds rounds of $(wc -l < "$work/cases") cases, each three ways"
for i in $(seq "$rounds"); do
  for j in 0 1 2; do
    m=${modes[$(((i + j) % 3))]}
    while read -r mech bs blocks series w r; do
      if [ "$mech" = pipe ]; then
        echo "$m $mech $bs $w $r $("$work/suite-cases" pipe "$bs" "$blocks" "$series" "$w" "$r" "$m")"
      else
        echo "$m $mech $bs $w $r $("$work/suite-cases" "$mech" "$bs" "$blocks" "$series" "$w" "$m")"
      fi
    done < "$work/cases"
  done > "$work/fresh$i.txt"
done
if [ -n "$keep" ]; then mkdir -p "$keep" && cp "$work"/fresh*.txt "$keep/"; fi
python3 "$here/fresh.py" "$work"
