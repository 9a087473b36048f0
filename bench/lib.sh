# Sourced by the bench scripts (bash): what they share.

# numbers X...: the arguments that are numbers, one a line (a round whose
# figure failed, "n/a", leaves the statistics instead of counting as a zero).
numbers() { printf '%s\n' "$@" | grep -E '^[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$' || true; }

# summary X...: "MEDIAN MIN MAX COUNT" of the numbers given ("n/a n/a n/a 0"
# when there are none): what spread, median and peer_row report.
summary() {
    numbers "$@" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "n/a n/a n/a 0"; exit }
        print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR], NR }'
}

# spread X...: the median of the numbers given, their range and how many there
# were, with how many rounds had no figure ("n/a" for none): how a ratio taken
# in each round is reported.
spread() {
    local m lo hi n
    read -r m lo hi n < <(summary "$@")
    [ "$n" = 0 ] && { echo n/a; return; }
    printf 'median %.3f (min %.3f, max %.3f, %d rounds' "$m" "$lo" "$hi" "$n"
    [ $# -gt "$n" ] && printf '; %d without a figure' $(($# - n))
    printf ')'
}

# median X...: the median alone.
median() { summary "$@" | cut -d' ' -f1; }

# ratio A B: A / B to three places ("n/a" unless both are above zero: a figure
# that failed is no figure, never a ratio of 0).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.3f", a / b; else print "n/a" }'; }

# against_method LABEL TARGET: REPS rounds of three figures (ns, lower is
# better) from the caller's functions `method` (a library's own benchmark
# method), `as_ipcperf` (that method with ipcperf's settings and use of the
# library) and `ipcperf_ns` (ipcperf's like-for-like figure), run in an order
# that turns each round; prints each round, the medians, ipcperf over the
# method (against TARGET) and ipcperf over the method as ipcperf uses the
# library (what ipcperf's harness itself adds).
against_method() {
    local label=$1 target=$2 i k own use o
    local r=() h=() mo=() ms=() mi=()
    for i in $(seq "$REPS"); do
        for k in 0 1 2; do
            case $(((i + k) % 3)) in
                0) own=$(method) ;;
                1) use=$(as_ipcperf) ;;
                2) o=$(ipcperf_ns | xargs printf "%.0f") ;;
            esac
        done
        r+=("$(ratio "$o" "$own")"); h+=("$(ratio "$o" "$use")")
        mo+=("$own"); ms+=("$use"); mi+=("$o")
        echo "  $label round $i: method $own ns, as ipcperf uses it $use ns, ipcperf $o ns:" \
            "ipcperf/method ${r[-1]}, ipcperf/as-ipcperf ${h[-1]}"
    done
    echo "$label: medians: method $(median "${mo[@]}") ns, as ipcperf uses it $(median "${ms[@]}") ns, ipcperf $(median "${mi[@]}") ns"
    echo "$label: ipcperf over the method:                        $(spread "${r[@]}")   target $target"
    echo "$label: ipcperf over the method as ipcperf uses it (harness): $(spread "${h[@]}")"
}

# The peers' table (bench/compare-peers.sh, bench/latency-peers.sh): one row a
# comparison of ipcperf with a peer, taken round after round in turned order.
#
#   peer_row PEER CASE STATISTIC BETTER TARGET OURS_FN THEIRS_FN
#
# runs ROUNDS rounds; in odd rounds OURS_FN goes first, in even ones THEIRS_FN
# (a drifting machine favours neither). Each function prints one figure in the
# unit STATISTIC names, or nothing when it could not run (no zero stands in).
# BETTER is "lower" (times) or "higher" (rates): which way of the ratio
# ipcperf / peer favours ipcperf. TARGET is "0.95-1.05" (like for like: the
# row says whether the median ratio is inside), or words ("floor", "not like
# for like: ..."). The row goes to $PEER_ROWS (tab-separated); peer_table
# prints them all.
# (The caller makes $PEER_ROWS, and removes it.)
g4() { awk -v x="$1" 'BEGIN { print (x + 0 > 0) ? sprintf("%.4g", x) : "n/a" }'; }
peer_row() {
    local peer=$1 case=$2 stat=$3 better=$4 target=$5 ours=$6 theirs=$7 i o t
    local os=() ts=() rs=()
    for i in $(seq "${ROUNDS:-5}"); do
        if ((i % 2)); then o=$($ours || true); t=$($theirs || true)
        else t=$($theirs || true); o=$($ours || true); fi
        os+=("${o:-n/a}"); ts+=("${t:-n/a}"); rs+=("$(ratio "${o:-0}" "${t:-0}")")
        printf '  %s, %s, round %d: ipcperf %s, peer %s, ratio %s\n' \
            "$peer" "$case" "$i" "$(g4 "$o")" "$(g4 "$t")" "${rs[-1]}" >&2
    done
    local m lo hi n
    read -r m lo hi n < <(summary "${rs[@]}")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$peer" "$case" "$stat" \
        "$(median "${os[@]}")" "$(median "${ts[@]}")" "$m" "$lo" "$hi" "$n/${#rs[@]}" \
        "$better" "$target" >>"$PEER_ROWS"
}

# measured_on SCRIPT: the line a figures file of the book (docs/src/figures/)
# starts with: the machine (CPU model, virtualisation, kernel, cpuidle driver),
# the date and the rounds, and the script that measured.
measured_on() {
    local cpu virt idle
    cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
    # systemd-detect-virt where there is one, else lscpu's hypervisor vendor
    # (a container image may lack systemd).
    virt=$(systemd-detect-virt --vm 2>/dev/null ||
        lscpu 2>/dev/null | awk -F': *' '/^Hypervisor vendor/ { print tolower($2); f = 1 } END { if (!f) print "none" }')
    idle=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)
    echo "Measured on $(nproc) CPUs ($cpu, virtualisation: $virt, Linux $(uname -r)," \
        "cpuidle \`$idle\`), $(date -u +%Y-%m-%d), \`ROUNDS=${ROUNDS:-5}\`, by \`$1\`:"
    echo
}

