#!/usr/bin/env bash
# ipcperf across two "machines" (two network namespaces joined by a veth pair)
# against the standard tools on the same pair, each pair of figures taken in the
# same round (interleaved), printed as ratios: median and range over REPS.
#
#   1. Throughput: ipcperf run tcp --peer A (the data connection from A to B, the
#      reader on A) vs iperf3 -c A (client in B sends, server in A reads), both
#      128 KiB writes (iperf3's default), DUR seconds, the payload not touched
#      (iperf3 neither fills nor reads its buffer: ipcperf --no-touch). target: >= 1.0x
#      Beside them the C floor (bench/floor/tcp-stream.c: a write loop and a
#      read loop, nothing else) with three readers: blocking reads that each ask
#      for 128 KiB; reads that wait in select() first; and reads that each ask
#      for the rest of the 128 KiB block being filled, as iperf3's server and
#      ipcperf's TCP reader do. floor / iperf3 says what the machine gives a plain
#      pair of loops, ipcperf / floor (filling) what ipcperf's harness costs.
#   2. Round trips: ipcperf latency tcp --peer A --nodelay, 64 B, back to back vs
#      sockperf ping-pong --tcp -m 64 --full-rtt (server in A): p50.  target: <= 1.05x
#   Every client on CPU 0, every server side on CPU 1 (ipcperf: --pin 0,1
#   --peer-pin 1; the tools under taskset).
#      sockperf's client spins on its socket; ipcperf's client sleeps in its
#      receive unless --busy-poll: both ipcperf figures are printed, the busy-poll
#      one is the like-for-like.
#
# Needs root (ip netns), iproute2, iperf3, sockperf, jq, cc. Environment: REPS (5),
# DUR (2). IPCPERF=path uses a built binary (default target/release/ipcperf).
# Removes its namespaces on exit. Benchmarks keep nothing in the run history.
export IPCPERF_NO_SAVE=1
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-5}
DUR=${DUR:-2}
BIN=$(realpath "${IPCPERF:-target/release/ipcperf}")
[ -x "$BIN" ] || cargo build --release -q -p ipcperf
for t in ip iperf3 sockperf jq cc; do
    command -v "$t" >/dev/null || { echo "peer-veth: $t is needed" >&2; exit 1; }
