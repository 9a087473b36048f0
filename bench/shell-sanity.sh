#!/bin/sh
# Is `ipcperf gen` fast enough never to be the bottleneck?
#
# Measures, side by side in one run, `ipcperf gen > /dev/null` at 1 KiB writes and
# `ipcperf run pipe --sizes 1k` (two processes), ROUNDS times alternately, and prints
# each round's ratio gen / pipe and their spread. Target: ratio >= 5.
#
# Usage: bench/shell-sanity.sh [ROUNDS] [BYTES]   (defaults: 5 rounds, 8G per gen run: about a second,
#        so the 10 ms resolution of GNU time is under 1%)
#        IPCPERF=path to use a built binary (default target/release/ipcperf, built if missing)
# Needs: jq, numfmt (coreutils), GNU time (/usr/bin/time).
# Benchmarks keep nothing in the run history.
export IPCPERF_NO_SAVE=1
set -eu

ROUNDS=${1:-5}
BYTES=${2:-8G}
cd "$(dirname "$0")/.."
IPCPERF=${IPCPERF:-target/release/ipcperf}
if [ ! -x "$IPCPERF" ]; then
    cargo build --release -q -p ipcperf
fi

N=$(numfmt --from=iec "$BYTES")
TIMES=$(mktemp)
trap 'rm -f "$TIMES"' EXIT

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %10s %14s %10s %8s\n' round "gen MB/s" "gen MB/CPU-s" "pipe MB/s" ratio
ratios=""
i=1
while [ "$i" -le "$ROUNDS" ]; do
    # Wall time decides the ratio; gen's CPU time shows what it does when it gets a CPU.
    /usr/bin/time -f '%e %U %S' -o "$TIMES" \
        "$IPCPERF" gen --bytes "$BYTES" --chunk 1k --seed "$i" > /dev/null
    gen=$(awk -v n="$N" '{ printf "%.0f", n / $1 / 1e6 }' "$TIMES")
    gen_cpu=$(awk -v n="$N" '{ printf "%.0f", n / ($2 + $3) / 1e6 }' "$TIMES")
    pipe=$("$IPCPERF" run pipe --sizes 1k --repeat 3 --format json 2>/dev/null |
        jq '.cases[0].median_bytes_per_sec / 1e6 | floor')
    ratio=$(echo "$gen $pipe" | awk '{ printf "%.2f", $1 / $2 }')
    printf '%-6s %10s %14s %10s %7sx\n' "$i" "$gen" "$gen_cpu" "$pipe" "$ratio"
    ratios="$ratios $ratio"
    i=$((i + 1))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg) (on $(nproc) CPUs)"
echo "$ratios" | tr ' ' '\n' | grep . | sort -n | awk '
    { r[NR] = $1 }
    END {
        med = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
        printf "gen / pipe at 1 KiB: median %.2fx (min %.2fx, max %.2fx) over %d rounds; target >= 5x: %s\n",
            med, r[1], r[NR], NR, (r[1] >= 5 ? "met in every round" : (med >= 5 ? "met at the median" : "NOT met"))
    }'
