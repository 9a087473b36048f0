#!/usr/bin/env bash
# The old and the new binary render the same runs the same (issue 42's check
# that moving every output to one way out changed nothing a user sees): OLD
# records one run of each kind into a history; a copy of it is exported by OLD
# and by NEW (which brings its copy's schema up to date first) as JSON, CSV and
# markdown, and `show` as a table. JSON is compared without the fields NEW adds
# (`kind`). Prints one line per run and format: same, or the first differing
# lines.
#
#   bench/exports/old-new.sh OLD_BINARY NEW_BINARY
set -euo pipefail
old=${1:?usage: $0 OLD NEW} new=${2:?usage: $0 OLD NEW}
work=$(mktemp -d /tmp/ipcperf-oldnew.XXXXXX)
trap 'rm -rf "$work"' EXIT
db="$work/old.db"
rec() { IPCPERF_DB="$db" "$old" -q "$@" >/dev/null; }
rec run pipe unix --sizes 64,4k -d 20ms -r 2
rec latency pipe --sizes 64 -n 500 -r 2 --pin 0,0
rec matrix pipe --cpus 0,1 -d 20ms
rec sync futex -d 20ms -r 2
rec pipeline --bytes 256k --chunk 1k --repeat 1
rec replay --sizes fixed:64 --gaps fixed:2k --for 100ms pipe -r 2
rec topology --measure
rec advise --only pipe,unix --quick
cp "$db" "$work/new.db"
n=$(IPCPERF_DB="$work/old.db" "$old" history --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
same=0 differ=0
for id in $(seq 1 "$n"); do
  for f in json csv markdown; do
    IPCPERF_DB="$work/old.db" "$old" export "$id" --format $f > "$work/o.$f"
    IPCPERF_DB="$work/new.db" "$new" export "$id" --format $f > "$work/n.$f"
    if [ $f = json ]; then
      python3 - "$work/o.json" "$work/n.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
b.pop("kind", None)
open(sys.argv[2], "w").write(json.dumps(b, indent=1))
open(sys.argv[1], "w").write(json.dumps(a, indent=1))
PY
    fi
    kind=$(IPCPERF_DB="$work/new.db" "$new" export "$id" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["kind"])')
    if cmp -s "$work/o.$f" "$work/n.$f"; then
      echo "run $id ($kind) export $f: same"; same=$((same + 1))
    else
      echo "run $id ($kind) export $f: DIFFERS"; diff "$work/o.$f" "$work/n.$f" | head -8 || true; differ=$((differ + 1))
    fi
  done
  IPCPERF_DB="$work/old.db" "$old" show "$id" > "$work/o.txt"
  IPCPERF_DB="$work/new.db" "$new" show "$id" > "$work/n.txt"
  if cmp -s "$work/o.txt" "$work/n.txt"; then
    echo "run $id ($kind) show: same"; same=$((same + 1))
  else
    echo "run $id ($kind) show: DIFFERS"; diff "$work/o.txt" "$work/n.txt" | head -8 || true; differ=$((differ + 1))
  fi
done
# What is not a run: the history of those runs, the mechanism list, a trend.
for what in "history" "list" "list shm" "trend pipe --sizes 64"; do
  for f in table json csv markdown; do
    # shellcheck disable=SC2086
    IPCPERF_DB="$work/old.db" "$old" $what --format $f > "$work/o.txt" 2>&1 || true
    # shellcheck disable=SC2086
    IPCPERF_DB="$work/new.db" "$new" $what --format $f > "$work/n.txt" 2>&1 || true
    if cmp -s "$work/o.txt" "$work/n.txt"; then
      echo "$what $f: same"; same=$((same + 1))
    else
      echo "$what $f: DIFFERS"; diff "$work/o.txt" "$work/n.txt" | head -8 || true; differ=$((differ + 1))
    fi
  done
done
echo "same: $same, differ: $differ"
