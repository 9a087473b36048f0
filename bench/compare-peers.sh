#!/usr/bin/env bash
# ipcperf's throughput beside the standard tools', each row a peer and ipcperf on
# the same case, both pinned alike (ipcperf --pin, the peer under taskset), taken
# round after round in turned order; then bench/latency-peers.sh for the times.
# Prints one table: the peer, the case, the statistic compared (a rate over the
# whole transfer on both sides), each side's median, the ratio ipcperf / peer
# (median, range and rounds), which way is better and who came out ahead.
#
#   bench/compare-peers.sh            # ROUNDS=5; IPCPERF=path to use a built binary
#   PEERS_MD=file bench/compare-peers.sh   # also the tables in markdown, headed by the machine
#                                          # and date: the book includes docs/src/figures/peers-*.md
#
# Rows, on one CPU (0,0) and across two (0,1):
#   dd | dd            pipe, 64 KiB blocks, two processes: ipcperf --no-touch
#                      (dd's reader never reads the bytes; its writer has the kernel
#                      fill its buffer from /dev/zero, which ipcperf does not do)
#   C write | read     bench/floor/tight-pipe.c: the same calls with nothing else
#   iperf3             tcp over loopback, 128 KiB writes, --no-touch (iperf3 neither
#                      fills nor reads its buffer)
#   C tcp stream       bench/floor/tcp-stream.c: a write loop and a reader that fills
#                      128 KiB blocks, as ipcperf's
# and pinned to CPU 0:
#   perf bench mem     memcpy of 64 KiB, one thread, buffers laid out as perf's
#   hackbench          perf bench sched messaging (one group: 20 senders, each
#                      writing 100-byte messages to all of 20 receivers over Unix
#                      stream sockets, processes) beside ipcperf run unix --pairs 20
#                      --sizes 100: messages a second; not like for like (its
#                      all-to-all against ipcperf's 20 separate pairs; it times the
#                      whole job with start-up, ipcperf the series)
#
# Needs: dd (coreutils), cc, jq, taskset, iperf3, perf (Debian: linux-perf). Missing
# tools are installed with apt-get when run as root, otherwise the row says skipped.
# Benchmarks keep nothing in the run history.
export IPCPERF_NO_SAVE=1
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
export ROUNDS
IPCPERF=${IPCPERF:-target/release/ipcperf}
if [ ! -x "$IPCPERF" ]; then
  cargo build --release -q -p ipcperf
fi
# shellcheck source=bench/lib.sh
. bench/lib.sh
FLOOR=$(mktemp -d)
PEER_ROWS=$(mktemp)
trap 'rm -rf "$FLOOR" "$PEER_ROWS"' EXIT

need() { # need CMD PACKAGE
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2") >/dev/null 2>&1 || true
  fi
  command -v "$1" >/dev/null 2>&1
}
need jq jq || { echo "compare-peers: jq is needed to read ipcperf's JSON" >&2; exit 1; }
mbs() { awk -v x="$1" 'BEGIN { if (x + 0 > 0) printf "%.1f\n", x / 1e6 }'; }

# ipcperf's median MB/s (or, with FIELD, another of the only case's fields).
ipcperf_run() {
  "$IPCPERF" run "$@" --no-save --format json 2>/dev/null \
    | jq -r '.cases[0] | select(.status == "ok") | .median_bytes_per_sec / 1e6 | . * 10 | round / 10'
}

echo "compare-peers: $ROUNDS rounds a row; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"

TCPF=
command -v cc >/dev/null && cc -O2 -o "$FLOOR/tcp-stream" bench/floor/tcp-stream.c 2>/dev/null && TCPF=$FLOOR/tcp-stream
TIGHT=
if command -v cc >/dev/null && cc -O2 -o "$FLOOR/tight-pipe" bench/floor/tight-pipe.c 2>/dev/null; then
  TIGHT=$FLOOR/tight-pipe
fi

