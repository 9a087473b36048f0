#!/usr/bin/env bash
# ipcperf's round trips beside the standard tools' and the C floors', each row a
# peer and ipcperf on the same case, pinned alike, taken round after round in
# turned order, and compared statistic with statistic (a mean with a mean, a
# median with a median). Prints one table: the peer, the case, the statistic,
# each side's median over the rounds, the ratio ipcperf / peer (median, range and
# rounds), which way is better and who came out ahead; then vmsplice against the
# pipe (ipcperf against itself) and bench/shm-peers.sh.
#
#   bench/latency-peers.sh                 # ROUNDS=5; IPCPERF=path to use a built binary
#   PEERS_MD=file bench/latency-peers.sh   # also the table in markdown, headed by the machine
#                                          # and date: the book includes docs/src/figures/peers-*.md
#
# Rows:
#   perf bench sched pipe   two processes on CPU 0 passing 4 bytes over two pipes;
#                           it prints usecs/op, the mean round trip (it reads no
#                           clock per round trip; ipcperf and the C floor read two)
#   C pipe round trip       bench/floor/pipe-rtt.c: the same calls and clock reads as
#                           ipcperf, nothing else: 4 B on CPU 0 (mean), 64 B across
#                           CPUs 0,1 (median: cross-CPU wake-ups here are bimodal)
#   sockperf ping-pong      tcp over loopback, 64 B, TCP_NODELAY, --full-rtt (its
#                           default is half the round trip), CPUs TCP_PIN: p50 and mean
#   sockperf under-load     udp, 64 B, RATE a second, every message answered, client
#                           on CPU 0 and server on 1: p50 and p99, ipcperf --busy-poll
#                           (sockperf's client spins); sockperf times each round trip
#                           from its send, ipcperf from when it was due
#   C paced udp             bench/floor/paced-udp.c spin: ipcperf --busy-poll's calls
#   lat_sem's form          bench/floor/lat-sem.c (lmbench's lat_sem loop: one semop a
#                           turn on a SysV set) beside sync sysv-sem-onecall --untimed:
#                           the mean cycle, one CPU and two
#
# Environment: ROUNDS (5), COUNT round trips a series (100000), TCP_PIN (0,0),
# FLOORS (a folder of the C floors built already, for a machine without cc),
# RATE (1000), SP_TIME seconds of each sockperf run (3), SP_PORT (11211), SHM_PEERS
# (1; 0 leaves out bench/shm-peers.sh).
# Needs: jq, taskset, cc; perf (Debian: linux-perf), sockperf: a missing one makes
# its rows say skipped. Benchmarks keep nothing in the run history.
export IPCPERF_NO_SAVE=1
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
export ROUNDS
COUNT=${COUNT:-100000}
TCP_PIN=${TCP_PIN:-0,0}
RATE=${RATE:-1000}
SP_PORT=${SP_PORT:-11211}
SP_TIME=${SP_TIME:-3}
BIN=${IPCPERF:-target/release/ipcperf}
if [ ! -x "$BIN" ]; then
  cargo build --release -q -p ipcperf
fi
command -v jq >/dev/null || { echo "latency-peers: jq is needed to read ipcperf's JSON" >&2; exit 1; }
# shellcheck source=bench/lib.sh
. bench/lib.sh
FLOOR=$(mktemp -d)
PEER_ROWS=$(mktemp)
trap 'rm -rf "$FLOOR" "$PEER_ROWS"' EXIT
CROSS=0,1
[ "$(nproc)" -ge 2 ] || CROSS=

# ipcperf latency's FIELD (p50_ns, mean_ns, p99_ns) of its only case, in us.
ipcperf_us() {
  local field=$1; shift
  "$BIN" latency "$@" --repeat 1 --format json 2>/dev/null \
    | jq -r ".cases[0] | select(.status == \"ok\") | .$field / 1000"
}
# A C floor: built here, or taken ready-made from FLOORS (a machine without cc).
cbuild() {
  if [ -n "${FLOORS:-}" ] && [ -x "$FLOORS/$1" ]; then cp "$FLOORS/$1" "$FLOOR/$1"; return; fi
  command -v cc >/dev/null && cc -O2 -pthread -o "$FLOOR/$1" "bench/floor/$1.c" 2>/dev/null
}

