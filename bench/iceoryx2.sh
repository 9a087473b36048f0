#!/usr/bin/env bash
# ipcperf's iceoryx2 mechanism against iceoryx2's own benchmark method (its
# benchmarks/publish-subscribe: two threads pinned to two CPUs, one service each
# way, busy-polling receive, elapsed / (2 x round trips) printed: half a mean
# round trip), reproduced in crates/ipcperf-core/examples/iox2_pingpong.rs,
# each pair of figures taken in the same round (interleaved), printed as
# ratios: median and range.                                  target: within 10%
#
#   ipcperf's like-for-like figure: `latency iceoryx2 --mode threads --pin A,B
#   --no-touch`, its mean round trip / 2.
#   What still differs: the method's subscribers hold one sample and overflow
#   (safe overflow), ipcperf's hold 8 and never lose one (a full subscriber
#   holds its publisher); the method sends zeroed loans, ipcperf copies its
#   block into each loan and out of each sample (64 B by default); ipcperf reads
#   the clock around every round trip (its own cost subtracted); the method runs
#   its threads at priority 255, ipcperf at the default.
#
# Needs jq. Environment: REPS (5), COUNT (round trips per figure, 200000), SIZE
# (64), A and B (the CPUs, 0 and 1). Keeps nothing in the run history; cleans
# what iceoryx2 leaves in /dev/shm.
export IPCPERF_NO_SAVE=1
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-5}
COUNT=${COUNT:-200000}
SIZE=${SIZE:-64}
A=${A:-0}
B=${B:-1}
command -v jq >/dev/null || { echo "iceoryx2: jq is needed" >&2; exit 1; }
cargo build --release -q -p ipcperf --all-features
cargo build --release -q -p ipcperf-core --features iceoryx2 --example iox2_pingpong
BIN=$(realpath target/release/ipcperf)
OWN=$(realpath target/release/examples/iox2_pingpong)

spread() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "median %.3f (min %.3f, max %.3f, %d rounds)", m, v[1], v[NR], NR }'
}
ours() {
    "$BIN" latency iceoryx2 --mode threads --sizes "$SIZE" --count "$COUNT" --pin "$A,$B" \
        --no-touch --repeat 1 --format json 2>/dev/null | jq -r '.cases[0].mean_ns / 2'
}
echo "iceoryx2: $REPS rounds of $COUNT round trips, $SIZE B, CPUs $A and $B; $(nproc) CPUs"
r=""
for i in $(seq "$REPS"); do
    own=$("$OWN" "$COUNT" "$SIZE" "$A" "$B")
    o=$(ours | xargs printf "%.0f")
    x=$(awk -v a="$o" -v b="$own" 'BEGIN { printf "%.3f", a / b }')
    r+="$x "
    echo "  round $i: ipcperf $o ns / method $own ns = $x"
done
# iceoryx2 keeps each node's management files in /dev/shm after it ends.
"$BIN" clean >/dev/null
# shellcheck disable=SC2086
echo "iceoryx2: ipcperf mean RTT/2 over the method's elapsed/(2n): $(spread $r)"