PLACEMENTS="0,0"
[ "$(nproc)" -ge 2 ] && PLACEMENTS="0,0 0,1"
for pl in $PLACEMENTS; do
  W=${pl%,*}; R=${pl#*,}
  where=$([ "$W" = "$R" ] && echo "one CPU ($pl)" || echo "two CPUs ($pl)")
  N=$([ "$W" = "$R" ] && echo 60000 || echo 20000)

  ours_pipe() { ipcperf_run pipe --mode processes --sizes 64k --no-touch --pin "$W,$R" --count "$N" --repeat 1; }
  # the reading dd reports bytes and seconds from its start to the end of file
  dd_pipe() {
    { taskset -c "$W" dd if=/dev/zero bs=64k count="$N" status=none | taskset -c "$R" dd of=/dev/null bs=64k; } 2>&1 \
      | awk '/copied/ { for (i = 1; i <= NF; i++) if ($i ~ /^s,?$/) secs = $(i - 1); printf "%.1f\n", $1 / secs / 1e6 }'
  }
  peer_row "dd | dd" "pipe 64 KiB, $where" "MB/s over the run" higher "0.95-1.05" ours_pipe dd_pipe
  if [ -n "$TIGHT" ]; then
    c_pipe() { mbs "$(taskset -c "$W" "$TIGHT" write "$N" 65536 | taskset -c "$R" "$TIGHT" read 65536)"; }
    peer_row "C write | read (floor)" "pipe 64 KiB, $where" "MB/s over the run" higher "0.95-1.05" ours_pipe c_pipe
  else
    peer_skip "C write | read (floor)" "pipe 64 KiB, $where" "no C compiler (cc)"
  fi

  if need iperf3 iperf3; then
    ours_tcp() { ipcperf_run tcp --mode processes --sizes 128k --no-touch --pin "$W,$R" --duration 2s --repeat 1; }
    iperf_tcp() {
      local port=$((20000 + RANDOM % 20000)) srv
      taskset -c "$R" iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
      srv=$!
      sleep 0.3
      taskset -c "$W" iperf3 -c 127.0.0.1 -p "$port" -l 128K -t 2 -J 2>/dev/null \
        | jq -r '.end.sum_received.bits_per_second / 8 / 1e6' || true
      wait "$srv" 2>/dev/null || true
    }
    peer_row "iperf3" "tcp loopback 128 KiB, $where" "MB/s over the run" higher "0.95-1.05" ours_tcp iperf_tcp
    if [ -n "$TCPF" ]; then
      c_tcp() {
        local port=$((20000 + RANDOM % 20000)) out=$FLOOR/tcp-recv
        taskset -c "$R" "$TCPF" recv 127.0.0.1 "$port" fill >"$out" &
        sleep 0.2
        taskset -c "$W" "$TCPF" send 127.0.0.1 "$port" 2 || true
        wait $! 2>/dev/null || true
        awk '{ if ($3 > 0) printf "%.1f\n", $3 / 1e6 }' "$out"
      }
      peer_row "C tcp stream (floor)" "tcp loopback 128 KiB, $where" "MB/s over the run" higher "0.95-1.05" ours_tcp c_tcp
    fi
  else
    peer_skip "iperf3" "tcp loopback 128 KiB, $where" "iperf3 not installed"
  fi
done

if need perf linux-perf && perf bench mem memcpy -s 1KB -l 1 >/dev/null 2>&1; then
  # perf copies between two calloc'd 64 KB buffers that malloc puts 16 bytes out of
  # line (src - dst = 65552); --buffer-offset 16 gives ipcperf the same layout.
  ours_memcpy() { ipcperf_run memcpy --sizes 64k --pin 0,0 --duration 1s --repeat 1 --buffer-offset 16; }
  # perf prints "GB/sec" as bytes / 2^30 a second
  perf_memcpy() {
    taskset -c 0 perf bench mem memcpy -f default -s 64KB -l 200000 2>/dev/null \
      | awk '/GB\/sec/ { printf "%.1f\n", $1 * 1073741824 / 1e6 }'
  }
  peer_row "perf bench mem memcpy" "memcpy 64 KiB, one thread, CPU 0" "MB/s over the run" higher "0.95-1.05" ours_memcpy perf_memcpy
else
  peer_skip "perf bench mem memcpy" "memcpy 64 KiB" "perf bench not available (apt-get install linux-perf)"
fi

if perf bench sched messaging -g 1 -l 1 >/dev/null 2>&1; then
  LOOPS=${LOOPS:-2000}
  ours_msgs() {
    "$IPCPERF" run unix --pairs 20 --sizes 100 --mode processes -d 1s -r 1 --no-save --format json 2>/dev/null \
      | jq -r '.cases[0] | select(.status == "ok") | .median_blocks_per_sec / 1000'
  }
  # hackbench's messages: 20 senders x 20 receivers x LOOPS, over its total time
  hackbench() {
    perf bench sched messaging -g 1 -l "$LOOPS" 2>/dev/null \
      | awk -v l="$LOOPS" '/Total time/ { if ($3 > 0) printf "%.1f\n", 20 * 20 * l / $3 / 1000 }'
  }
  peer_row "hackbench" "unix, 100 B, 40 processes" "thousand messages/s" higher \
    "not like for like: all-to-all, start-up timed" ours_msgs hackbench
else
  peer_skip "hackbench" "unix, 100 B, 40 processes" "perf bench not available (apt-get install linux-perf)"
fi

echo
echo "== throughput: ipcperf beside its peers ($ROUNDS rounds a row, order turned each round)"
peer_table
[ -n "${PEERS_MD:-}" ] && { measured_on bench/compare-peers.sh; peer_table markdown; echo; } >>"$PEERS_MD"

start=$(date +%s.%N)
"$IPCPERF" run --no-save >/dev/null 2>&1 || true
end=$(date +%s.%N)
echo "ipcperf run (the default suite): $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f s", b - a }') (target < 60 s)"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ -x bench/latency-peers.sh ]; then
  echo
  bench/latency-peers.sh
fi
