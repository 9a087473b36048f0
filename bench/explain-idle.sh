#!/usr/bin/env bash
# `--explain` under the machine's idle and under `--idle poll` (issue 53): a
# pipe round trip across CPUs 0,1, ROUNDS interleaved rounds (odd rounds
# as-is first), each a traced run of 2,000 round trips a series. Prints the
# median (min-max over the rounds) of the parts that hold the wake-ups (the
# server's wake-up, 0 where the tracer does not see it; the server's return
# from its wait, which then holds it, and here always holds its run-queue
# wait; the wake-up back), the traced and the untraced round trip; with
# EXPLAIN_IDLE_MD=FILE also writes the table, headed by the machine and date
# (the book includes docs/src/figures/explain-idle-*.md).
#
#   EXPLAIN_IDLE_MD=docs/src/figures/explain-idle-2vcpu.md ROUNDS=5 bench/explain-idle.sh
#
# Needs root (tracing, and /dev/cpu_dma_latency) and a cpuidle state deeper
# than polling.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
bin=${IPCPERF:-target/release/ipcperf}
rounds=${ROUNDS:-3}
out=$(mktemp /tmp/ipcperf-explain-idle.XXXXXX)
trap 'rm -f "$out"' EXIT

# One traced run: "IDLE wake receive_return reply_wake traced untraced" (µs).
one() {
    "$bin" latency pipe --pin 0,1 --explain -n 2000 -r 1 --idle "$1" --no-save --format json \
        2>/dev/null | python3 -c 'import json,sys
c = json.load(sys.stdin)["cases"][0]
e = c["explain"]
p = {x["name"]: x["median_ns"] / 1000 for x in e["parts"]}
print(sys.argv[1], p.get("wake", 0.0), p.get("receive_return", "n/a"), p.get("reply_wake", "n/a"),
      e["traced_median_ns"] / 1000, e["untraced_median_ns"] / 1000)' "$1"
}

for i in $(seq "$rounds"); do
    if ((i % 2)); then one as-is; one poll; else one poll; one as-is; fi >>"$out"
    echo "  round $i: $(tail -2 "$out" | tr '\n' ' ')" >&2
done

table() {
    echo "| part (median, µs) | \`--idle as-is\` | \`--idle poll\` |"
    echo "|---|---:|---:|"
    local col name
    for col in 2 3 4 5 6; do
        case $col in
            2) name="wake-up (the server's: waking to runnable)" ;;
            3) name="server's return from its wait" ;;
            4) name="wake-up back" ;;
            5) name="the traced round trip" ;;
            6) name="the untraced round trip (the timed series)" ;;
        esac
        # shellcheck disable=SC2046
        read -r am alo ahi _ < <(summary $(awk -v c=$col '$1 == "as-is" { print $c }' "$out"))
        # shellcheck disable=SC2046
        read -r pm plo phi _ < <(summary $(awk -v c=$col '$1 == "poll" { print $c }' "$out"))
        printf '| %s | %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) |\n' "$name" "$am" "$alo" "$ahi" \
            "$pm" "$plo" "$phi"
    done
}
table
if [ -n "${EXPLAIN_IDLE_MD:-}" ]; then
    { measured_on bench/explain-idle.sh; table; } >"$EXPLAIN_IDLE_MD"
fi
