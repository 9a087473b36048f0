#!/usr/bin/env bash
# The default suite (`ipcperf run`) of two builds side by side: its wall time and
# whether its figures agree. Rounds interleave old and new (old, new, new, old,
# ...) so both see the same machine; each prints its wall time, then the
# ratio new/old of the wall times (median and range over the rounds), and case
# by case whether each build's median MB/s lies within the other's range
# (min..max of every series of every round): a shorter suite must not move
# a figure beyond the noise.
#
#   bench/default-suite.sh OLD_BINARY NEW_BINARY       # REPS=3; TARGET="<= 1.02" says one
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
OLD=${1:?usage: bench/default-suite.sh OLD NEW}
NEW=${2:?usage: bench/default-suite.sh OLD NEW}
REPS=${REPS:-3}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
wall() { # BIN FILE: the suite's wall seconds; its JSON into FILE
    local t0 t1
    t0=$(date +%s.%N)
    "$1" run --no-save --format json >"$2" 2>/dev/null || true
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
r=(); wo=(); wn=()
for i in $(seq "$REPS"); do
    if ((i % 2)); then
        o=$(wall "$OLD" "$OUT/old.$i.json"); n=$(wall "$NEW" "$OUT/new.$i.json")
    else
        n=$(wall "$NEW" "$OUT/new.$i.json"); o=$(wall "$OLD" "$OUT/old.$i.json")
    fi
    wo+=("$o"); wn+=("$n"); r+=("$(ratio "$n" "$o")")
    echo "round $i: old ${o} s, new ${n} s, new/old $(ratio "$n" "$o")"
done
echo "wall time: old median $(median "${wo[@]}") s, new median $(median "${wn[@]}") s"
echo "new/old wall time: $(spread "${r[@]}")${TARGET:+   target $TARGET}"
python3 - "$OUT" "$REPS" <<'PY'
import json, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
def cases(side):
    got = {}
    for i in range(1, reps + 1):
        try:
            run = json.load(open(f"{out}/{side}.{i}.json"))
        except (OSError, ValueError):
            continue
        for c in run["cases"]:
            if c.get("status") != "ok":
                continue
            key = (c["mechanism"], c["mode"], c["block_size_bytes"], c["placement"]["label"])
            rates = [s["bytes"] * 1e9 / s["elapsed_ns"] for s in c["series"] if s["elapsed_ns"]]
            got.setdefault(key, []).extend(rates)
    return got
old, new = cases("old"), cases("new")
agree = 0
rows = []
for key in sorted(set(old) & set(new)):
    a, b = old[key], new[key]
    ma, mb = statistics.median(a), statistics.median(b)
    ok = min(a) <= mb <= max(a) or min(b) <= ma <= max(b)
    agree += ok
    rows.append((key, ma, mb, ok, len(a), len(b)))
for (m, mode, size, pl), ma, mb, ok, na, nb in rows:
    print(f"  {m:7} {mode:9} {size:>8} B {pl:16} old {ma/1e6:9.0f} MB/s ({na} series)"
          f"  new {mb/1e6:9.0f} MB/s ({nb})  new/old {mb/ma:5.2f}  {'agree' if ok else 'APART'}")
print(f"cases whose medians lie within the other's range: {agree} of {len(rows)}")
ratios = sorted(mb / ma for _, ma, mb, _, _, _ in rows if ma > 0)
if ratios:
    print(f"new/old of the cases' medians: median {statistics.median(ratios):.3f} "
          f"(min {ratios[0]:.3f}, max {ratios[-1]:.3f}, {len(ratios)} cases)")
PY
