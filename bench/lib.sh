# Sourced by the bench scripts (bash): what they share.

# numbers X...: the arguments that are numbers, one a line (a round whose
# figure failed, "n/a", leaves the statistics instead of counting as a zero).
numbers() { printf '%s\n' "$@" | grep -E '^[0-9]+([.][0-9]*)?([eE][-+]?[0-9]+)?$' || true; }

# spread X...: the median of the numbers given, their range and how many there
# were, with how many rounds had no figure ("n/a" for none): how a ratio taken
# in each round is reported.
spread() {
    numbers "$@" | sort -g | awk -v all=$# '{ v[NR] = $1 } END {
        if (NR == 0) { print "n/a"; exit }
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "median %.3f (min %.3f, max %.3f, %d rounds", m, v[1], v[NR], NR
        if (all > NR) printf "; %d without a figure", all - NR
        printf ")" }'
}

# median X...: the median alone.
median() {
    numbers "$@" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "n/a"; exit }
        print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

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
