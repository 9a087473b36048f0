#!/usr/bin/env bash
# How soon a `--peer` run hears that the server's machine vanished (principle 6:
# a dead peer is a clear error within 2 s). Two network namespaces joined by a
# veth pair, `ipcperf serve` in one; each trial starts a 30 s series from the
# other and takes the server's link down (no reset, nothing sent back: a host
# powered off) at a random moment 1.5-2.5 s into it, so every phase of the
# control connection's keepalive probes is met; then times the client from the
# link going down to its exit. Per case: min, median, max, and the trials over
# 2 s. Root (namespaces); the machine otherwise idle.
#
#   bench/vanish.sh [--trials N] [--bin PATH]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
trials=12 bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --trials) trials=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "usage: $0 [--trials N] [--bin PATH]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "bench/vanish.sh: network namespaces need root" >&2; exit 2; }
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release -q -p ipcperf)
  bin="$root/target/release/ipcperf"
fi
tag="v$$"
a="ipcperf-$tag-a" b="ipcperf-$tag-b" va="${tag}a" vb="${tag}b"
cleanup() {
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
}
trap cleanup EXIT
hosts() {
  ip netns add "$a"
  ip netns add "$b"
  ip link add "$va" type veth peer name "$vb"
  ip link set "$va" netns "$a"
  ip link set "$vb" netns "$b"
  ip -n "$a" addr add 10.238.0.1/30 dev "$va"
  ip -n "$b" addr add 10.238.0.2/30 dev "$vb"
  ip -n "$a" link set "$va" up
  ip -n "$b" link set "$vb" up
  ip -n "$a" link set lo up
  ip -n "$b" link set lo up
}
# One trial of `ipcperf ARGS --peer`: the seconds from the link down to the
# client's exit, and its exit status.
trial() {
  hosts
  ip netns exec "$a" "$bin" serve --listen 10.238.0.1:7787 --no-token 2>/dev/null &
  local server=$!
  sleep 0.5
  ip netns exec "$b" "$bin" "$@" --peer 10.238.0.1 -d 30s -r 1 --no-save >/dev/null 2>&1 &
  local client=$!
  sleep "$(python3 -c 'import random; print(1.5 + random.random())')"
  ip -n "$a" link set "$va" down
  local t0 t1 rc=0
  t0=$(date +%s.%N)
  wait "$client" || rc=$?
  t1=$(date +%s.%N)
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  cleanup
  echo "$t0 $t1 $rc"
}
echo "$trials trials a case, the server's link down 1.5-2.5 s into a 30 s series"
for case in "run udp --sizes 1k" "run tcp --sizes 64k" "latency udp" "latency tcp"; do
  # shellcheck disable=SC2086
  for _ in $(seq "$trials"); do trial $case; done | python3 -c '
import sys, statistics
name = sys.argv[1]
took, codes = [], set()
for line in sys.stdin:
    t0, t1, rc = line.split()
    took.append(float(t1) - float(t0))
    codes.add(rc)
over = sum(t > 2.0 for t in took)
print(f"  {name:<22} min {min(took):.2f} s, median {statistics.median(took):.2f} s, "
      f"max {max(took):.2f} s; over 2 s: {over} of {len(took)}; exit {sorted(codes)}")
' "$case"
done
