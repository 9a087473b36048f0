#!/usr/bin/env bash
# `ipcperf sync` against C floors of the same calls, interleaved round by round
# (issue 33's targets), all ratios from this one run:
#   1. request/release of futex, posix-sem and mutex (one thread) against
#      bench/floor/sync-fast.c's loops: ipcperf's figure over the C loop's, and
#      no figure below one atomic read-modify-write (ipcperf's own reference,
#      measured in the same series);
#   2. set/clear of sysv-sem-onecall with untimed waits (lmbench's lat_sem form)
#      against bench/floor/lat-sem.c, same CPU and across CPUs (targets 0.95-1.05
#      and <= 1.15);
#   3. what a timed wait costs: every set/clear primitive timed / untimed;
#   4. every set/clear primitive, untimed, against bench/floor/setclear.c (the
#      same calls in C), same CPU and across CPUs (target <= 1.15).
#
#   bench/sync-floors.sh                 # REPS=5 rounds, 300ms series; IPCPERF=binary
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
export IPCPERF_NO_SAVE=1
REPS=${REPS:-5}
D=${D:-300ms}
IPCPERF=${IPCPERF:-target/release/ipcperf}
[ -x "$IPCPERF" ] || cargo build --release --quiet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -pthread -o "$tmp/sync-fast" bench/floor/sync-fast.c
cc -O2 -o "$tmp/lat-sem" bench/floor/lat-sem.c
cc -O2 -pthread -o "$tmp/setclear" bench/floor/setclear.c
CROSS=${CROSS:-1}
json() { python3 -c "import json,sys; d=json.load(open('$1'))
for c in d['cases']:
    s=c['sync']
    print(s['primitive'], c['placement']['label'].split()[0], s.get('request_release_gross_ns') or 'n/a', s.get('request_release_ns') or 'n/a', s.get('atomic_rmw_ns') or 'n/a', s.get('set_clear_ns') or 'n/a')"; }
declare -A R
add() { R[$1]="${R[$1]:-} $2"; }
for i in $(seq "$REPS"); do
    # 1. request/release: ipcperf and the C loops, order turned each round.
    for k in 0 1; do
        if (( (i + k) % 2 )); then
            "$IPCPERF" -q sync futex posix-sem mutex --mode threads --pin 0,0 -d "$D" -r 3 \
                --latency-samples 0 -f json >"$tmp/rr.json"
        else
            "$tmp/sync-fast" 20000000 0 >"$tmp/c.txt"
        fi
    done
    while read -r p _ gross net atomic _; do
        c=$(awk -v p="$p" '$1 == p { print $2 }' "$tmp/c.txt")
        add "rr-$p" "$(ratio "$net" "$c")"
        add "net-over-atomic-$p" "$(ratio "$net" "$atomic")"
        echo "  round $i r/r $p: ipcperf $net ns (gross $gross), C $c ns, one atomic RMW $atomic ns"
    done < <(json "$tmp/rr.json")
    # 2. lat_sem form, untimed, same CPU and across.
    for pin in "0 0" "0 $CROSS"; do
        set -- $pin
        for k in 0 1; do
            if (( (i + k) % 2 )); then
                "$IPCPERF" -q sync sysv-sem-onecall --untimed --mode processes --pin "$1,$2" \
                    -d "$D" -r 3 --latency-samples 0 -f json >"$tmp/sc.json"
            else
                c=$("$tmp/lat-sem" "$([ "$1" = "$2" ] && echo 200000 || echo 40000)" "$1" "$2")
            fi
        done
        o=$(json "$tmp/sc.json" | awk '{ print $6 }')
        add "onecall-$1$2" "$(ratio "$o" "$c")"
        echo "  round $i lat_sem form $1,$2: ipcperf $o ns, C $c ns: $(ratio "$o" "$c")"
    done
    # 3. timed / untimed set/clear, every primitive with a token, across CPUs.
    for mode in timed untimed; do
        flag=$([ $mode = untimed ] && echo --untimed || true)
        "$IPCPERF" -q sync sysv-sem sysv-sem-onecall posix-sem futex eventfd --mode processes \
            --pin "0,$CROSS" -d "$D" -r 3 --latency-samples 0 $flag -f json >"$tmp/$mode.json"
    done
    paste <(json "$tmp/timed.json") <(json "$tmp/untimed.json") | while read -r p _ _ _ _ t _ _ _ _ _ u; do
        echo "  round $i set/clear $p: timed $t ns, untimed $u ns: $(ratio "$t" "$u")"
        echo "$p $(ratio "$t" "$u")" >>"$tmp/tu.txt"
    done
    # 4. untimed set/clear against the same calls in C, same CPU and across.
    for pin in "0 0" "0 $CROSS"; do
        set -- $pin
        for p in sysv-sem posix-sem futex eventfd pipe; do
            for k in 0 1; do
                if (( (i + k) % 2 )); then
                    "$IPCPERF" -q sync "$p" --untimed --mode processes --pin "$1,$2" -d "$D" -r 3 \
                        --latency-samples 0 -f json >"$tmp/u.json"
                else
                    c=$("$tmp/setclear" "$p" "$([ "$1" = "$2" ] && echo 100000 || echo 20000)" "$1" "$2")
                fi
            done
            o=$(json "$tmp/u.json" | awk '{ print $6 }')
            echo "  round $i set/clear $p $1,$2 untimed: ipcperf $o ns, C $c ns: $(ratio "$o" "$c")"
            echo "$p-$1$2 $(ratio "$o" "$c")" >>"$tmp/uc.txt"
        done
    done
done
echo
for p in futex posix-sem mutex; do
    echo "request/release $p, ipcperf / C loop:          $(spread ${R[rr-$p]})"
    echo "request/release $p, ipcperf / one atomic RMW:  $(spread ${R[net-over-atomic-$p]})   (>= 1)"
done
echo "sysv-sem-onecall untimed / lat-sem, same CPU:    $(spread ${R[onecall-00]})   target 0.95-1.05"
echo "sysv-sem-onecall untimed / lat-sem, across CPUs: $(spread ${R[onecall-0$CROSS]})   target <= 1.15"
for p in $(awk '{ print $1 }' "$tmp/tu.txt" | sort -u); do
    echo "set/clear $p, timed / untimed wait:   $(spread $(awk -v p="$p" '$1 == p { print $2 }' "$tmp/tu.txt"))"
done
for p in $(awk '{ print $1 }' "$tmp/uc.txt" | sort -u); do
    echo "set/clear $p (CPUs), untimed ipcperf / C:   $(spread $(awk -v p="$p" '$1 == p { print $2 }' "$tmp/uc.txt"))   target <= 1.15"
done
