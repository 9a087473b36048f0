#!/usr/bin/env bash
# A one-machine Slurm cluster for trying deploy/slurm (and for CI): munged,
# slurmctld and slurmd from Debian (slurm-wlm, munge), configured in a directory
# of their own, this machine as the one node.
#
#   deploy/slurm/testbed.sh start DIR    # prints: export SLURM_CONF=DIR/slurm.conf
#   SLURM_CONF=DIR/slurm.conf sbatch --array=0-1 --wait deploy/slurm/suite.sbatch
#   deploy/slurm/testbed.sh stop DIR     # stops what start started, removes DIR
#
# Root only (the daemons run as root here). Nothing outside DIR is written but
# munge's socket directory; a munged already running is used, not replaced.
set -euo pipefail
cmd="${1:-}"; dir="${2:-}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: testbed.sh start|stop DIR" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "testbed.sh: needs root" >&2; exit 1; }

stop() {
  for p in slurmd slurmctld munged; do
    if [ -f "$dir/$p.pid" ]; then
      kill "$(cat "$dir/$p.pid")" 2>/dev/null || true
    fi
  done
  for p in slurmd slurmctld munged; do
    if [ -f "$dir/$p.pid" ]; then
      pid="$(cat "$dir/$p.pid")"
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$dir"
}

case "$cmd" in
  stop) stop; exit 0 ;;
  start) ;;
  *) echo "usage: testbed.sh start|stop DIR" >&2; exit 2 ;;
esac

for t in slurmctld slurmd sbatch munged; do
  command -v "$t" >/dev/null || { echo "testbed.sh: no $t (apt-get install slurm-wlm munge)" >&2; exit 1; }
done
mkdir -p "$dir"/{state,spool,log}
host="$(hostname -s)"
cpus="$(nproc)"
mem="$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)"

# munge: the key the package made; our own daemon unless one answers already.
if ! munge -n </dev/null >/dev/null 2>&1; then
  install -d -o munge -g munge -m 0755 /run/munge
  runuser -u munge -- munged 2>/dev/null || munged --force
  pgrep -n -x munged >"$dir/munged.pid"
fi

cat >"$dir/slurm.conf" <<CONF
ClusterName=ipcperf-testbed
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=testbed Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
# Up when the node is idle: at most 30 s.
for _ in $(seq 150); do
  if sinfo -h -o '%T' 2>/dev/null | grep -qx idle; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.2
done
echo "testbed.sh: the node did not come up within 30 s; the logs:" >&2
tail -5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
stop
exit 1
