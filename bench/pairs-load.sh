#!/usr/bin/env bash
# Many pairs and paced load against their references, each pair of figures taken
# in the same round (interleaved), printed as ratios: median and range over REPS.
#
#   1. --pairs 1 against today's single pair, same CPUs (0,1), same run:
#        ipcperf run pipe unix --pairs 1  vs  ipcperf run pipe unix --pin 0,1 (64 KiB)
#        ipcperf latency unix --pairs 1   vs  ipcperf latency unix --pin 0,1  (64 B)
#                                                       target: ratio within the noise
#   2. Many pairs against hackbench (perf bench sched messaging --pipe, 1 group:
#      20 senders x 20 receivers, 100-byte messages, processes), messages/s:
#        ipcperf run pipe --pairs 20 --sizes 100 --mode processes (40 processes too)
#      What differs: hackbench's 20 senders each write to all 20 receivers' pipes (every
#      pipe has 20 writers, all-to-all, a fan-in and fan-out at once) and it times the
#      whole exchange; ipcperf's 20 pairs each have a pipe of their own, and only the
#      series is timed. Reported as a ratio, not a target.
#   3. Paced round trips against sockperf under-load, same rate, 64 B, loopback,
#      client on CPU 0 and server on CPU 1, every message answered (--reply-every 1,
#      --full-rtt so both report round trips):
#        ipcperf latency udp|tcp --rate R --pin 0,1  vs  sockperf under-load --mps R
#                                                       target: p50 and p99 within 10%
#      sockperf times each round trip from its actual send; ipcperf from when it was
#      due (no coordinated omission): far from saturation the two should agree.
#      sockperf's client never sleeps (it spins between sends and polls for the
#      answer: ~1 CPU busy), so ipcperf runs like for like with --busy-poll (the
#      client spins, the server blocks, as sockperf's server does). ipcperf's
#      default client sleeps between sends and in its receive; that figure is
#      printed beside, as a ratio to sockperf, for what the wake-ups cost here.
#
# Environment: REPS (default 5), RATES (default "1000 5000"), SP_TIME (default 3), PROTOS
# (default "udp tcp"),
# SECTIONS (default "1 2 3": which of the three to run),
# SP_PORT (default 11311). IPCPERF=path uses a built binary (default
# target/release/ipcperf, built if missing). Needs jq, taskset; perf (linux-perf)
# and sockperf for their parts (skipped, and said so, when missing).
export IPCPERF_NO_SAVE=1
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-5}
RATES=${RATES:-"1000 5000"}
SECTIONS=${SECTIONS:-"1 2 3"}
want() { [[ " $SECTIONS " == *" $1 "* ]]; }
SP_TIME=${SP_TIME:-3}
SP_PORT=${SP_PORT:-11311}
BIN=${IPCPERF:-target/release/ipcperf}
if [ ! -x "$BIN" ]; then
  cargo build --release -q -p ipcperf
fi
command -v jq >/dev/null || { echo "pairs-load: jq is needed" >&2; exit 1; }

# shellcheck source=bench/lib.sh
. bench/lib.sh

echo "pairs-load: $REPS rounds; $(nproc) CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

if want 1; then
echo "== 1. --pairs 1 against a single pair on the same CPUs (0,1)"
tp_pipe=(); tp_unix=(); rt=()
for i in $(seq "$REPS"); do
    # Alternate which goes first: a drifting host would otherwise favour one side.
    if [ $((i % 2)) = 1 ]; then
        a=$("$BIN" run pipe unix --sizes 64k --pairs 1 -d 500ms -r 3 --format json 2>/dev/null)
        b=$("$BIN" run pipe unix --sizes 64k --pin 0,1 -d 500ms -r 3 --format json 2>/dev/null)
    else
        b=$("$BIN" run pipe unix --sizes 64k --pin 0,1 -d 500ms -r 3 --format json 2>/dev/null)
        a=$("$BIN" run pipe unix --sizes 64k --pairs 1 -d 500ms -r 3 --format json 2>/dev/null)
    fi
    for m in pipe unix; do
        x=$(jq -r ".cases[] | select(.mechanism == \"$m\") | .median_bytes_per_sec" <<<"$a")
        y=$(jq -r ".cases[] | select(.mechanism == \"$m\") | .median_bytes_per_sec" <<<"$b")
        r=$(ratio "$x" "$y")
        if [ "$m" = pipe ]; then tp_pipe+=("$r"); else tp_unix+=("$r"); fi
        printf '  round %d %-4s 64 KiB: --pairs 1 %.0f MB/s | --pin 0,1 %.0f MB/s | ratio %s\n' \
            "$i" "$m" "$(awk -v v="$x" 'BEGIN{print v/1e6}')" "$(awk -v v="$y" 'BEGIN{print v/1e6}')" "$r"
    done
    x=$("$BIN" latency unix --sizes 64 --pairs 1 -d 500ms -r 3 --format json 2>/dev/null | jq -r '.cases[0].p50_ns')
    y=$("$BIN" latency unix --sizes 64 --pin 0,1 -d 500ms -r 3 --format json 2>/dev/null | jq -r '.cases[0].p50_ns')
    r=$(ratio "$x" "$y"); rt+=("$r")
    printf '  round %d unix 64 B round trip p50: --pairs 1 %s ns | --pin 0,1 %s ns | ratio %s\n' "$i" "$x" "$y" "$r"
