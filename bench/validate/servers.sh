#!/usr/bin/env bash
# ipcperf's predictions checked against real servers: PostgreSQL under pgbench -S
# (select-only, one client, no pipelining) and Redis under redis-benchmark (GET,
# one client, no pipelining), each over its Unix socket and over TCP loopback,
# the server pinned to one CPU and its load tool to another, with the machine's
# own idle state and with polling idle (/dev/cpu_dma_latency held at 0).
#
# Beside each, ipcperf's prediction for that traffic: the mean round trip of
# `ipcperf latency unix tcp --wait W --sizes SIZE` on the same CPUs, with W the
# waits the real programs use, as strace shows them: pgbench reads first and
# waits in ppoll(2) when the read fails (EAGAIN), its backend the same in
# epoll_wait(2): try-poll/try-epoll; Redis and redis-benchmark wait in
# epoll_wait, then read: epoll. Beside them, what the wait changes: the
# event loop's wait-first form for PostgreSQL (poll/epoll), and blocking
# reads (block).
# A transaction's time is one over the load tool's rate (a mean, so ipcperf's
# mean round trip stands beside it). The server's own time per transaction is
# measured once, over Unix: the real Unix time less ipcperf's Unix round trip
# there (so ipcperf predicts the TCP time, the TCP - Unix difference and the
# Unix / TCP ratio; its Unix time is the anchor, not a prediction).
#
#   bench/validate/servers.sh     # ROUNDS=5 T=3 (seconds a load run) SIZE=64 PIN=0,1
#   SERVERS="postgres redis"      # which; a missing one is skipped, said so
#   IPCPERF=path                  # a built binary (default target/release/ipcperf)
#
# The book's pages: bench/figures.sh docs/src/figures/validate-servers-2vcpu.md
# bench/validate/servers.sh, then bench/validate/table.sh on that page for the
# summary the advise chapter includes.
#
# Message sizes: pgbench -S sends a 62-byte simple query and gets ~70 bytes back;
# redis-benchmark GET -d 64: a 37-byte request, a 71-byte reply. ipcperf sends
# the same bytes both ways: SIZE (64) stands for both.
# Needs: root (runuser for PostgreSQL's own user, the idle hold), jq, taskset;
# postgresql (Debian: postgresql), redis-server and redis-benchmark (Debian:
# redis-server, redis-tools). Starts private servers on ports of its own and
# removes them; keeps nothing in the run history.
export IPCPERF_NO_SAVE=1
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/lib.sh
. bench/lib.sh

