#!/usr/bin/env bash
# Each of ipcperf's waits beside a C loop making the same calls: `ipcperf latency
# MECH --wait WAIT` against bench/floor/wait-rtt.c (blocking read/write; poll(2)
# then read; epoll_wait(2) then read; non-blocking calls retried at once) and,
# for uring (ipcperf's uring-MECH), bench/floor/uring-rtt.c (liburing), the
# same mechanism, message size and pins, both sides waiting alike. Each round
# takes every case, ipcperf and the C loop in an order that turns each round;
# each row: both medians over the rounds (µs, the p50 of each series) and the
# ratio ipcperf / C (median, range), against the target (1.05).
#
#   bench/wait-floor.sh            # ROUNDS=5 COUNT=20000 SIZE=64 PINS="0,1 0,0"
#                                  # MECHS="pipe unix tcp" WAITS="block poll epoll uring busy"
#   MECHS=udp                      # UDP too (wait-rtt.c: two connected datagram sockets;
#                                  # no uring: ipcperf has no uring-udp, said so as n/a)
#   IPCPERF=path                   # a built binary (default target/release/ipcperf)
#   IDLE=poll                      # both at polling idle: ipcperf --idle poll, the C
#                                  # loop with /dev/cpu_dma_latency held at 0 (root)
#
# busy on one CPU is left out, said so: each side spins out its time slice
# before the other runs (ipcperf flags such a case), a figure of the scheduler.
# Needs: jq, cc; liburing (Debian: liburing-dev) for uring, else its rows are
# left out, said so. Keeps nothing in the run history.
export IPCPERF_NO_SAVE=1
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh

ROUNDS=${ROUNDS:-5}
COUNT=${COUNT:-20000}
SIZE=${SIZE:-64}
PINS=${PINS:-0,1 0,0}
MECHS=${MECHS:-pipe unix tcp}
WAITS=${WAITS:-block poll epoll uring busy}
IDLE=${IDLE:-as-is}
BIN=${IPCPERF:-target/release/ipcperf}
[ -x "$BIN" ] || cargo build --release -q -p ipcperf
command -v jq >/dev/null || { echo "wait-floor: jq is needed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/wait-rtt" bench/floor/wait-rtt.c
if [[ " $WAITS " == *" uring "* ]] && ! cc -O2 -o "$work/uring-rtt" bench/floor/uring-rtt.c -luring 2>/dev/null; then
    echo "wait-floor: uring left out: bench/floor/uring-rtt.c needs liburing (Debian: liburing-dev)"
    WAITS=${WAITS//uring/}
fi

ours() { # MECH WAIT PINS -> p50 µs
    "$BIN" latency "$1" --wait "$2" --pin "$3" --sizes "$SIZE" --count "$COUNT" \
        --repeat 1 --mode processes --idle "$IDLE" --format json 2>/dev/null |
        jq -r '.cases[0] | select(.status == "ok") | .p50_ns / 1000' || echo n/a
}
floor() { # MECH WAIT PINS -> median µs
    local a=${3%,*} b=${3#*,}
    [ "$IDLE" != poll ] || hold_poll
    if [ "$2" = uring ]; then
        timeout 120 "$work/uring-rtt" "$1" "$a" "$b" "$COUNT" "$SIZE"
    else
        timeout 120 "$work/wait-rtt" "$1" "$2" "$a" "$b" "$COUNT" "$SIZE"
    fi |
        awk '{ printf "%.3f\n", $1 / 1000 }' || echo n/a
    release_hold
}

cases=()
for p in $PINS; do
    for m in $MECHS; do
        for w in $WAITS; do
            if [ "$w" = busy ] && [ "${p%,*}" = "${p#*,}" ]; then
                echo "wait-floor: busy on one CPU ($p) left out: each side spins out its time slice before the other runs"
                continue
            fi
            cases+=("$p $m $w")
        done
    done
done
echo "wait-floor: $ROUNDS rounds, $COUNT round trips of $SIZE B a series, $(nproc) CPUs, idle driver: $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none), held: $IDLE"
declare -A OURS FLOOR RATIO
for r in $(seq 1 "$ROUNDS"); do
    for c in "${cases[@]}"; do
        read -r p m w <<<"$c"
        if [ $((r % 2)) = 1 ]; then
            o=$(ours "$m" "$w" "$p"); f=$(floor "$m" "$w" "$p")
        else
            f=$(floor "$m" "$w" "$p"); o=$(ours "$m" "$w" "$p")
        fi
        OURS[$c]="${OURS[$c]:-} $o"
        FLOOR[$c]="${FLOOR[$c]:-} $f"
        RATIO[$c]="${RATIO[$c]:-} $(ratio "$o" "$f")"
        printf 'round %d  %-4s %-5s %-6s ipcperf %8s µs  C %8s µs\n' "$r" "$p" "$m" "$w" "$o" "$f"
    done
done
echo
echo "| pins | mechanism | wait | ipcperf p50 µs (median) | C p50 µs (median) | ipcperf / C | within 1.05 |"
echo "|---|---|---|---|---|---|---|"
for c in "${cases[@]}"; do
    read -r p m w <<<"$c"
    # shellcheck disable=SC2086
    read -r rm rlo rhi rn < <(summary ${RATIO[$c]})
    # shellcheck disable=SC2086
    om=$(median ${OURS[$c]}); fm=$(median ${FLOOR[$c]})
    ok=$(awk -v x="$rm" 'BEGIN { if (x == "n/a") print "n/a"; else print (x <= 1.05 ? "yes" : "no") }')
    printf '| %s | %s | %s | %s | %s | %s (%s–%s, %s rounds) | %s |\n' "$p" "$m" "$w" "$om" "$fm" "$rm" "$rlo" "$rhi" "$rn" "$ok"
done
