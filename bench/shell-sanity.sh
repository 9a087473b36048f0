#!/bin/sh
# Is `ipcperf gen` fast enough never to be the bottleneck?
#
# Measures, side by side in one run, `ipcperf gen > /dev/null` at 1 KiB writes and
# `ipcperf run pipe --sizes 1k` (two processes), ROUNDS times alternately, and prints
# each round's ratio gen / pipe and their spread. Target: ratio >= 5.
#
# Usage: bench/shell-sanity.sh [ROUNDS] [BYTES]   (defaults: 3 rounds, 2G per gen run)
#        IPCPERF=path to use a built binary (default target/release/ipcperf, built if missing)
# Needs: jq, numfmt (coreutils).
set -eu

ROUNDS=${1:-3}
BYTES=${2:-2G}
cd "$(dirname "$0")/.."
IPCPERF=${IPCPERF:-target/release/ipcperf}
if [ ! -x "$IPCPERF" ]; then
    cargo build --release -q -p ipcperf
fi

bytes_of() { numfmt --from=iec "$1"; }
N=$(bytes_of "$BYTES")

printf '%-6s %14s %14s %8s\n' round "gen MB/s" "pipe MB/s" ratio
ratios=""
i=1
while [ "$i" -le "$ROUNDS" ]; do
    t0=$(date +%s%N)
    "$IPCPERF" gen --bytes "$BYTES" --chunk 1k --seed "$i" > /dev/null
    t1=$(date +%s%N)
    gen=$(echo "$N $t0 $t1" | awk '{ printf "%.0f", $1 * 1e3 / ($3 - $2) }')
    pipe=$("$IPCPERF" run pipe --sizes 1k --repeat 3 --format json 2>/dev/null |
        jq '.cases[0].median_bytes_per_sec / 1e6 | floor')
    ratio=$(echo "$gen $pipe" | awk '{ printf "%.2f", $1 / $2 }')
    printf '%-6s %14s %14s %7sx\n' "$i" "$gen" "$pipe" "$ratio"
    ratios="$ratios $ratio"
    i=$((i + 1))
done
echo "$ratios" | tr ' ' '\n' | grep . | sort -n | awk '
    { r[NR] = $1 }
    END {
        med = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
        printf "gen / pipe at 1 KiB: median %.2fx (min %.2fx, max %.2fx) over %d rounds; target >= 5x: %s\n",
            med, r[1], r[NR], NR, (r[1] >= 5 ? "met in every round" : (med >= 5 ? "met at the median" : "NOT met"))
    }'
