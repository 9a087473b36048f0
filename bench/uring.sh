#!/usr/bin/env bash
# io_uring against plain read/write on the same kernel objects: each round is one
# ipcperf run of the io_uring mechanism and its base (their series interleaved),
# printed as ratios: median and range over REPS rounds.
#
#   1. Throughput at SIZE (64 KiB): uring-unix / unix, uring-pipe / pipe,
#      uring-tcp / tcp, MB/s medians, payload written and read. target: uring-unix >= 1.0x
#   2. Round trips at 64 B: the same pairs, p50 (lower is better).
#   Both sides pinned (--pin 0,1: two CPUs; PIN overrides).
#
# Environment: REPS (5), DUR (series length, 300ms), SIZE (64k), PIN (0,1).
# IPCPERF=path uses a built binary (default target/release/ipcperf). Keeps nothing
# in the run history.
export IPCPERF_NO_SAVE=1
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-5}
DUR=${DUR:-300ms}
SIZE=${SIZE:-64k}
PIN=${PIN:-0,1}
BIN=$(realpath "${IPCPERF:-target/release/ipcperf}")
[ -x "$BIN" ] || cargo build --release -q -p ipcperf
command -v jq >/dev/null || { echo "uring: jq is needed" >&2; exit 1; }

# shellcheck source=bench/lib.sh
. bench/lib.sh
# case_ratio FIELD A B JSON: A's FIELD over B's, from one run's cases.
case_ratio() {
    jq -r --arg a "$2" --arg b "$3" --arg f "$1" '
        [.cases[] | select(.mechanism == $a) | .[$f]][0] as $x |
        [.cases[] | select(.mechanism == $b) | .[$f]][0] as $y |
        if ($x // 0) > 0 and ($y // 0) > 0 then ($x / $y * 1000 | round / 1000) else "n/a" end' <<<"$4"
}
echo "uring: $REPS rounds, series of $DUR, pinned $PIN; $(nproc) CPUs; kernel $(uname -r)"
declare -A tp rt
pairs="unix pipe tcp"
for i in $(seq "$REPS"); do
    j=$("$BIN" run unix uring-unix pipe uring-pipe tcp uring-tcp --sizes "$SIZE" --pin "$PIN" \
        -d "$DUR" --repeat 5 --format json 2>/dev/null)
    l=$("$BIN" latency unix uring-unix pipe uring-pipe tcp uring-tcp --sizes 64 --pin "$PIN" \
        -d "$DUR" --repeat 5 --format json 2>/dev/null)
    line="  round $i:"
    for b in $pairs; do
        t=$(case_ratio median_bytes_per_sec "uring-$b" "$b" "$j")
        r=$(case_ratio p50_ns "uring-$b" "$b" "$l")
        tp[$b]+="$t "
        rt[$b]+="$r "
        line+=" $b tput $t, rtt $r |"
    done
    echo "$line"
done
for b in $pairs; do
    # shellcheck disable=SC2086
    echo "uring-$b / $b throughput at $SIZE: $(spread ${tp[$b]})"
    # shellcheck disable=SC2086
    echo "uring-$b / $b RTT p50 at 64 B:     $(spread ${rt[$b]})"
done
