# Sourced by the bench scripts (bash): what they share.

# spread X...: the median of the numbers given, their range and how many there
# were ("n/a" for none): how a ratio taken in each round is reported.
spread() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "n/a"; exit }
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "median %.3f (min %.3f, max %.3f, %d rounds)", m, v[1], v[NR], NR }'
}

# median X...: the median alone.
median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "n/a"; exit }
        print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B: A / B to three places ("n/a" when B is not above zero).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }'; }
