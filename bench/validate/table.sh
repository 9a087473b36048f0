#!/usr/bin/env bash
# The summary table of a bench/validate/servers.sh figures page, as a page of its
# own the advise chapter includes (the run's rounds stay on the full page).
#
#   bench/validate/table.sh docs/src/figures/validate-servers-2vcpu.md \
#       > docs/src/figures/validate-servers-table-2vcpu.md
set -euo pipefail
page=$1
echo "From [the full page]($(basename "$page")) (its rounds, machine and date), the medians over the rounds:"
echo
# The summary: the table after the "Medians over the rounds" line.
awk '/^Medians over the rounds/ { on = 1; next } on && /^\|/ { print } on && /^bench\/figures/ { exit }' "$page"