# peer_skip PEER CASE WHY: a row that could not run, and why.
peer_skip() {
    printf '%s\t%s\t-\tn/a\tn/a\tn/a\tn/a\tn/a\t0/0\t-\tskipped: %s\n' "$1" "$2" "$3" >>"$PEER_ROWS"
}

# peer_table [markdown]: the rows so far, with who came out ahead:
# "inconclusive" with the rounds' range when their ratios lie on both sides of
# 1 (a median of 1.64 over 0.9-2.1 is no result), else the side every round
# favours and by how much (the median). A target band is "met" only when every
# round's ratio lies inside it, "missed" when none does, else "inconclusive".
# In markdown for the book when asked.
peer_table() {
    awk -F'\t' -v md="${1:-}" '
    function fig(x) { if (x == "n/a" || x == "") return "n/a"; return sprintf(x >= 100 ? "%.0f" : (x >= 10 ? "%.1f" : "%.2f"), x) }
    function ahead(m, lo, hi, better,   who) {
        if (m == "n/a") return "-"
        if (lo + 0 <= 1 && hi + 0 >= 1) return sprintf("inconclusive (%.3f-%.3f)", lo, hi)
        who = ((better == "lower") == (m < 1)) ? "ipcperf" : "peer"
        if (m > 1.5 || m < 0.667) return sprintf("%s, x%.1f", who, (m > 1) ? m : 1 / m)
        return sprintf("%s by %.0f%%", who, (m > 1) ? (m - 1) * 100 : (1 - m) * 100)
    }
    function met(m, lo, hi, target,   b) {
        if (target !~ /^[0-9.]+-[0-9.]+$/ || m == "n/a") return target
        split(target, b, "-")
        if (lo + 0 >= b[1] + 0 && hi + 0 <= b[2] + 0) return target ": met"
        if (hi + 0 < b[1] + 0 || lo + 0 > b[2] + 0) return target ": missed"
        return target ": inconclusive"
    }
    BEGIN {
        if (md) {
            print "| peer | case | statistic | ipcperf | peer\047s | ipcperf / peer | better | ahead | target |"
            print "|---|---|---|---:|---:|---|---|---|---|"
        }
    }
    {
        if (md) for (i = 1; i <= NF; i++) { gsub(/\|/, "\\|", $i); gsub(/ us$/, " µs", $i) }
        ratio = ($6 == "n/a") ? "n/a" : sprintf("%.3f (%.3f-%.3f, %s)", $6, $7, $8, $9)
        if (md) printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, fig($4), fig($5), ratio, $10, ahead($6, $7, $8, $10), met($6, $7, $8, $11)
        else {
            printf "%-26s %-44s\n", $1, $2
            printf "    %-24s ipcperf %-8s peer %-8s ratio %-26s %-6s %-16s %s\n", $3, fig($4), fig($5), ratio, $10, ahead($6, $7, $8, $10), met($6, $7, $8, $11)
        }
    }' "$PEER_ROWS"
}

# hold_poll: no idle state deeper than polling (/dev/cpu_dma_latency held at 0,
# root) until release_hold, or until this script ends however it ends (the
# holder watches its parent). HOLD is the holder's pid.
HOLD=
hold_poll() {
    python3 -c 'import os, struct, time
parent = os.getppid()
fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
os.write(fd, struct.pack("i", 0))
while os.getppid() == parent:
    time.sleep(0.5)' >/dev/null &
    HOLD=$!
    sleep 0.2
}
release_hold() { [ -z "$HOLD" ] || { kill "$HOLD"; wait "$HOLD" 2>/dev/null || true; HOLD=; }; }
