#!/usr/bin/env bash
# A one-machine Slurm cluster for trying deploy/slurm (and for CI): munged,
# slurmctld and slurmd from Debian (slurm-wlm, munge), configured in a directory
# of their own, this machine as the one node of partition "testbed".
#
#   deploy/slurm/testbed.sh start DIR [N]  # prints: export SLURM_CONF=DIR/slurm.conf
#   SLURM_CONF=DIR/slurm.conf sbatch -p pair -N2 --wait deploy/slurm/suite.sbatch
#   SLURM_CONF=DIR/slurm.conf sbatch -p pair -N2 --wait deploy/slurm/pair.sbatch
#   deploy/slurm/testbed.sh stop DIR       # stops what start started, removes DIR
#
# N (default 0) more nodes, partition "pair": each a slurmd in a network
# namespace of its own (its own address on a bridge, its own hostname, an
# /etc/hosts of its own in a private mount namespace), so that two nodes talk
# over a network as two machines do. Their jobs reach this machine at the
# bridge's address, not its loopback.
#
# Root only (the daemons run as root here). Nothing outside DIR is written but
# munge's socket directory, and the bridge and namespaces (named for DIR),
# removed by stop; a munged already running is used, not replaced.
set -euo pipefail
cmd="${1:-}"; dir="${2:-}"; extra="${3:-0}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: testbed.sh start DIR [N] | stop DIR" >&2; exit 2; }
case "$extra" in [0-8]) ;; *) echo "testbed.sh: N is 0 to 8 more nodes" >&2; exit 2 ;; esac
# Names of this testbed's own network objects (at most 15 characters).
tag="$(printf '%s' "$(realpath -m "$dir")" | md5sum | cut -c1-6)"
bridge="ipsb$tag"
net=10.213.77
[ "$(id -u)" = 0 ] || { echo "testbed.sh: needs root" >&2; exit 1; }

stop() {
  local pids=()
  for f in "$dir"/slurmd-*.pid "$dir"/slurmctld.pid "$dir"/munged.pid; do
    [ -f "$f" ] && pids+=("$(cat "$f")")
  done
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^ipcperf-sl$tag-" || true); do
    # Whatever a job left running in the node goes with it.
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  ip link del "$bridge" 2>/dev/null || true
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

# The more nodes: a bridge with this machine at .1, each node a namespace at .2, .3, ...
ctl="$host"
nodes=""
if [ "$extra" -gt 0 ]; then
  ip link add "$bridge" type bridge
  ip addr add "$net.1/24" dev "$bridge"
  ip link set "$bridge" up
  {
    echo "127.0.0.1 localhost"
    echo "$net.1 $host"
    for i in $(seq "$extra"); do echo "$net.$((i + 1)) ipn$tag-$i"; done
  } >"$dir/hosts"
  for i in $(seq "$extra"); do
    ns="ipcperf-sl$tag-$i"
    ip netns add "$ns"
    ip link add "ipv$tag$i" type veth peer name eth0 netns "$ns"
    ip link set "ipv$tag$i" master "$bridge" up
    ip -n "$ns" addr add "$net.$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    nodes="$nodes${nodes:+,}ipn$tag-$i"
  done
  ctl="$host($net.1)"
fi

cat >"$dir/slurm.conf" <<CONF
ClusterName=ipcperf-testbed
SlurmctldHost=$ctl
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
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
if [ "$extra" -gt 0 ]; then
  for i in $(seq "$extra"); do
    echo "NodeName=ipn$tag-$i NodeAddr=$net.$((i + 1)) CPUs=$cpus RealMemory=$((mem / (extra + 1))) State=UNKNOWN"
  done >>"$dir/slurm.conf"
  echo "PartitionName=pair Nodes=$nodes MaxTime=INFINITE State=UP" >>"$dir/slurm.conf"
fi
failed() {
  echo "testbed.sh: $1; the logs:" >&2
  tail -n 5 "$dir"/log/*.log >&2 || true
  stop
  exit 1
}
export SLURM_CONF="$dir/slurm.conf"
mkdir -p "$dir/spool/$host"
slurmctld -f "$SLURM_CONF" || failed "slurmctld did not start"
slurmd -f "$SLURM_CONF" || failed "slurmd did not start"
for i in $(seq "$extra"); do
  # Its own hostname and /etc/hosts, seen only inside it (a private mount
  # namespace; nsenter, not `ip netns exec`, which would hide the cgroup tree).
  mkdir -p "$dir/spool/ipn$tag-$i"
  nsenter --net="/run/netns/ipcperf-sl$tag-$i" unshare --uts --mount --propagation private \
    sh -c "mount --bind '$dir/hosts' /etc/hosts && hostname 'ipn$tag-$i' && exec slurmd -f '$SLURM_CONF'" \
    || failed "the slurmd of ipn$tag-$i did not start"
done
# Up when every node is idle: at most 30 s.
for _ in $(seq 150); do
  if [ "$(sinfo -h -N -o '%T' 2>/dev/null | grep -cx idle)" = $((extra + 1)) ]; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.2
done
failed "the nodes did not come up within 30 s"
