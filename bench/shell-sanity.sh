#!/bin/sh
# Is `ipcperf gen` fast enough never to be the bottleneck?
#
# Measures, side by side in one run, `ipcperf gen > /dev/null` at 1 KiB writes and
# `ipcperf run pipe --sizes 1k` (two processes: unpinned, on one CPU, across two),
# with `ipcperf run null --sizes 1k` (the ceiling of any 1 KiB writer), ROUNDS
# times alternately, and prints each round's ratios and their spread.
# Target: gen / pipe >= 5.
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
# The pipe at 1 KiB depends on where its two processes run (one write and one read
# per KiB on one CPU; a wake-up across CPUs): measured unpinned (the target's
# case, wherever the scheduler puts them), on one CPU and across two. `null` is the
# ceiling of any writer of 1 KiB writes: write(2) to /dev/null and nothing else
# (--no-touch: gen hands the kernel its pool as it is, too).
printf '%-5s %8s %8s | %8s %8s %8s | %7s %7s %7s | %9s\n' round gen null \
    "pipe unp" "pipe 0,0" "pipe 0,1" "gen/unp" "gen/0,0" "gen/0,1" "null/0,0"
r_unp=""; r_same=""; r_cross=""; r_ceil=""
i=1
while [ "$i" -le "$ROUNDS" ]; do
    /usr/bin/time -f '%e' -o "$TIMES" \
        "$IPCPERF" gen --bytes "$BYTES" --chunk 1k --seed "$i" > /dev/null
    gen=$(awk -v n="$N" '{ printf "%.0f", n / $1 / 1e6 }' "$TIMES")
    null=$("$IPCPERF" run null --sizes 1k --no-touch --repeat 3 --format json 2>/dev/null |
        jq '.cases[0].median_bytes_per_sec / 1e6 | floor')
    pipes=$("$IPCPERF" run pipe --sizes 1k --repeat 3 --pin none --pin 0,0 --pin 0,1 --format json 2>/dev/null)
    pick() { jq --arg l "$1" '.cases[] | select(.placement.label == $l) | .median_bytes_per_sec / 1e6 | floor' <<EOF2
$pipes
EOF2
    }
    unp=$(pick unpinned); same=$(pick same-cpu); cross=$(pick cross-cpu)
    ru=$(echo "$gen $unp" | awk '{ printf "%.2f", $1 / $2 }')
    rs=$(echo "$gen $same" | awk '{ printf "%.2f", $1 / $2 }')
    rc=$(echo "$gen $cross" | awk '{ printf "%.2f", $1 / $2 }')
    rn=$(echo "$null $same" | awk '{ printf "%.2f", $1 / $2 }')
    printf '%-5s %8s %8s | %8s %8s %8s | %6sx %6sx %6sx | %8sx\n' "$i" "$gen" "$null" \
        "$unp" "$same" "$cross" "$ru" "$rs" "$rc" "$rn"
    r_unp="$r_unp $ru"; r_same="$r_same $rs"; r_cross="$r_cross $rc"; r_ceil="$r_ceil $rn"
    i=$((i + 1))
done
echo "(MB/s; gen = ipcperf gen --chunk 1k > /dev/null, wall time; load average after: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs)"
summary() { # LABEL TARGET? RATIOS...
    label=$1; judge=$2; shift 2
    echo "$@" | tr ' ' '\n' | grep . | sort -n | awk -v label="$label" -v judge="$judge" '
        { r[NR] = $1 }
        END {
            med = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
            v = ""
            if (judge == "yes")
                v = "; target >= 5x: " (r[1] >= 5 ? "met in every round" : (med >= 5 ? "met at the median" : "NOT met"))
            printf "%-34s median %.2fx (min %.2fx, max %.2fx)%s\n", label, med, r[1], r[NR], v
        }'
}
summary "gen / pipe unpinned (the target):" yes $r_unp
summary "gen / pipe on one CPU:" no $r_same
summary "gen / pipe across CPUs:" no $r_cross
summary "null ceiling / pipe on one CPU:" no $r_ceil
echo "(null / pipe on one CPU bounds what any 1 KiB writer could reach against that pipe)"
