#!/usr/bin/env bash
# The CPU's idle state against a cross-CPU round trip: each sleeping mechanism
# across CPUs 0 and 1 with the machine's idle state as it is, and with
# `--idle poll` (/dev/cpu_dma_latency held at 0, what cyclictest does: no idle
# state deeper than polling), in interleaved rounds (odd rounds as-is first,
# even rounds poll first). Prints the p50 of each (median and range over the
# rounds), their ratio, the idle cost each as-is run's note states (its p50
# less its own series at polling idle) beside the difference of the two runs,
# and the 64 KiB pipe stream both ways; with IDLE_MD=FILE also writes the
# tables in markdown, headed by the machine and date (the book includes
# docs/src/figures/idle-*.md).
#
#   bench/idle.sh                   # ROUNDS=3, 20,000 round trips a series
#   IDLE_MD=docs/src/figures/idle-2vcpu.md ROUNDS=5 bench/idle.sh
#
# Needs root (to write /dev/cpu_dma_latency) and two CPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
bin=${IPCPERF:-target/release/ipcperf}
mechs=${MECHS:-pipe unix shm}
n=${COUNT:-20000}
[ -w /dev/cpu_dma_latency ] || { echo "bench/idle.sh: /dev/cpu_dma_latency is not writable (root?)" >&2; exit 2; }

# One latency run, one line per mechanism: "NAME P50 PROBE" (µs): the p50,
# and the p50 of the one series the run takes at polling idle for its note
# (what it states as the idle cost is P50 - PROBE); "-" where it took none.
p50s() {
    # shellcheck disable=SC2086
    "$bin" latency $mechs --pin 0,1 -n "$n" -r 1 --no-save --format json "$@" 2>/dev/null |
        python3 -c 'import json,sys
for c in json.load(sys.stdin)["cases"]:
    if c["status"] == "ok":
        p = (c.get("idle_probe") or {}).get("p50_ns")
        print(c["mechanism"], c["p50_ns"] / 1000, "-" if p is None else p / 1000)'
}

# The pipe stream at 64 KiB across CPUs: "MB/s PROBE_MB/s" (the same run's
# series at polling idle).
stream() {
    "$bin" run pipe --sizes 64k --pin 0,1 -r 1 -d 300ms --no-save --format json "$@" 2>/dev/null |
        python3 -c 'import json,sys
c = json.load(sys.stdin)["cases"][0]
p = (c.get("idle_probe") or {}).get("bytes_per_sec")
print(c["median_bytes_per_sec"] / 1e6, "-" if p is None else p / 1e6)'
}

declare -A asis held stated
sa="" sh=""
for i in $(seq "${ROUNDS:-3}"); do
    # Interleaved: odd rounds as-is first, even rounds --idle poll first.
    if ((i % 2)); then a=$(p50s); h=$(p50s --idle poll); else h=$(p50s --idle poll); a=$(p50s); fi
    while read -r m v p; do
        asis[$m]+="$v "
        [ "$p" = - ] || stated[$m]+="$(awk -v v="$v" -v p="$p" 'BEGIN { print v - p }') "
    done <<<"$a"
    while read -r m v _; do held[$m]+="$v "; done <<<"$h"
    read -r s _ < <(stream)
    read -r t _ < <(stream --idle poll)
    sa+="$s " sh+="$t "
    echo "  round $i: as-is: $(echo $a) | --idle poll: $(echo $h) | pipe 64 KiB: $s / $t MB/s" >&2
done

table() {
    echo "| mechanism, 512 B round trip across CPUs 0,1 | p50 as the machine idles, µs | p50 with \`--idle poll\`, µs | poll / as-is | idle cost the note states, µs | as-is − poll, µs |"
    echo "|---|---:|---:|---:|---:|---:|"
    for m in $mechs; do
        # shellcheck disable=SC2086
        read -r am alo ahi _ < <(summary ${asis[$m]:-})
        # shellcheck disable=SC2086
        read -r hm hlo hhi _ < <(summary ${held[$m]:-})
        # shellcheck disable=SC2086
        read -r sm slo shi _ < <(summary ${stated[$m]:-0})
        printf '| %s | %.1f (%.1f–%.1f) | %.1f (%.1f–%.1f) | %s | %.1f (%.1f–%.1f) | %.1f |\n' "$m" \
            "$am" "$alo" "$ahi" "$hm" "$hlo" "$hhi" \
            "$(awk -v a="$am" -v h="$hm" 'BEGIN { printf "%.2f", h / a }')" "$sm" "$slo" "$shi" \
            "$(awk -v a="$am" -v h="$hm" 'BEGIN { printf "%.1f", a - h }')"
    done
    # shellcheck disable=SC2086
    read -r s slo shi _ < <(summary $sa)
    # shellcheck disable=SC2086
    read -r t tlo thi _ < <(summary $sh)
    echo
    echo "| pipe stream, 64 KiB blocks across CPUs 0,1 | MB/s as the machine idles | MB/s with \`--idle poll\` | poll / as-is |"
    echo "|---|---:|---:|---:|"
    printf '| pipe | %.0f (%.0f–%.0f) | %.0f (%.0f–%.0f) | %s |\n' "$s" "$slo" "$shi" "$t" "$tlo" "$thi" \
        "$(awk -v a="$s" -v h="$t" 'BEGIN { printf "%.2f", h / a }')"
}
table
if [ -n "${IDLE_MD:-}" ]; then
    { measured_on bench/idle.sh; table; } >"$IDLE_MD"
fi