done
echo "  pipe MB/s, --pairs 1 / single: $(spread "${tp_pipe[@]}")"
echo "  unix MB/s, --pairs 1 / single: $(spread "${tp_unix[@]}")"
echo "  unix RTT p50, --pairs 1 / single: $(spread "${rt[@]}")"
echo
fi

if ! want 2; then
    :
elif perf bench sched messaging -p -l 1 >/dev/null 2>&1; then
    echo "== 2. 20 pipe pairs (40 processes) against perf bench sched messaging --pipe (1 group, 40 processes)"
    hb=()
    LOOPS=2000
    for i in $(seq "$REPS"); do
        ip=$("$BIN" run pipe --pairs 20 --sizes 100 --mode processes -d 1s -r 1 --format json 2>/dev/null |
            jq -r '.cases[0].median_blocks_per_sec')
        secs=$(perf bench sched messaging -p -g 1 -l "$LOOPS" 2>/dev/null | awk '/Total time/ {print $3}')
        hbr=$(awk -v s="$secs" -v l="$LOOPS" 'BEGIN { printf "%.0f", 20 * 20 * l / s }')
        r=$(ratio "$ip" "$hbr"); hb+=("$r")
        printf '  round %d: ipcperf %.0f messages/s | hackbench %s messages/s (%s s for %d) | ratio %s\n' \
            "$i" "$ip" "$hbr" "$secs" $((20 * 20 * LOOPS)) "$r"
    done
    echo "  ipcperf / hackbench messages/s: $(spread "${hb[@]}")   (different exchanges: see the header)"
else
    echo "== 2. hackbench: skipped (perf is not installed or not permitted: apt-get install linux-perf)"
fi
echo

if ! want 3; then
    :