ROUNDS=${ROUNDS:-5}
T=${T:-3}
SIZE=${SIZE:-64}
PIN=${PIN:-0,1}
SERVERS=${SERVERS:-postgres redis}
BIN=${IPCPERF:-target/release/ipcperf}
[ -x "$BIN" ] || cargo build --release -q -p ipcperf
CLIENT=${PIN%,*}
SERVER=${PIN#*,}
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
work=$(mktemp -d)
chmod 755 "$work"
PGPORT=54329
RPORT=63799

cleanup() {
    [ -z "$HOLD" ] || kill "$HOLD" 2>/dev/null || true
    if [ -n "$PGBIN" ] && [ -d "$work/pg" ]; then
        runuser -u postgres -- "$PGBIN/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
    fi
    [ -z "${REDIS_PID:-}" ] || kill "$REDIS_PID" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

have_pg=0
if [[ " $SERVERS " == *" postgres "* ]]; then
    if [ -n "$PGBIN" ] && command -v pgbench >/dev/null && id postgres >/dev/null 2>&1; then
        # The data, the log and the socket where PostgreSQL's own user may write.
        mkdir "$work/pg" "$work/pgrun" && chown postgres "$work/pg" "$work/pgrun"
        runuser -u postgres -- "$PGBIN/initdb" -D "$work/pg" -A trust -U postgres >/dev/null
        # The postmaster on the server's CPU: every backend it forks inherits it.
        runuser -u postgres -- taskset -c "$SERVER" "$PGBIN/pg_ctl" -D "$work/pg" -l "$work/pgrun/log" -w \
            -o "-p $PGPORT -k $work/pgrun -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
        pgbench -h "$work/pgrun" -p "$PGPORT" -U postgres -i -s 1 -q postgres >/dev/null 2>&1
        have_pg=1
    else
        echo "servers: postgres skipped: PostgreSQL's server and pgbench are needed (Debian: postgresql)"
    fi
fi
have_redis=0
if [[ " $SERVERS " == *" redis "* ]]; then
    if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
        taskset -c "$SERVER" redis-server --port "$RPORT" --bind 127.0.0.1 --unixsocket "$work/redis.sock" \
            --save '' --appendonly no --io-threads 1 >"$work/redis.log" 2>&1 &
        REDIS_PID=$!
        for _ in $(seq 50); do [ -S "$work/redis.sock" ] && break; sleep 0.1; done
        have_redis=1
    else
        echo "servers: redis skipped: redis-server and redis-benchmark are needed (Debian: redis-server, redis-tools)"
    fi
fi

# One transaction's mean time in µs, from the load tool's rate.
pg_us() { # unix|tcp
    local host=$work/pgrun
    [ "$1" = tcp ] && host=127.0.0.1
    timeout $((T + 30)) taskset -c "$CLIENT" pgbench -h "$host" -p "$PGPORT" -U postgres -S -n -c 1 -j 1 -T "$T" postgres 2>/dev/null |
        awk '/^tps/ { printf "%.3f\n", 1e6 / $3 }'
}
redis_us() { # unix|tcp
    local where=(-s "$work/redis.sock")
    [ "$1" = tcp ] && where=(-h 127.0.0.1 -p "$RPORT")
    # -n sized to run about T seconds at ~25k requests/s.
    timeout $((T * 4 + 30)) taskset -c "$CLIENT" redis-benchmark "${where[@]}" -c 1 -P 1 -t get -d 64 -n $((T * 25000)) --csv -q 2>/dev/null |
        awk -F, '/"GET"/ { gsub(/"/, "", $2); printf "%.3f\n", 1e6 / $2 }'
}
# ipcperf's mean round trip (µs) per transport and wait: "unix:W:us ..." lines.
ours() { # IDLE
    "$BIN" latency unix tcp --wait block,poll/epoll,try-poll/try-epoll,epoll --pin "$PIN" --sizes "$SIZE" \
        --mode processes -d 1s -r 1 --idle "$1" --format json 2>/dev/null |
        jq -r '.cases[] | select(.status == "ok") | "\(.mechanism):\(.wait) \(.mean_ns / 1000)"'
}

declare -A F
add() { F[$1]="${F[$1]:-} $2"; }
idles="as-is poll"
echo "servers: $ROUNDS rounds; load runs of $T s; $SIZE B; client on CPU $CLIENT, server on CPU $SERVER; $(nproc) CPUs; idle driver $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)"
for r in $(seq 1 "$ROUNDS"); do
    for idle in $idles; do
        [ "$idle" = poll ] && hold_poll
        order="unix tcp"
        [ $((r % 2)) = 0 ] && order="tcp unix"
        for tr in $order; do
            if [ "$have_pg" = 1 ]; then v=$(pg_us "$tr"); add "$idle pg $tr" "$v"; echo "round $r $idle postgres $tr ${v} µs"; fi
            if [ "$have_redis" = 1 ]; then v=$(redis_us "$tr"); add "$idle redis $tr" "$v"; echo "round $r $idle redis $tr ${v} µs"; fi
        done
        release_hold
        while read -r key us; do
            add "$idle ipcperf $key" "$us"
            echo "round $r $idle ipcperf $key ${us} µs"
        done < <(ours "$idle")
    done
done

m() { # KEY -> median
    # shellcheck disable=SC2086
    median ${F[$1]:-n/a}
}
calc() { awk "BEGIN { x = $1; printf \"%.2f\", x }"; }
echo
echo "Medians over the rounds, µs a transaction (real) or a round trip (ipcperf, mean)."
echo
echo "| idle | server | waits | real unix | real tcp | real tcp - unix | real unix/tcp | server's own time (real unix - ipcperf unix) | predicted tcp | predicted tcp - unix | predicted unix/tcp | tcp - unix: predicted / real |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for idle in $idles; do
    for srv in pg redis; do
        name=postgres; own="try-poll/try-epoll poll/epoll"
        [ "$srv" = redis ] && { name=redis; own=epoll; }
        [ -n "${F[$idle $srv unix]:-}" ] || continue
        ru=$(m "$idle $srv unix"); rt=$(m "$idle $srv tcp")
        for w in $own block; do
            iu=$(m "$idle ipcperf unix:$w"); it=$(m "$idle ipcperf tcp:$w")
            s=$(calc "$ru - $iu"); pt=$(calc "$it + $s")
            printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$idle" "$name" "$w" "$ru" "$rt" \
                "$(calc "$rt - $ru")" "$(calc "$ru / $rt")" "$s" "$pt" "$(calc "$it - $iu")" "$(calc "$ru / $pt")" \
                "$(awk -v p="$(calc "$it - $iu")" -v q="$(calc "$rt - $ru")" 'BEGIN { if (q == 0) print "n/a"; else printf "%.2f", p / q }')"
        done
    done
done
