#!/usr/bin/env bash
# Side-by-side round-trip and zero-copy figures, each pair measured in the same run
# and pinned alike, printed as ratios (ipcperf / reference). Repeated REPS times;
# the spread of each ratio is shown. No figure here is a guess: a tool that is
# missing is reported as skipped.
#
#   pipe RTT, two processes, 4 bytes, both on CPU 0:
#       ipcperf latency pipe --sizes 4 --pin 0,0   vs  taskset -c 0 perf bench sched pipe
#       (perf: two processes exchanging 4 bytes over two pipes; usecs/op is its
#        mean round trip)                                  target: p50 <= 1.05x
#   tcp RTT, 64 bytes, loopback, TCP_NODELAY (sockperf's default):
#       ipcperf latency tcp --sizes 64 --nodelay  vs  sockperf ping-pong --full-rtt
#       (sockperf's default report is half the round trip; --full-rtt reports the
#        whole one, so both sides are RTTs)                target: p50 <= 1.05x
#   vmsplice vs pipe throughput at 64 KiB, two processes, --no-touch, on the
#   same CPU (0,0) and on two CPUs (0,1):
#                                                          target: >= 2x
#
# Environment: REPS (default 3), COUNT round trips per run (default 100000),
# TCP_PIN "A,B" CPUs for the tcp pair (default 0,0), SP_PORT (default 11211),
# SP_TIME seconds of sockperf ping-pong (default 3).
# Needs: cargo, jq, taskset; perf (Debian package linux-perf), sockperf.
# IPCPERF=path uses a built binary (default target/release/ipcperf, built if missing).
# Benchmarks keep nothing in the run history.
export IPCPERF_NO_SAVE=1
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-3}
COUNT=${COUNT:-100000}
TCP_PIN=${TCP_PIN:-0,0}
SP_PORT=${SP_PORT:-11211}
SP_TIME=${SP_TIME:-3}
A_CPU=${TCP_PIN%,*}
B_CPU=${TCP_PIN#*,}

BIN=${IPCPERF:-target/release/ipcperf}
if [ ! -x "$BIN" ]; then
  cargo build --release -q -p ipcperf
fi
command -v jq >/dev/null || { echo "latency-peers: jq is needed to read ipcperf's JSON" >&2; exit 1; }

have_perf=1
perf bench sched pipe -l 10 >/dev/null 2>&1 || have_perf=0
have_sockperf=1
command -v sockperf >/dev/null || have_sockperf=0

# ipcperf round trip p50 and mean in microseconds: "<p50_us> <mean_us>".
ipcperf_rtt() {
    "$BIN" latency "$@" --count "$COUNT" --repeat 1 --format json 2>/dev/null |
        jq -r '.cases[0] | if .status == "ok" then "\(.p50_ns / 1000) \(.mean_ns / 1000)" else "FAILED \(.message)" end'
}

# perf's usecs/op (mean round trip).
perf_pipe() {
    taskset -c 0 perf bench sched pipe -l "$COUNT" 2>/dev/null | awk '/usecs\/op/ {print $1}'
}

# sockperf's RTT p50 and mean (usec), server and client pinned like ipcperf's two sides.
sockperf_rtt() {
    taskset -c "$B_CPU" sockperf server -i 127.0.0.1 -p "$SP_PORT" --tcp >/dev/null 2>&1 &
    local srv=$!
    sleep 0.5
    local out
    out=$(taskset -c "$A_CPU" sockperf ping-pong -i 127.0.0.1 -p "$SP_PORT" --tcp -m 64 \
        --full-rtt -t "$SP_TIME" 2>&1 | sed 's/\x1b\[[0-9;]*m//g')
    kill "$srv" 2>/dev/null || true
    wait "$srv" 2>/dev/null || true
    local p50 avg
    p50=$(printf '%s\n' "$out" | awk '/percentile 50.000/ {print $NF}')
    avg=$(printf '%s\n' "$out" | sed -n 's/.*avg-rtt=\([0-9.]*\).*/\1/p; s/.*avg-latency=\([0-9.]*\).*/\1/p' | head -1)
    echo "$p50 $avg"
}


# shellcheck source=bench/lib.sh
. bench/lib.sh

echo "latency-peers: $REPS runs, $COUNT round trips each; $(nproc) CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

pipe_ratios=()
pipe_mean_ratios=()
if [ "$have_perf" = 1 ]; then
    echo "== pipe round trip, 4 B, two processes, same CPU (0,0)"
    for i in $(seq "$REPS"); do
        read -r ip50 imean < <(ipcperf_rtt pipe --mode processes --sizes 4 --pin 0,0)
        pu=$(perf_pipe)
        r=$(ratio "$ip50" "$pu")
        rm=$(ratio "$imean" "$pu")
        pipe_ratios+=("$r")
        pipe_mean_ratios+=("$rm")
        printf '  run %d: ipcperf p50 %.3f us (mean %.3f) | perf bench sched pipe %.3f us/op (a mean) | p50/perf %s, mean/perf %s\n' \
            "$i" "$ip50" "$imean" "$pu" "$r" "$rm"
    done
    echo "  ratio ipcperf p50 / perf us/op:  $(spread "${pipe_ratios[@]}")   target <= 1.05"
    echo "  ratio ipcperf mean / perf us/op: $(spread "${pipe_mean_ratios[@]}")   (like with like: perf reports a mean)"
else
    echo "== pipe round trip: skipped (perf is not installed or not permitted: apt-get install linux-perf)"
fi
echo

tcp_ratios=()
tcp_mean_ratios=()
if [ "$have_sockperf" = 1 ]; then
    echo "== tcp round trip, 64 B, loopback, TCP_NODELAY, CPUs $TCP_PIN (sockperf --full-rtt: RTT both sides)"
    for i in $(seq "$REPS"); do
        read -r ip50 imean < <(ipcperf_rtt tcp --mode processes --sizes 64 --nodelay --pin "$TCP_PIN")
        read -r sp50 savg < <(sockperf_rtt)
        r=$(ratio "$ip50" "$sp50")
        rm=$(ratio "$imean" "$savg")
        tcp_ratios+=("$r")
        tcp_mean_ratios+=("$rm")
        printf '  run %d: ipcperf p50 %.3f us (mean %.3f) | sockperf RTT p50 %.3f us (avg %s) | p50 ratio %s, mean ratio %s\n' \
            "$i" "$ip50" "$imean" "$sp50" "$savg" "$r" "$rm"
    done
    echo "  ratio ipcperf p50 / sockperf p50:   $(spread "${tcp_ratios[@]}")   target <= 1.05"
    echo "  ratio ipcperf mean / sockperf mean: $(spread "${tcp_mean_ratios[@]}")"
else
    echo "== tcp round trip: skipped (sockperf is not installed: apt-get install sockperf)"
fi
echo

for pin in 0,0 0,1; do
    echo "== vmsplice vs pipe throughput, 64 KiB, two processes, --no-touch, CPUs $pin"
    vs_ratios=()
    for i in $(seq "$REPS"); do
        json=$("$BIN" run vmsplice pipe --mode processes --sizes 64k --no-touch --pin "$pin" \
            --duration 1s --repeat 3 --format json 2>/dev/null)
        v=$(jq -r '.cases[] | select(.mechanism == "vmsplice") | .median_bytes_per_sec // 0' <<<"$json")
        p=$(jq -r '.cases[] | select(.mechanism == "pipe") | .median_bytes_per_sec // 0' <<<"$json")
        r=$(ratio "$v" "$p")
        vs_ratios+=("$r")
        printf '  run %d: vmsplice %.0f MB/s | pipe %.0f MB/s | ratio %s\n' \
            "$i" "$(awk -v x="$v" 'BEGIN{print x/1e6}')" "$(awk -v x="$p" 'BEGIN{print x/1e6}')" "$r"
    done
    echo "  ratio vmsplice / pipe ($pin): $(spread "${vs_ratios[@]}")   target >= 2"
    echo
done

# The shm targets (throughput vs memcpy, round trip vs pipe) in their own script.
[ -x bench/shm-peers.sh ] && bench/shm-peers.sh
