#!/usr/bin/env bash
# The checks the open issues ask of "a 16-CPU machine where you have one", as
# one prepared run inside a time budget (a borrowed machine is lent by the
# minute and has no Rust: build here, carry the binary and the C floors):
#   facts      the machine: CPUs, topology, idle driver, tracefs, perf's rights;
#   counters   issue 57: switches per message (bench/counters.sh);
#   tracers    issue 56: wake-ups seen and tracing's cost (bench/explain-tracers.sh);
#   floor      issue 56: tracefs on a C ping-pong beside ipcperf's own cost
#              (bench/explain-floor.sh; perf's rows n/a where perf is absent);
#   agree      issue 56: the parts against a second, text trace (bench/explain-agree.sh);
#   streams    issue 56: a 64 KiB pipe on one CPU and across (bench/explain-streams.sh);
#   regime     issue 56: `sync posix-sem --mode processes --explain`, three runs;
#   suites     issue 55: default suites back to back until the budget is spent
#              (at most SUITES), each exported as runN.json for
#              `bench/verdicts/power.sh --from DIR` to judge afterwards.
# Each section runs under its own time limit and is skipped, said so, when the
# budget left is less; a section that fails is said and the next one runs. The
# figures pages (bench/figures.sh) land in OUT as NAME-16cpu.md.
#
#   bench/device16.sh OUT [--bin PATH] [--floors DIR] [--budget SECONDS]
#   SUITES=15 ROUNDS=3 (the defaults); SECTIONS="facts suites" runs just those
#   (a lease shorter than all of them: the rest are said skipped)
set -uo pipefail
cd "$(dirname "$0")/.."
out="" bin=target/release/ipcperf floors="" budget=450
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --floors) floors=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    -*) echo "usage: $0 OUT [--bin PATH] [--floors DIR] [--budget SECONDS]" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
[ -n "$out" ] || { echo "usage: $0 OUT [--bin PATH] [--floors DIR] [--budget SECONDS]" >&2; exit 2; }
[ -x "$bin" ] || { echo "$0: no ipcperf binary at $bin" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
mkdir -p "$out"
out=$(cd "$out" && pwd)
export IPCPERF=$bin ROUNDS=${ROUNDS:-3}
suites=${SUITES:-15}
sections=${SECTIONS:-facts counters tracers floor agree streams regime suites}
start=$(date +%s)
left() { echo $((budget - ($(date +%s) - start))); }

# section NAME LIMIT COMMAND...: COMMAND's output in OUT/NAME.log, under LIMIT s.
section() {
  local name=$1 limit=$2 t0 rc
  shift 2
  case " $sections " in
    *" $name "*) ;;
    *) echo "== $name: skipped, not in SECTIONS"; return ;;
  esac
  if [ "$(left)" -lt "$limit" ]; then
    echo "== $name: skipped, $(left) s of the budget left, it may take $limit s"
    return
  fi
  t0=$(date +%s)
  timeout -k 5 "$limit" bash -c '"$@"' section "$@" >"$out/$name.log" 2>&1
  rc=$?
  echo "== $name: exit $rc in $(($(date +%s) - t0)) s"
  tail -n 14 "$out/$name.log" | sed 's/.*\r//; s/^/   /'
}

facts() {
  uname -a
  echo "nproc $(nproc)"
  lscpu 2>/dev/null || grep -m1 'model name' /proc/cpuinfo
  echo "cpuidle driver: $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)"
  grep -H . /sys/devices/system/cpu/cpu1/cpuidle/state*/name 2>/dev/null || true
  echo "perf_event_paranoid: $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)"
  mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing || true
  for e in sched/sched_waking sched/sched_wakeup sched/sched_switch ipi/ipi_send_cpu raw_syscalls/sys_enter; do
    [ -d "/sys/kernel/tracing/events/$e" ] && echo "tracefs event $e: there" || echo "tracefs event $e: absent"
  done
  for t in perf python3 cc jq mountpoint systemd-detect-virt; do
    echo "$t: $(command -v "$t" || echo absent)"
  done
  cut -d' ' -f1-3 /proc/loadavg
  "$bin" topology
  "$bin" topology --format json >"$out/topology.json"
}

suite_runs() {
  local i=0 t0 took=30
  mkdir -p "$out/suites"
  while [ "$i" -lt "$suites" ] && [ "$(left)" -gt $((took + 10)) ]; do
    i=$((i + 1))
    t0=$(date +%s)
    timeout -k 5 120 "$bin" run --db "$out/suites/suites.db" --label "s$i" >"$out/suites/run$i.txt" 2>&1 ||
      { echo "suite $i failed"; tail -3 "$out/suites/run$i.txt"; break; }
    "$bin" export "s$i" --db "$out/suites/suites.db" --format json >"$out/suites/run$i.json"
    took=$(($(date +%s) - t0))
    echo "suite $i: $took s"
  done
}

fig() { local name=$1; shift; bench/figures.sh "$out/$name-16cpu.md" "$@"; }

regime() {
  for r in 1 2 3; do
    "$bin" sync posix-sem --mode processes --pin 0,1 --explain -r 1 -d 50ms --no-save 2>&1 || true
  done
}

# The sections run in a child shell (under timeout): what they use goes with them.
export -f left facts suite_runs fig regime
export bin out suites start budget
echo "bench/device16.sh: budget $budget s, $(nproc) CPUs, $(date -u +%FT%TZ)"
section facts 30 facts
section counters 90 fig counters bench/counters.sh
floor_args=()
[ -z "$floors" ] || floor_args=(--floor "$floors/pipe-rtt")
section tracers 90 fig explain-tracers bench/explain-tracers.sh --bin "$bin"
section floor 90 fig explain-floor bench/explain-floor.sh --bin "$bin" --rounds "$ROUNDS" "${floor_args[@]}"
section agree 60 fig explain-agree bench/explain-agree.sh --bin "$bin"
section streams 90 fig explain-streams bench/explain-streams.sh --bin "$bin"
section regime 40 regime
section suites "$(($(left) > 60 ? $(left) : 60))" suite_runs
echo "bench/device16.sh: done in $(($(date +%s) - start)) s"