elif command -v sockperf >/dev/null; then
    # The C floor of the same paced UDP round trips (bench/floor/paced-udp.c), in
    # both of ipcperf's client designs: what the mechanism costs with nothing else.
    FLOOR=$(mktemp -d)
    trap 'rm -rf "$FLOOR"' EXIT
    floor=""
    if command -v cc >/dev/null && cc -O2 -pthread -o "$FLOOR/paced-udp" bench/floor/paced-udp.c 2>/dev/null; then
        floor="$FLOOR/paced-udp"
    else
        echo "  (no C compiler: the floor columns are skipped)"
    fi
    for proto in ${PROTOS:-udp tcp}; do
        for rate in $RATES; do
            echo "== 3. $proto paced round trips, 64 B, $rate/s, CPUs 0 (client) and 1 (server)"
            p50s=(); p99s=(); b50s=(); aa50s=(); aa99s=(); fl50s=(); fl99s=(); gl50s=(); tl50s=(); tl99s=()
            flag=""; [ "$proto" = tcp ] && flag="--tcp"
            for i in $(seq "$REPS"); do
                j=$("$BIN" latency "$proto" --sizes 64 --rate "$rate" --pin 0,1 -d "${SP_TIME}s" -r 1 \
                    $([ "$proto" = tcp ] && echo --nodelay) --busy-poll --format json 2>/dev/null)
                ip50=$(jq -r '.cases[0].p50_ns / 1000' <<<"$j")
                ip99=$(jq -r '.cases[0].p99_ns / 1000' <<<"$j")
                j=$("$BIN" latency "$proto" --sizes 64 --rate "$rate" --pin 0,1 -d "${SP_TIME}s" -r 1 \
                    $([ "$proto" = tcp ] && echo --nodelay) --format json 2>/dev/null)
                bp50=$(jq -r '.cases[0].p50_ns / 1000' <<<"$j")
                # sockperf twice: the second run against the first is the A/A ratio,
                # the noise any comparison here stands in.
                sp() {
                    taskset -c 1 sockperf server -i 127.0.0.1 -p "$SP_PORT" $flag >/dev/null 2>&1 &
                    local srv=$!
                    sleep 0.5
                    taskset -c 0 sockperf under-load -i 127.0.0.1 -p "$SP_PORT" $flag -m 64 \
                        --mps "$rate" --reply-every 1 --full-rtt -t "$SP_TIME" 2>&1 | sed 's/\x1b\[[0-9;]*m//g'
                    kill "$srv" 2>/dev/null || true
                    wait "$srv" 2>/dev/null || true
                }
                out=$(sp)
                s50=$(awk '/percentile 50.000/ {print $NF}' <<<"$out")
                s99=$(awk '/percentile 99.000/ {print $NF}' <<<"$out")
                out=$(sp)
                a50=$(awk '/percentile 50.000/ {print $NF}' <<<"$out")
                a99=$(awk '/percentile 99.000/ {print $NF}' <<<"$out")
                if [ -n "$floor" ] && [ "$proto" = udp ]; then
                    n=$((rate * SP_TIME))
                    read -r _ f50 _ f99 < <("$floor" "$rate" "$n" 64 spin 0 1)
                    read -r _ g50 _ _ < <("$floor" "$rate" "$n" 64 sleep 0 1)
                    read -r _ t50 _ t99 < <("$floor" "$rate" "$n" 64 thread 0 1)
                    fl50s+=("$(ratio "$ip50" "$f50")"); fl99s+=("$(ratio "$ip99" "$f99")")
                    gl50s+=("$(ratio "$bp50" "$g50")")
                    tl50s+=("$(ratio "$s50" "$t50")"); tl99s+=("$(ratio "$s99" "$t99")")
                    printf '  round %d: C floor spin p50 %s p99 %s us, sleep p50 %s us, thread p50 %s p99 %s us\n' \
                        "$i" "$f50" "$f99" "$g50" "$t50" "$t99"
                fi
                r50=$(ratio "$ip50" "$s50"); r99=$(ratio "$ip99" "$s99"); rb=$(ratio "$bp50" "$s50")
                aa50=$(ratio "$a50" "$s50"); aa99=$(ratio "$a99" "$s99")
                p50s+=("$r50"); p99s+=("$r99"); b50s+=("$rb"); aa50s+=("$aa50"); aa99s+=("$aa99")
                printf '  round %d: ipcperf --busy-poll p50 %.1f p99 %.1f us | sockperf p50 %s p99 %s us | ratios %s %s | sockperf again %s %s | sleeping client p50 %.1f us (%s)\n' \
                    "$i" "$ip50" "$ip99" "$s50" "$s99" "$r50" "$r99" "$aa50" "$aa99" "$bp50" "$rb"
            done
            echo "  p50 sockperf / sockperf (A/A, the noise): $(spread "${aa50s[@]}")"
            echo "  p99 sockperf / sockperf (A/A, the noise): $(spread "${aa99s[@]}")"
            echo "  p50 ipcperf --busy-poll / sockperf: $(spread "${p50s[@]}")   target within 10%"
            echo "  p99 ipcperf --busy-poll / sockperf: $(spread "${p99s[@]}")   target within 10%"
            echo "  p50 ipcperf (client sleeps) / sockperf: $(spread "${b50s[@]}")   not like for like"
            if [ ${#fl50s[@]} -gt 0 ]; then
                echo "  p50 ipcperf --busy-poll / C floor (spin): $(spread "${fl50s[@]}")"
                echo "  p99 ipcperf --busy-poll / C floor (spin): $(spread "${fl99s[@]}")"
                echo "  p50 ipcperf (client sleeps) / C floor (sleep): $(spread "${gl50s[@]}")"
                echo "  p50 sockperf / C floor (thread: sockperf's design): $(spread "${tl50s[@]}")"
                echo "  p99 sockperf / C floor (thread: sockperf's design): $(spread "${tl99s[@]}")"
            fi
            echo
        done
    done
else
    echo "== 3. sockperf: skipped (apt-get install sockperf)"
fi