echo "latency-peers: $ROUNDS rounds a row, $COUNT round trips a series; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. pipes: perf bench sched pipe and the C floor.
if perf bench sched pipe -l 10 >/dev/null 2>&1; then
  ours() { ipcperf_us mean_ns pipe --mode processes --sizes 4 --pin 0,0 --count "$COUNT"; }
  theirs() { taskset -c 0 perf bench sched pipe -l "$COUNT" 2>/dev/null | awk '/usecs\/op/ { print $1 }'; }
  peer_row "perf bench sched pipe" "pipe 4 B, one CPU (0,0)" "mean round trip, us" lower "0.95-1.05" ours theirs
else
  peer_skip "perf bench sched pipe" "pipe 4 B, one CPU (0,0)" "perf not installed or not permitted (apt-get install linux-perf)"
fi
if cbuild pipe-rtt; then
  theirs() { taskset -c 0 "$FLOOR/pipe-rtt" 0 0 "$COUNT" 4 mean | awk '{ print $1 / 1000 }'; }
  peer_row "C pipe round trip (floor)" "pipe 4 B, one CPU (0,0)" "mean round trip, us" lower "0.95-1.05" ours theirs
  if [ -n "$CROSS" ]; then
    n=$((COUNT / 5))
    ours() { ipcperf_us p50_ns pipe --mode processes --sizes 64 --pin "$CROSS" --count "$n"; }
    theirs() { "$FLOOR/pipe-rtt" 0 1 "$n" 64 median | awk '{ print $1 / 1000 }'; }
    peer_row "C pipe round trip (floor)" "pipe 64 B, two CPUs ($CROSS)" "median round trip, us" lower "0.95-1.05" ours theirs
  fi
else
  peer_skip "C pipe round trip (floor)" "pipe" "no C compiler (cc)"
fi

