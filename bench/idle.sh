#!/usr/bin/env bash
# The CPU's idle state against a cross-CPU round trip: each sleeping mechanism
# across CPUs 0 and 1 with the machine's idle state as it is, and with
# /dev/cpu_dma_latency held at 0 (what cyclictest does: no idle state deeper than
# polling), in interleaved rounds (odd rounds as-is first, even rounds held
# first). Prints the p50 of each (median and range over the rounds) and their
# ratio; with IDLE_MD=FILE also writes the table in markdown, headed by the
# machine and date (the book includes docs/src/figures/idle-*.md).
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

# p50s (µs) of one latency run, one line per mechanism: "NAME P50".
p50s() {
    # shellcheck disable=SC2086
    "$bin" latency $mechs --pin 0,1 -n "$n" -r 1 --no-save --format json 2>/dev/null |
        python3 -c 'import json,sys
for c in json.load(sys.stdin)["cases"]:
    if c["status"] == "ok": print(c["mechanism"], c["p50_ns"] / 1000)'
}

# The same with the PM QoS request held at 0 while it runs (a descriptor open
# for the run: the kernel drops the request when it is closed).
p50s_held() {
    exec 3>/dev/cpu_dma_latency
    printf '\0\0\0\0' >&3
    p50s
    exec 3>&-
}

declare -A asis held
for i in $(seq "${ROUNDS:-3}"); do
    if ((i % 2)); then a=$(p50s); h=$(p50s_held); else h=$(p50s_held); a=$(p50s); fi
    while read -r m v; do asis[$m]+="$v "; done <<<"$a"
    while read -r m v; do held[$m]+="$v "; done <<<"$h"
    echo "  round $i: as-is: $(echo $a) | held at 0: $(echo $h)" >&2
done

table() {
    echo "| mechanism, 512 B round trip across CPUs 0,1 | p50 as the machine idles, µs | p50 with \`/dev/cpu_dma_latency\` held at 0, µs | held / as-is |"
    echo "|---|---:|---:|---:|"
    for m in $mechs; do
        # shellcheck disable=SC2086
        read -r am alo ahi _ < <(summary ${asis[$m]:-})
        # shellcheck disable=SC2086
        read -r hm hlo hhi _ < <(summary ${held[$m]:-})
        printf '| %s | %.1f (%.1f–%.1f) | %.1f (%.1f–%.1f) | %s |\n' "$m" "$am" "$alo" "$ahi" \
            "$hm" "$hlo" "$hhi" "$(awk -v a="$am" -v h="$hm" 'BEGIN { printf "%.2f", h / a }')"
    done
}
table
if [ -n "${IDLE_MD:-}" ]; then
    { measured_on bench/idle.sh; table; } >"$IDLE_MD"
fi
