#!/usr/bin/env bash
# ipcperf on an emulated many-CPU server: QEMU (TCG) boots Debian's kernel with an
# initramfs of busybox, the ipcperf binary and the libraries it links, on a named
# topology (sockets, dies, cores, SMT threads, NUMA nodes), runs ipcperf inside,
# prints what it printed and the guest's own sysfs facts, and powers off.
#
#   bench/manycore/run.sh intel16                     # the checks' commands, outputs kept
#   bench/manycore/run.sh numa16 --out DIR            # ...their JSON and SVG under DIR
#   bench/manycore/run.sh big64 -- ipcperf matrix shm --wake spin
#   bench/manycore/run.sh --list                      # the layouts and their QEMU options
#
# Layouts: intel16 (2 sockets x 4 cores x 2 threads, 2 NUMA nodes), numa16 (the same
# with 4 nodes, 2 per socket, as sub-NUMA clustering gives), amd16 (1 socket, 4 dies
# of 2 cores x 2 threads: an L3 per die, 2 nodes), big64 (2 sockets x 4 dies x 4 cores
# x 2 threads, 4 nodes), vm2 (2 CPUs, one node: this development VM's shape).
#
# Emulated timings are not the hardware's: TCG runs 16 or 64 vCPUs on the host's few
# cores. What a guest shows is structure and bounds: the topology Linux reports,
# the pairs chosen, that every command ends. Options: --bin PATH (default
# target/release/ipcperf, built when missing), --out DIR (keep the guest's /out),
# --timeout SECONDS (the whole boot, default 900), --keep-sysfs (also record the
# guest's sysfs as a topology fixture, sysfs.txt in --out), --checks "NAME ..."
# (only these of checks.sh's commands; topology always runs).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

layout_opts() {
  # Prints: QEMU -cpu model, -smp value, memory (MiB), node CPU ranges.
  case "$1" in
    vm2) echo "Skylake-Server 2,sockets=1,cores=2,threads=1 512 0-1" ;;
    intel16) echo "Skylake-Server 16,sockets=2,cores=4,threads=2 1024 0-7 8-15" ;;
    numa16) echo "Skylake-Server 16,sockets=2,cores=4,threads=2 1024 0-3 4-7 8-11 12-15" ;;
    amd16) echo "Skylake-Server 16,sockets=1,dies=4,cores=2,threads=2 1024 0-7 8-15" ;;
    big64) echo "Skylake-Server 64,sockets=2,dies=4,cores=4,threads=2 2048 0-15 16-31 32-47 48-63" ;;
    custom) echo "${MANYCORE_CPU:?MANYCORE_CPU (a QEMU -cpu model)} ${MANYCORE_SMP:?MANYCORE_SMP (a QEMU -smp value)} ${MANYCORE_MEM:-1024} ${MANYCORE_NODES:?MANYCORE_NODES (CPU ranges, one per node)}" ;;
    *) return 1 ;;
  esac
}
layouts="vm2 intel16 numa16 amd16 big64"

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

[ $# -ge 1 ] || { usage >&2; exit 2; }
if [ "$1" = --list ]; then
  for l in $layouts; do
    read -r cpu smp mem nodes <<<"$(layout_opts "$l")"
    echo "$l: -cpu $cpu -smp $smp -m ${mem}M, nodes $nodes"
  done
  exit 0
fi
case "$1" in -h|--help) usage; exit 0 ;; esac
layout="$1"; shift
spec="$(layout_opts "$layout")" || { echo "run.sh: unknown layout '$layout' (one of: $layouts)" >&2; exit 2; }
read -r cpu smp mem nodes <<<"$spec"

bin="$root/target/release/ipcperf"
out=""
timeout_s=900
keep_sysfs=0
checks=""
cmd=()
while [ $# -gt 0 ]; do
  case "$1" in --bin|--out|--timeout|--checks)
    [ $# -ge 2 ] || { echo "run.sh: $1 takes a value (see --help)" >&2; exit 2; } ;;
  esac
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --keep-sysfs) keep_sysfs=1; shift ;;
    --checks) checks="$2"; shift 2 ;;
    --) shift; cmd=("$@"); break ;;
    *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$timeout_s" in ''|*[!0-9]*) echo "run.sh: --timeout takes whole seconds" >&2; exit 2 ;; esac
