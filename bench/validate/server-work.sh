#!/usr/bin/env bash
# Does a server's own work widen TCP's lead over a Unix socket? (issue 54: the
# advise chapter's hypothesis for PostgreSQL's miss). A C round trip
# (bench/floor/wait-rtt.c, 64 B, both sides reading first and waiting in
# epoll_wait(2) when nothing is there, as a PostgreSQL backend does) over a
# Unix stream socket and over TCP loopback, the server doing work of its own
# between each request and its answer: spinning WORK_NS on the clock, and/or
# first writing a byte in every 64 of a TOUCH-byte buffer (its caches filled
# with other data, as a server's parse, plan and execution fill them). At
# polling idle (/dev/cpu_dma_latency held at 0, root), pins PIN; ROUNDS
# interleaved rounds; per kind of work the medians of each transport's
# median round trip and of TCP - Unix (min-max over the rounds).
#
#   bench/validate/server-work.sh          # ROUNDS=5 COUNT=20000 PIN=0,1
#
# If the work's cold caches made TCP's longer kernel path dearer, TCP - Unix
# would grow with TOUCH. Needs cc, root. Keeps nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
ROUNDS=${ROUNDS:-5}
COUNT=${COUNT:-20000}
PIN=${PIN:-0,1}
a=${PIN%,*} b=${PIN#*,}
work=$(mktemp -d)
trap 'release_hold; rm -rf "$work"' EXIT
cc -O2 -o "$work/wait-rtt" bench/floor/wait-rtt.c
kinds=("0 0|none" "18000 0|18 µs spinning" "0 262144|256 KiB written" "18000 262144|18 µs spinning, 256 KiB written" "0 1048576|1 MiB written")
rtt() { # MECH WORK_NS TOUCH -> median µs
    WORK_NS=$2 TOUCH=$3 timeout 120 "$work/wait-rtt" "$1" try-epoll "$a" "$b" "$COUNT" 64 |
        awk '{ printf "%.3f\n", $1 / 1000 }'
}
hold_poll
declare -A U T D
echo "server-work: $ROUNDS rounds, $COUNT round trips of 64 B, pins $PIN, try-epoll both sides, polling idle, $(nproc) CPUs"
for r in $(seq "$ROUNDS"); do
    for k in "${!kinds[@]}"; do
        read -r w t <<<"${kinds[$k]%%|*}"
        if ((r % 2)); then u=$(rtt unix "$w" "$t"); c=$(rtt tcp "$w" "$t"); else c=$(rtt tcp "$w" "$t"); u=$(rtt unix "$w" "$t"); fi
        d=$(awk -v u="$u" -v c="$c" 'BEGIN { printf "%.3f", c - u }')
        U[$k]+="$u " T[$k]+="$c " D[$k]+="$d "
        echo "round $r  ${kinds[$k]#*|}: unix $u µs, tcp $c µs, tcp - unix $d µs"
    done
done
echo
echo "| the server's work | unix µs | tcp µs | tcp - unix µs (min–max) |"
echo "|---|---|---|---|"
for k in "${!kinds[@]}"; do
    # shellcheck disable=SC2086
    read -r dm dlo dhi _ < <(summary ${D[$k]})
    # shellcheck disable=SC2086
    printf '| %s | %s | %s | %s (%s–%s) |\n' "${kinds[$k]#*|}" "$(median ${U[$k]})" "$(median ${T[$k]})" "$dm" "$dlo" "$dhi"
done
