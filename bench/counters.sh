#!/usr/bin/env bash
# What each message costs the machine (issue 57): the counters every series
# carries (context switches, CPU time, migrations of each side, from the
# kernel's own accounting), per message, for the cases the book explains them
# with, ROUNDS interleaved rounds (every case once a round), median (min–max):
#   - a pipe round trip across CPUs 0,1 and on CPU 0: switches of the client
#     and the server (a sleeping wait: ~1 each across CPUs, 2 in all);
#   - the shm ring with --wake spin across CPUs 0,1 (no switch: <= 0.01);
#   - a 64 KiB pipe stream on CPU 0 and across CPUs 0,1: switches per block.
# With COUNTERS_MD=FILE also writes the table in markdown, headed by the
# machine and date (the book includes docs/src/figures/counters-*.md).
#
#   bench/counters.sh                    # ROUNDS=5; IPCPERF=binary
#   COUNTERS_MD=docs/src/figures/counters-2vcpu.md bench/counters.sh
#
# Needs two CPUs and python3. Keeps nothing in the run history.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
export IPCPERF_NO_SAVE=1
bin=${IPCPERF:-target/release/ipcperf}
[ -x "$bin" ] || cargo build --release -q -p ipcperf
rounds=${ROUNDS:-5}
n=${COUNT:-20000}

# One run's one case, as "SWITCHES_W SWITCHES_R CPU_US MIGRATIONS" per message
# (the medians over its series; "-" where a side was not counted).
per_msg() {
    "$bin" "$@" -r 3 --no-save --format json 2>/dev/null | python3 -c '
import json, statistics, sys
c = json.load(sys.stdin)["cases"][0]
assert c["status"] == "ok", c.get("message")
def med(f):
    v = [f(s) for s in c["series"] if s["blocks"] > 0]
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None
def sw(side):
    return lambda s: (s[side]["voluntary_switches"] + s[side]["involuntary_switches"]) / s["blocks"] if side in s else None
w, r = med(sw("writer_counts")), med(sw("reader_counts"))
cpu = med(lambda s: (s["writer_cpu_ns"] + (s.get("reader_cpu_ns") or 0)) / s["blocks"] / 1e3)
mig = med(lambda s: sum((s.get(k) or {}).get("migrations", 0) for k in ("writer_counts", "reader_counts")) / s["blocks"])
f = lambda x: "-" if x is None else "%.4f" % x
print(f(w), f(r), f(cpu), f(mig))'
}

cases=(
    "pipe round trip, 512 B, across CPUs 0,1|latency pipe --pin 0,1 -n $n"
    "pipe round trip, 512 B, one CPU 0|latency pipe --pin 0,0 -n $n"
    "shm --wake spin round trip, 512 B, across CPUs 0,1|latency shm --wake spin --pin 0,1 -n $n"
    "pipe stream, 64 KiB, one CPU 0|run pipe --sizes 64k --pin 0,0 -d 300ms"
    "pipe stream, 64 KiB, across CPUs 0,1|run pipe --sizes 64k --pin 0,1 -d 300ms"
)
declare -A W R T C M
for i in $(seq "$rounds"); do
    # Every case once a round, the order turned each round.
    order=$(seq 0 $((${#cases[@]} - 1)))
    ((i % 2)) || order=$(echo "$order" | tac)
    for k in $order; do
        label=${cases[$k]%%|*}
        # shellcheck disable=SC2086
        read -r w r cpu mig < <(per_msg ${cases[$k]#*|})
        W[$k]+="$w " R[$k]+="$r " C[$k]+="$cpu " M[$k]+="$mig "
        T[$k]+="$(awk -v w="$w" -v r="$r" 'BEGIN { print w + (r == "-" ? 0 : r) }') "
        echo "  round $i: $label: switches $w + $r, CPU $cpu µs, migrations $mig a message" >&2
    done
done

# What perf's per-thread counters cost: a pipe round trip's p50 with them
# (IPCPERF_PERF_COUNTERS=1) over without (the default), across CPUs and on one,
# interleaved. Where perf may count nothing here (no rights, no PMU) both runs
# are alike.
p50() { "$bin" latency pipe --pin "$1" -n "$n" -r 3 --no-save --format json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["cases"][0]["p50_ns"])'; }
declare -A P
for i in $(seq "$rounds"); do
    for pin in 0,1 0,0; do
        if ((i % 2)); then
            with=$(IPCPERF_PERF_COUNTERS=1 p50 "$pin"); without=$(p50 "$pin")
        else
            without=$(p50 "$pin"); with=$(IPCPERF_PERF_COUNTERS=1 p50 "$pin")
        fi
        P[$pin]+="$(ratio "$with" "$without") "
        echo "  round $i: pipe round trip p50 CPUs $pin: perf counters on $with ns, off $without ns" >&2
    done
done
perf_on=$(IPCPERF_PERF_COUNTERS=1 "$bin" latency pipe --pin 0,1 -n 100 -r 1 --no-save --format json 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); c=d["cases"][0]["series"][0].get("writer_counts", {})
l=d["machine"]["state"].get("perf_not_counted", [])
print(", ".join(k for k in ("perf_switches", "cycles") if k in c) or "none", "|", "; ".join(l) or "-")')

fig() {
    # shellcheck disable=SC2086
    read -r m lo hi cnt < <(summary $1)
    [ "$cnt" = 0 ] && { echo "-"; return; }
    printf '%.3f (%.3f–%.3f)' "$m" "$lo" "$hi"
}
table() {
    echo "| case | switches, writer or client | switches, reader or server | switches in all | CPU µs, both sides | migrations |"
    echo "|---|---:|---:|---:|---:|---:|"
    for k in "${!cases[@]}"; do
        printf '| %s | %s | %s | %s | %s | %s |\n' "${cases[$k]%%|*}" "$(fig "${W[$k]}")" \
            "$(fig "${R[$k]}")" "$(fig "${T[$k]}")" "$(fig "${C[$k]}")" "$(fig "${M[$k]}")"
    done
    echo
    echo "Per message (a round trip, a block), the median of each run's three series; median (min–max) over the rounds."
    echo
    echo "| what perf's per-thread counters cost | p50 with / without |"
    echo "|---|---:|"
    for pin in 0,1 0,0; do
        printf '| pipe round trip, 512 B, CPUs %s | %s |\n' "$pin" "$(fig "${P[$pin]}")"
    done
    echo
    echo "perf's counters open here: ${perf_on%% |*}; not counted: ${perf_on#*| }."
}
table
if [ -n "${COUNTERS_MD:-}" ]; then
    { ROUNDS=$rounds measured_on bench/counters.sh; table; } >"$COUNTERS_MD"
fi
