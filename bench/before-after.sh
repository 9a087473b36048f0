#!/usr/bin/env bash
# Two builds of ipcperf side by side (a refactoring must not move a figure): the
# peer benchmarks (compare-peers, latency-peers, shm-peers) run with each binary
# in turn, ROUNDS times, interleaved (old, new, old, new, ...), so both see the
# same machine. Every ratio those scripts print is ipcperf against a reference
# measured in the same round, so the old and new ratios compare directly.
#
#   bench/before-after.sh OLD_BINARY NEW_BINARY      # ROUNDS=2, SCRIPTS="compare latency shm"
#
# Prints each script's table for every round and binary, labelled; the caller
# reads the ratios side by side (and their spread across rounds as the noise).
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=${1:?usage: bench/before-after.sh OLD NEW}
NEW=${2:?usage: bench/before-after.sh OLD NEW}
ROUNDS=${ROUNDS:-2}
SCRIPTS=${SCRIPTS:-"compare latency shm"}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
for s in $SCRIPTS; do
  for r in $(seq 1 "$ROUNDS"); do
    for side in old new; do
      bin=$OLD
      [ "$side" = new ] && bin=$NEW
      IPCPERF=$bin ROUNDS=${REPS:-3} REPS=${REPS:-3} bash "bench/$s-peers.sh" >"$OUT/$s.$side.$r" 2>&1 || true
      echo "== $s round $r $side ($bin)"
      grep -Ev '^(#|  [^ ].*, round [0-9]+:)' "$OUT/$s.$side.$r" | grep -Ei 'x|ratio|target|median' || cat "$OUT/$s.$side.$r"
    done
  done
done
echo "raw outputs: $OUT"