done
A=ipcperf-bench-$$-a
B=ipcperf-bench-$$-b
FLOOR=$(mktemp -d)
cc -O2 -Wall -o "$FLOOR/tcp-stream" bench/floor/tcp-stream.c
cleanup() {
    rm -rf "$FLOOR"
    ip netns pids "$A" 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns pids "$B" 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns del "$A" 2>/dev/null || true
    ip netns del "$B" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$A"
ip netns add "$B"
ip link add vbench-a$$ type veth peer name vbench-b$$
ip link set vbench-a$$ netns "$A"
ip link set vbench-b$$ netns "$B"
ip -n "$A" addr add 10.236.0.1/30 dev vbench-a$$
ip -n "$B" addr add 10.236.0.2/30 dev vbench-b$$
for n in "$A" "$B"; do ip -n "$n" link set lo up; done
ip -n "$A" link set vbench-a$$ up
ip -n "$B" link set vbench-b$$ up
inA() { ip netns exec "$A" "$@"; }
inB() { ip netns exec "$B" "$@"; }
inA "$BIN" serve --listen 10.236.0.1:7787 --no-token >/dev/null 2>&1 &
inA taskset -c 1 iperf3 -s -B 10.236.0.1 >/dev/null 2>&1 &
inA taskset -c 1 sockperf server --tcp -i 10.236.0.1 -p 11411 >/dev/null 2>&1 &
sleep 1

# shellcheck source=bench/lib.sh
. bench/lib.sh
echo "peer-veth: $REPS rounds, $DUR s each; $(nproc) CPUs; MTU $(ip -n "$A" -o link show vbench-a$$ | sed 's/.*mtu \([0-9]*\).*/\1/'); TCP congestion control $(inA sysctl -n net.ipv4.tcp_congestion_control)"
# floor [select|fill]: the C pair's bytes per second (the reader in A on CPU 1, the
# writer in B on CPU 0): "select" for the reader that waits in select() first,
# "fill" for the one that asks only for the rest of its block, none for the
# one that asks for a whole block every read. Empty if the pair failed.
floor() {
    # Bounded: a sender that never connects must not leave the reader in accept().
    inA timeout $((DUR + 10)) taskset -c 1 "$FLOOR/tcp-stream" recv 10.236.0.1 7901 "$@" >"$FLOOR/recv" &
    local r=$!
    sleep 0.2
    inB timeout $((DUR + 10)) taskset -c 0 "$FLOOR/tcp-stream" send 10.236.0.1 7901 "$DUR" || true
    wait "$r" || true
    awk '{ print $3 }' "$FLOOR/recv"
}
# mb BYTES_PER_SECOND: MB/s, or n/a for a figure that failed.
mb() { awk -v x="$1" 'BEGIN { if (x + 0 > 0) printf "%.0f", x / 1e6; else print "n/a" }'; }
tp=(); aa=(); r50=(); b50=(); fl=(); fs=(); ff=(); hf=()
for i in $(seq "$REPS"); do
    # ipcperf, iperf3, iperf3 again and the three C floors, in an order that turns
    # each round (a machine that slows or speeds up within a round favours no
    # one); the two iperf3 figures against each other are the A/A ratio, the
    # noise the comparison stands in.
    for k in 0 1 2 3 4 5; do
        case $(((i + k) % 6)) in
            0) j=$(inB "$BIN" run tcp --peer 10.236.0.1 --pin 0,1 --peer-pin 1 --sizes 128k --no-touch -d "${DUR}s" --repeat 1 --format json 2>/dev/null)
               ip_bps=$(jq -r '.cases[0].median_bytes_per_sec // "n/a"' <<<"$j") ;;
            1) ip3=$(inB taskset -c 0 iperf3 -c 10.236.0.1 -l 128K -t "$DUR" -J 2>/dev/null | jq -r '.end.sum_received.bits_per_second / 8') ;;
            2) ip3b=$(inB taskset -c 0 iperf3 -c 10.236.0.1 -l 128K -t "$DUR" -J 2>/dev/null | jq -r '.end.sum_received.bits_per_second / 8') ;;
            3) fb=$(floor) ;;
            4) fsel=$(floor select) ;;
            5) ffill=$(floor fill) ;;
        esac
    done
    t=$(ratio "$ip_bps" "$ip3"); tp+=("$t")
    aa+=("$(ratio "$ip3b" "$ip3")")
    fl+=("$(ratio "$fb" "$ip3")"); fs+=("$(ratio "$fsel" "$ip3")")
    ff+=("$(ratio "$ffill" "$ip3")"); hf+=("$(ratio "$ip_bps" "$ffill")")
    j=$(inB "$BIN" latency tcp --peer 10.236.0.1 --pin 0,1 --peer-pin 1 --nodelay --sizes 64 -d "${DUR}s" --repeat 1 --busy-poll --format json 2>/dev/null)
    bp=$(jq -r '.cases[0].p50_ns / 1000' <<<"$j")
    j=$(inB "$BIN" latency tcp --peer 10.236.0.1 --pin 0,1 --peer-pin 1 --nodelay --sizes 64 -d "${DUR}s" --repeat 1 --format json 2>/dev/null)
    sl=$(jq -r '.cases[0].p50_ns / 1000' <<<"$j")
    sp=$(inB taskset -c 0 sockperf ping-pong --tcp -i 10.236.0.1 -p 11411 -m 64 -t "$DUR" --full-rtt 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | awk '/percentile 50.000/ {print $NF}')
    r50+=("$(ratio "$bp" "$sp")"); b50+=("$(ratio "$sl" "$sp")")
    printf '  round %d: ipcperf %s MB/s | iperf3 %s MB/s | %s | C floor %s, select %s, filling %s MB/s   RTT p50 ipcperf --busy-poll %s us, sleeping %s us | sockperf %s us\n' \
        "$i" "$(mb "$ip_bps")" "$(mb "$ip3")" "$t" "$(mb "$fb")" "$(mb "$fsel")" "$(mb "$ffill")" "$bp" "$sl" "$sp"
done
echo "  throughput ipcperf --peer / iperf3:        $(spread "${tp[@]}")   target >= 1.0"
echo "  throughput iperf3 / iperf3 (A/A, the noise): $(spread "${aa[@]}")"
echo "  throughput C floor, blocking read / iperf3:  $(spread "${fl[@]}")"
echo "  throughput C floor, select, read / iperf3:   $(spread "${fs[@]}")"
echo "  throughput C floor, filling read / iperf3:   $(spread "${ff[@]}")"
echo "  throughput ipcperf --peer / C floor (filling): $(spread "${hf[@]}")"
echo "  RTT p50 ipcperf --busy-poll / sockperf:    $(spread "${r50[@]}")   target <= 1.05"
echo "  RTT p50 ipcperf (client sleeps) / sockperf: $(spread "${b50[@]}")"
