#!/usr/bin/env bash
# Runs one bench script and keeps what it printed as a page of the book, so a
# figure the book quotes has one source: docs/src/figures/NAME.md, headed by
# the machine, the date and the command, then the script's output whole (its
# rounds and its summary). The chapters quote figures from it only as links
# (`[1.051](figures/NAME.md)`), and tests/docs.rs checks each is in it.
#
#   bench/figures.sh docs/src/figures/sync-floors-2vcpu.md bench/sync-floors.sh
#   REPS=5 bench/figures.sh docs/src/figures/shm-peers-2vcpu.md bench/shm-peers.sh
#
# The page is written only when the script succeeds; list a new one in
# docs/src/SUMMARY.md (the docs test asks). MEASURED_ON="16 CPUs (...)": the
# figures were measured on another machine (the script judges runs kept from
# there, as `bench/verdicts/power.sh --from DIR` does): the header names it.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
[ $# -ge 2 ] || { echo "usage: bench/figures.sh OUT.md SCRIPT [ARGS...]" >&2; exit 2; }
out=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" 2>&1 | tee "$log"
title=$(basename "$out" .md)
env=$(env | grep -E '^(REPS|ROUNDS|D|DUR|COUNT|SIZE|PIN|CROSS|SECTIONS)=' | sort | tr '\n' ' ' || true)
{
    echo "# Figures: \`$*\`"
    echo
    if [ -n "${MEASURED_ON:-}" ]; then
        echo "Runs measured on $MEASURED_ON; judged on this machine $(date -u +%Y-%m-%d) by \`$*\`:"
        echo
    else
        ROUNDS=${ROUNDS:-${REPS:-default}} measured_on "$*"
    fi
    [ -z "$env" ] || { echo "Environment: \`${env% }\`."; echo; }
    echo '```text'
    # Progress lines rewritten in place (\r) are not figures.
    sed -e 's/.*\r//' "$log"
    echo '```'
} >"$out.tmp"
mv "$out.tmp" "$out"
echo "bench/figures.sh: wrote $out ($title)" >&2