for c in $checks; do
  grep -q "^check $c " "$here/checks.sh" || {
    echo "run.sh: --checks: no check '$c' in checks.sh (one of: $(sed -n 's/^check \([a-z]*\) .*/\1/p' "$here/checks.sh" | tr '\n' ' '))" >&2
    exit 2
  }
done

# What the guest needs, from Debian: QEMU, a kernel, a static busybox, cpio.
kernel="$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1 || true)"
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
[ -n "$kernel" ] || need+=(linux-image-amd64)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "ok installed" || need+=(busybox-static)
command -v cpio >/dev/null || need+=(cpio)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "run.sh: needs ${need[*]} (Debian packages); install them as root" >&2; exit 1
  fi
  echo "run.sh: installing ${need[*]}" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  kernel="$(ls /boot/vmlinuz-* | sort -V | tail -1)"
fi
if [ ! -x "$bin" ]; then
  if [ "$bin" = "$root/target/release/ipcperf" ]; then
    echo "run.sh: building the release binary" >&2
    (cd "$root" && cargo build --release --quiet)
  else
    echo "run.sh: no binary at $bin" >&2; exit 2
  fi
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/ipcperf-manycore.XXXXXX")"
qpid=""
cleanup() {
  [ -n "$qpid" ] && kill "$qpid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The initramfs: busybox, ipcperf (stripped), the libraries it links, an init.
ini="$work/root"
mkdir -p "$ini"/{bin,lib,lib64,proc,sys,dev,tmp,out,etc}
cp /bin/busybox "$ini/bin/busybox"
strip -o "$ini/bin/ipcperf" "$bin" 2>/dev/null || cp "$bin" "$ini/bin/ipcperf"
ldd "$bin" | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | while read -r lib; do
  mkdir -p "$ini$(dirname "$lib")"
  cp -L "$lib" "$ini$lib"
done
# A user database, so the store and `clean` name root.
echo "root:x:0:0:root:/tmp:/bin/sh" >"$ini/etc/passwd"
echo "root:x:0:" >"$ini/etc/group"

# The job: the user's command, or the checks' commands (each output kept in /out).
if [ ${#cmd[@]} -gt 0 ]; then
  printf '%q ' "${cmd[@]}" >"$ini/job.cmd"
else
  { [ -z "$checks" ] || printf 'CHECKS=%q\n' "topology $checks"; cat "$here/checks.sh"; } >"$ini/job.cmd"
fi

cat >"$ini/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin HOME=/tmp TERM=dumb
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /dev/shm /dev/mqueue
mount -t tmpfs shm /dev/shm
mount -t mqueue mqueue /dev/mqueue
mount -t tmpfs tmp /tmp
ip link set lo up
cd /tmp
echo
echo "@@GUEST nproc=$(nproc) kernel=$(uname -r)"
# The guest's own sysfs facts, as Linux reports them.
for n in /sys/devices/system/node/node*; do
  [ -e "$n/cpulist" ] && echo "@@GUEST ${n##*/} cpus $(cat "$n/cpulist")"
done
for p in $(ls -d /sys/devices/system/cpu/cpu[0-9]* | sort -t u -k 3 -n); do
  c="${p##*/cpu}"; t="$p/topology"
  l2=""; l3=""
  for i in "$p"/cache/index*; do
    case "$(cat "$i/level")" in 2) l2="$(cat "$i/shared_cpu_list")" ;; 3) l3="$(cat "$i/shared_cpu_list")" ;; esac
  done
  echo "@@GUEST cpu$c package $(cat $t/physical_package_id) die $(cat $t/die_id 2>/dev/null) core $(cat $t/core_id) siblings $(cat $t/thread_siblings_list) l2 $l2 l3 $l3"
done
if [ -e /sysfs-record ]; then
  # Every file the topology reader uses, as a `path: content` fixture.
  cd /sys
  for f in devices/system/cpu/online devices/system/cpu/possible devices/system/cpu/isolated \
    devices/system/cpu/cpu[0-9]*/topology/physical_package_id devices/system/cpu/cpu[0-9]*/topology/die_id \
    devices/system/cpu/cpu[0-9]*/topology/core_id devices/system/cpu/cpu[0-9]*/topology/thread_siblings_list \
    devices/system/cpu/cpu[0-9]*/cache/index*/level devices/system/cpu/cpu[0-9]*/cache/index*/type \
    devices/system/cpu/cpu[0-9]*/cache/index*/shared_cpu_list devices/system/node/node[0-9]*/cpulist; do
    [ -e "$f" ] && echo "$f: $(cat "$f")"
  done | sort -V >/out/sysfs.txt
  cd /tmp
fi
echo "@@JOB-BEGIN"
sh /job.cmd
echo "@@JOB-END rc=$?"
echo "@@OUT-BEGIN"
tar c -C /out . | gzip | base64
echo "@@OUT-END"
sync
poweroff -f
INIT
chmod +x "$ini/init"
[ "$keep_sysfs" = 1 ] && touch "$ini/sysfs-record"
(cd "$ini" && find . | cpio -o -H newc --quiet) >"$work/initrd"

numa=()
i=0
node_mem=$((mem / $(wc -w <<<"$nodes")))
for cpus in $nodes; do
  numa+=(-object "memory-backend-ram,id=m$i,size=${node_mem}M" -numa "node,nodeid=$i,cpus=$cpus,memdev=m$i")
  i=$((i + 1))
done

echo "run.sh: $layout: -cpu $cpu -smp $smp, nodes $nodes (TCG: emulated timings are not the hardware's)" >&2
log="$work/console"
start_guest() {
  timeout --kill-after=5 "$timeout_s" qemu-system-x86_64 \
    -machine q35 -accel tcg,thread=multi -cpu "$cpu" -smp "$smp" -m "$mem" "${numa[@]}" \
    -kernel "$kernel" -initrd "$work/initrd" \
    -append "console=ttyS0 quiet loglevel=3 panic=-1 mitigations=off ${MANYCORE_APPEND:-}" \
    -nographic -no-reboot -nodefaults -serial stdio -monitor none </dev/null >"$log" 2>&1 &
  qpid=$!
}
# A TCG guest with many vCPUs now and then stalls while the kernel brings its CPUs
# up (seen once in about twenty 64-CPU boots): one that has not reached its init
# within the boot limit is stopped and booted again, once.
boot_limit="${MANYCORE_BOOT_LIMIT:-120}"
set +e
for try in 1 2; do
  start_guest
  waited=0
  while kill -0 "$qpid" 2>/dev/null && ! grep -aq '@@GUEST nproc' "$log" && [ "$waited" -lt "$boot_limit" ]; do
    sleep 1
    waited=$((waited + 1))
  done
  if grep -aq '@@GUEST nproc' "$log" || ! kill -0 "$qpid" 2>/dev/null; then
    break
  fi
  kill "$qpid" 2>/dev/null
  wait "$qpid" 2>/dev/null
  qpid=""
  if [ "$try" = 2 ]; then
    echo "run.sh: the guest did not reach its init within ${boot_limit}s, twice" >&2
    exit 1
  fi
  echo "run.sh: the guest did not reach its init within ${boot_limit}s: booting it again" >&2
done
# Print the guest's facts and the job's output as they come; QEMU's and the
# firmware's own lines stay in the console log (shown when the guest fails).
tail -n +1 -f --pid="$qpid" "$log" 2>/dev/null | tr -d '\r' | awk '
  /@@GUEST /{sub(/^.*@@GUEST /, "guest: "); print; fflush(); next}
  /^@@JOB-BEGIN/{job=1; next}
  /^@@JOB-END/{job=0; next}
  job{print; fflush()}'
wait "$qpid"
qrc=$?
qpid=""
set -e
tr -d '\r' <"$log" >"$work/console.txt"
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ] || ! grep -q '^@@OUT-END' "$work/console.txt"; then
  echo "run.sh: the console's last lines:" >&2
  grep -v '^qemu-system-x86_64: warning' "$work/console.txt" | tail -20 >&2
fi
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
  echo "run.sh: the guest did not power off within ${timeout_s}s" >&2; exit 1
fi
if ! grep -q '^@@OUT-END' "$work/console.txt"; then
  echo "run.sh: the guest ended without its outputs (qemu exit $qrc)" >&2; exit 1
fi
if [ -n "$out" ]; then
  mkdir -p "$out"
  sed -n '/^@@OUT-BEGIN/,/^@@OUT-END/p' "$work/console.txt" | sed '1d;$d' | base64 -d | tar xz -C "$out"
fi
jrc="$(sed -n 's/^@@JOB-END rc=//p' "$work/console.txt")"
exit "${jrc:-1}"