# 2. sockperf: ping-pong over tcp, under-load over udp (with the C floor of
#    ipcperf --busy-poll's paced round trips).
ul=(udp --sizes 64 --rate "$RATE" --pin 0,1 -d "${SP_TIME}s" --busy-poll)
ours_ul() { ipcperf_us p50_ns "${ul[@]}"; }
ours_ul99() { ipcperf_us p99_ns "${ul[@]}"; }
if command -v sockperf >/dev/null; then
  A_CPU=${TCP_PIN%,*}; B_CPU=${TCP_PIN#*,}
  # sockperf's client against a server pinned like ipcperf's two sides; its
  # percentile lines and its average, colour codes stripped.
  sockperf_out() { # MODE ARGS...
    local mode=$1 srv; shift
    taskset -c "$B_CPU" sockperf server -i 127.0.0.1 -p "$SP_PORT" "$@" >/dev/null 2>&1 &
    srv=$!
    sleep 0.5
    taskset -c "$A_CPU" sockperf "$mode" -i 127.0.0.1 -p "$SP_PORT" "$@" -m 64 --full-rtt -t "$SP_TIME" \
      ${SP_EXTRA:-} 2>&1 | sed 's/\x1b\[[0-9;]*m//g' || true
    kill "$srv" 2>/dev/null || true
    wait "$srv" 2>/dev/null || true
  }
  sp_p50() { awk '/percentile 50.000/ { print $NF }'; }
  sp_p99() { awk '/percentile 99.000/ { print $NF }'; }
  sp_avg() { sed -n 's/.*avg-rtt=\([0-9.]*\).*/\1/p; s/.*avg-latency=\([0-9.]*\).*/\1/p' | head -1; }
  pp=(tcp --sizes 64 --nodelay --mode processes --pin "$TCP_PIN" --count "$COUNT")
  ours() { ipcperf_us p50_ns "${pp[@]}"; }
  theirs() { sockperf_out ping-pong --tcp | sp_p50; }
  peer_row "sockperf ping-pong" "tcp 64 B, CPUs $TCP_PIN" "median round trip, us" lower "0.95-1.05" ours theirs
  ours() { ipcperf_us mean_ns "${pp[@]}"; }
  theirs() { sockperf_out ping-pong --tcp | sp_avg; }
  peer_row "sockperf ping-pong" "tcp 64 B, CPUs $TCP_PIN" "mean round trip, us" lower "0.95-1.05" ours theirs

  if [ -n "$CROSS" ]; then
    A_CPU=0; B_CPU=1
    under() { SP_EXTRA="--mps $RATE --reply-every 1" sockperf_out under-load; }
    unlike="not like for like: its client is two threads on one CPU"
    theirs() { under | sp_p50; }
    peer_row "sockperf under-load" "udp 64 B at $RATE/s, CPUs 0,1" "median round trip, us" lower "$unlike" ours_ul theirs
    theirs() { under | sp_p99; }
    peer_row "sockperf under-load" "udp 64 B at $RATE/s, CPUs 0,1" "p99 round trip, us" lower "$unlike" ours_ul99 theirs
  fi
else
  peer_skip "sockperf" "tcp ping-pong, udp under-load" "sockperf not installed (apt-get install sockperf)"
fi

if [ -n "$CROSS" ] && cbuild paced-udp; then
  floor() { "$FLOOR/paced-udp" "$RATE" $((RATE * SP_TIME)) 64 spin 0 1; }
  theirs() { floor | awk '{ print $2 }'; }
  peer_row "C paced udp (floor)" "udp 64 B at $RATE/s, CPUs 0,1" "median round trip, us" lower "0.95-1.05" ours_ul theirs
  theirs() { floor | awk '{ print $4 }'; }
  peer_row "C paced udp (floor)" "udp 64 B at $RATE/s, CPUs 0,1" "p99 round trip, us" lower "0.95-1.05" ours_ul99 theirs
fi

# 3. lat_sem's form: one semop a turn on a SysV set, untimed.
if cbuild lat-sem; then
  for pl in 0,0 $CROSS; do
    a=${pl%,*}; b=${pl#*,}
    ours() {
      "$BIN" -q sync sysv-sem-onecall --untimed --mode processes --pin "$a,$b" -d 300ms -r 1 \
        --latency-samples 0 --format json 2>/dev/null \
        | jq -r '.cases[0].sync.set_clear_gross_ns // empty | . / 1000'
    }
    theirs() { "$FLOOR/lat-sem" "$([ "$a" = "$b" ] && echo 100000 || echo 20000)" "$a" "$b" | awk '{ print $1 / 1000 }'; }
    where=$([ "$a" = "$b" ] && echo "one CPU ($pl)" || echo "two CPUs ($pl)")
    peer_row "lat_sem's form (C)" "sysv-sem-onecall, $where" "mean cycle, us" lower "0.95-1.05" ours theirs
  done
else
  peer_skip "lat_sem's form (C)" "sysv-sem-onecall" "no C compiler (cc)"
fi

echo
echo "== round trips: ipcperf beside its peers ($ROUNDS rounds a row, order turned each round)"
peer_table
[ -n "${PEERS_MD:-}" ] && { measured_on bench/latency-peers.sh; peer_table markdown; echo; } >>"$PEERS_MD"
echo

# ipcperf against itself: the zero-copy path's gain (target >= 2).
for pin in 0,0 $CROSS; do
  vs=()
  for _ in $(seq "$ROUNDS"); do
    json=$("$BIN" run vmsplice pipe --mode processes --sizes 64k --no-touch --pin "$pin" \
      --duration 1s --repeat 3 --format json 2>/dev/null)
    v=$(jq -r '.cases[] | select(.mechanism == "vmsplice") | .median_bytes_per_sec // 0' <<<"$json")
    p=$(jq -r '.cases[] | select(.mechanism == "pipe") | .median_bytes_per_sec // 0' <<<"$json")
    vs+=("$(ratio "$v" "$p")")
  done
  echo "vmsplice / pipe MB/s, 64 KiB, --no-touch, CPUs $pin: $(spread "${vs[@]}")   target >= 2"
done

# The shm targets (throughput vs memcpy, round trip vs pipe) in their own script.
if [ "${SHM_PEERS:-1}" = 1 ] && [ -x bench/shm-peers.sh ]; then bench/shm-peers.sh; fi
