#!/usr/bin/env bash
# Issue 55, item 4: would a gate that measures its called cases again at once,
# each case's series back to back, hold its calls as well as a whole second
# run does? ROUNDS rounds, each a default suite B and, right after it, the same
# suite with `--consecutive` (each case's series one after another, as a case
# measured again alone takes them): runI.json and againI.json in DIR. Then
# bench/verdicts/confirm.sh --from DIR --again judges each B held to its own
# "again" run, and without --again held to the next round's B. Keep the
# machine otherwise idle.
#
#   bench/verdicts/remeasure.sh --rounds N --keep DIR [--bin PATH]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rounds=30 bin="" keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "usage: $0 --rounds N --keep DIR [--bin PATH]" >&2; exit 2 ;;
  esac
done
[ -n "$keep" ] || { echo "$0: --keep DIR: where the rounds go" >&2; exit 2; }
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release -q -p ipcperf)
  bin="$root/target/release/ipcperf"
fi
mkdir -p "$keep"
db=$(mktemp -d /tmp/ipcperf-remeasure.XXXXXX)
trap 'rm -rf "$db"' EXIT
for i in $(seq "$rounds"); do
  "$bin" run --db "$db/s.db" --label "b$i" > /dev/null 2>&1
  "$bin" run --db "$db/s.db" --label "c$i" --consecutive > /dev/null 2>&1
  "$bin" export "b$i" --db "$db/s.db" --format json > "$keep/run$i.json"
  "$bin" export "c$i" --db "$db/s.db" --format json > "$keep/again$i.json"
  echo "round $i of $rounds done ($(date +%H:%M:%S))" >&2
done
