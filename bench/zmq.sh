#!/usr/bin/env bash
# ipcperf's ZeroMQ mechanisms against ZeroMQ's own latency tools (libzmq's
# perf/local_lat and perf/remote_lat, built from the libzmq source the zmq crate
# vendors, linked to the same static libzmq ipcperf links), each pair of figures
# taken in the same round (interleaved), printed as ratios: median and range.
#
#   Round trips, REQ/REP, SIZE bytes (64), over ipc:// and tcp:// (loopback):
#   remote_lat prints its "average latency" = elapsed / (2 x round trips), half a
#   mean round trip, over untouched messages; ipcperf's like-for-like figure is
#   its mean round trip / 2 with --no-touch.                 target: within 10%
#   What still differs: remote_lat sends and receives the same zmq_msg_t (no copy
#   in or out); ipcperf copies its buffer into each message and each reply out of
#   it (what zmq_send/zmq_recv users pay), and reads the clock around every round
#   trip (its own cost subtracted).
#   Both sides pinned: the asker on CPU 0, the answerer on CPU 1 (PIN overrides).
#
# Needs g++ and jq; builds ipcperf with --all-features (zmq among them).
# Environment: REPS (5), COUNT (round trips per figure, 20000), SIZE (64).
# Keeps nothing in the run history; removes its socket paths.
export IPCPERF_NO_SAVE=1
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-5}
COUNT=${COUNT:-20000}
SIZE=${SIZE:-64}
A=${A:-0}
B=${B:-1}
for t in g++ jq taskset; do
    command -v "$t" >/dev/null || { echo "zmq: $t is needed" >&2; exit 1; }
done
cargo build --release -q -p ipcperf --all-features
BIN=$(realpath target/release/ipcperf)
LIB=$(find target/release/build -path '*zmq-sys-*/out/lib/libzmq.a' -printf '%T@ %p\n' | sort -rn | head -1 | cut -d' ' -f2)
SRC=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -maxdepth 2 -type d -name 'zeromq-src-*' | sort | tail -1)/vendor
[ -f "$LIB" ] && [ -f "$SRC/perf/local_lat.cpp" ] || { echo "zmq: no vendored libzmq found" >&2; exit 1; }
W=$(mktemp -d)
trap 'pkill -f "$W/local_lat" 2>/dev/null || true; rm -rf "$W"' EXIT
for t in local_lat remote_lat; do
    g++ -O2 -I"$SRC/include" "$SRC/perf/$t.cpp" "$LIB" -lpthread -o "$W/$t"
done

# shellcheck source=bench/lib.sh
. bench/lib.sh
# zmq's own figure: half a mean round trip, in us.
own() {
    taskset -c "$B" "$W/local_lat" "$1" "$SIZE" "$COUNT" >/dev/null &
    local srv=$!
    sleep 0.2
    taskset -c "$A" "$W/remote_lat" "$2" "$SIZE" "$COUNT" | awk '/average latency/ { print $3 }'
    wait "$srv" 2>/dev/null || true
}
ours() {
    "$BIN" latency "$1" --sizes "$SIZE" --count "$COUNT" --pin "$A,$B" --no-touch --repeat 1 \
        --format json 2>/dev/null | jq -r '.cases[0].mean_ns / 2000'
}
echo "zmq: $REPS rounds of $COUNT round trips, $SIZE B; $(nproc) CPUs; libzmq from $(basename "$(dirname "$SRC")")"
declare -A r
for i in $(seq "$REPS"); do
    line="  round $i:"
    for t in ipc tcp; do
        if [ "$t" = ipc ]; then
            bind="ipc://$W/lat.sock"; conn=$bind
        else
            port=$((20000 + RANDOM % 20000))
            bind="tcp://127.0.0.1:$port"; conn=$bind
        fi
        z=$(own "$bind" "$conn")
        o=$(ours "zmq-$t" | xargs printf "%.1f")
        x=$(awk -v a="$o" -v b="$z" 'BEGIN { printf "%.3f", a / b }')
        r[$t]+="$x "
        line+=" $t ipcperf $o us / zmq $z us = $x |"
    done
    echo "$line"
done
for t in ipc tcp; do
    # shellcheck disable=SC2086
    echo "zmq-$t: ipcperf mean RTT/2 over remote_lat's average latency: $(spread ${r[$t]})"
done
