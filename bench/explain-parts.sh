#!/usr/bin/env bash
# The explain chapter's tables (issue 52: every figure of the book from one
# source): `latency pipe --explain -n 2000 -r 5` across CPUs (--pin 0,1) and on
# one CPU (--pin 0,0), one run each, as the table prints its parts, with the
# run's sum, traced and untraced round trip, tracing's cost and the wake-ups'
# IPI share. With EXPLAIN_MD=FILE also writes them, headed by the machine and
# date (the book includes docs/src/figures/explain-*.md).
#
#   EXPLAIN_MD=docs/src/figures/explain-2vcpu.md bench/explain-parts.sh
#
# Needs root (tracing) and two CPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
bin=${IPCPERF:-target/release/ipcperf}

# One run's table in markdown: "### TITLE", the parts, and a line of totals.
parts() {
    "$bin" latency pipe --pin "$1" --explain -n 2000 -r 5 --no-save --format json 2>/dev/null |
        python3 -c 'import json,sys
c = json.load(sys.stdin)["cases"][0]
e = c["explain"]
names = {"client_to_send": "client, to its send call", "send_call": "send call, to the wake-up",
         "wake": "wake-up (waking to runnable)", "run_queue": "run queue (runnable to running)",
         "receive_return": "server'"'"'s return from its wait", "server_turn": "server, to its reply call",
         "reply_call": "reply call, to the wake-up", "reply_wake": "wake-up back",
         "reply_run_queue": "run queue back", "reply_return": "client'"'"'s return from its wait",
         "client_after": "client, after its wait"}
print("`ipcperf latency pipe --pin %s --explain -n 2000 -r 5`:" % sys.argv[1])
print()
print("| part | median µs | p99 µs | share |")
print("|---|---:|---:|---:|")
for p in e["parts"]:
    if p["median_ns"] == 0 and p["share"] == 0:
        continue
    print("| %s | %.2f | %.2f | %.0f%% |" % (names.get(p["name"], p["name"]), p["median_ns"] / 1e3,
          p["p99_ns"] / 1e3, 100 * p["share"]))
print()
print("The parts'"'"' sum %.1f µs, the traced round trip %.1f µs, the untraced %.1f µs (tracing costs "
      "×%.2f); a side was asleep in %.0f%% of the round trips, %.0f%% of the wake-ups sent an IPI, "
      "%d wake-ups showed no sched_wakeup or switch-in, %d their sched_wakeup but no switch-in; "
      "traced by %s (%s)%s." % (e["sum_median_ns"] / 1e3,
      e["traced_median_ns"] / 1e3, e["untraced_median_ns"] / 1e3, e["overhead_ratio"],
      100 * e["woken_share"], 100 * e["ipi_share"], e.get("wakeups_unseen", 0),
      e.get("switch_ins_unseen", 0), e.get("tracer", "perf"), e.get("tracer_reason", ""),
      "; the traced series ran in another regime" if e.get("other_regime") else ""))' "$1"
}

all() {
    parts 0,1
    echo
    parts 0,0
}
if [ -n "${EXPLAIN_MD:-}" ]; then
    { ROUNDS=1 measured_on bench/explain-parts.sh; all; } | tee "$EXPLAIN_MD"
else
    all
fi
