# The commands the emulated-server checks run inside the guest (bench/manycore/run.sh
# runs this when no command is given). Each one's stdout goes to /out/NAME.out,
# its stderr to /out/NAME.err, its exit status and seconds to /out/NAME.rc and
# /out/NAME.secs; crates/ipcperf/tests/manycore.rs asserts on them from the JSON.
# Short series: emulated timings mean nothing, structure and bounds do.
check() {
  name="$1"; shift
  # run.sh --checks: only the checks named in CHECKS.
  if [ -n "${CHECKS:-}" ]; then
    case " $CHECKS " in *" $name "*) ;; *) return 0 ;; esac
  fi
  t0="$(cut -d' ' -f1 /proc/uptime)"
  "$@" >"/out/$name.out" 2>"/out/$name.err"
  rc=$?
  t1="$(cut -d' ' -f1 /proc/uptime)"
  echo "$rc" >"/out/$name.rc"
  secs="$(echo "$t1 $t0" | awk '{printf "%.2f", $1 - $2}')"
  echo "$secs" >"/out/$name.secs"
  echo "check $name: exit $rc in $secs s"
  [ "$rc" = 0 ] || sed 's/^/  /' "/out/$name.err" | tail -5
}
check topology ipcperf topology --format json
# The farthest class this layout has (the classes are listed closest first).
far="$(grep -o '"class": "[a-z0-9-]*"' /out/topology.out | tail -1 | cut -d'"' -f4)"
# A matrix of at most 16 CPUs (240 pairs): every n/16th CPU on a bigger guest.
n="$(nproc)"
if [ "$n" -gt 16 ]; then cpus="0-$((n - 1)):$((n / 16))"; else cpus="0-$((n - 1))"; fi
check measure ipcperf topology --measure --only "$cpus" --no-save --format json
check placements ipcperf latency pipe --mode threads --placements all -n 200 -r 1 --format json
# In threads: a peer process a pair costs ~0.3 s of exec under TCG, 240 times over
# (processes across many CPUs are the clients', subscribers' and advise's below).
check matrix ipcperf matrix shm --wake spin --mode threads --cpus "$cpus" -d 10ms -o /out/heatmap.svg --format json
check pairs ipcperf run pipe --pairs 1,2,4,8,16 -s 4k -d 20ms -r 1 --export-json /out/pairs.json
check clients ipcperf latency unix --mode processes --clients 8 -n 100 -r 1 --format json
check subscribers ipcperf run pipe --mode processes --subscribers 8 -s 4k -d 20ms -r 1 --format json
check background ipcperf run pipe --pin "$far" --background cpu:4 -s 4k -d 20ms -r 1 --format json
# Four candidates (11 cases with their waits): each case's series are peers of
# their own, ~2 s a case under TCG.
check advise ipcperf advise --placement "$far" --mechanisms pipe,unix,tcp,shm -d 20ms --export-json /out/advise.json
