#!/usr/bin/env bash
# The fleet at scale: 1,000 hosts × 10 nightly runs × 100 cases, in SQLite and in
# PostgreSQL, and how long `ipcperf fleet` takes over it and how much memory it
# holds (wall seconds and peak RSS from /usr/bin/time), rounds interleaved
# between the two back ends, median and range.
#
#   bench/fleet-scale/run.sh [--hosts N] [--runs R] [--rounds K] [--bin PATH] [--pg ADMIN_URL]
#
# The fleet is made from real records: one real run of 100 cases (50 streams and
# 50 round trips, 10 mechanisms × 5 sizes each, measured here; each series set
# to its case's median ±1%) is imported, then
# clone.sql copies it inside the database to every host and night, scaling each
# host's figures (every 97th host at 0.8×: the outliers) — see clone.sql.
# PostgreSQL: ADMIN_URL (default $IPCPERF_TEST_PG, else
# postgres://ipcperf:ipcperf@127.0.0.1:5432/postgres) may create databases; the
# benchmark's own database is dropped at the end, as is its temp directory.
# Targets (issue 34): fleet ≤ 5 s and ≤ 300 MB peak, on both.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
hosts=1000 runs=10 rounds=3 bin="" pg="${IPCPERF_TEST_PG:-postgres://ipcperf:ipcperf@127.0.0.1:5432/postgres}"
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --pg) pg=$2; shift 2 ;;
    *) echo "usage: $0 [--hosts N] [--runs R] [--rounds K] [--bin PATH] [--pg ADMIN_URL]" >&2; exit 2 ;;
  esac
done
if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release -q -p ipcperf)
  bin="$root/target/release/ipcperf"
fi
command -v psql >/dev/null && command -v sqlite3 >/dev/null || {
  echo "needs psql and sqlite3 (Debian: postgresql-client sqlite3)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian: time)" >&2; exit 1; }

work=$(mktemp -d /tmp/ipcperf-fleet-scale.XXXXXX)
dbname="ipcperf_fleet_scale_$$"
pgurl="${pg%/*}/$dbname"
cleanup() {
  psql -q "$pg" -c "DROP DATABASE IF EXISTS $dbname WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
[ -n "${KEEP:-}" ] && echo "keeping $work and $dbname" || trap cleanup EXIT

mechs="pipe fifo unix tcp udp unix-dgram unix-seqpacket sysv-msg posix-mq shm"
echo "seed: one real run of $mechs, 5 sizes, streams and round trips"
IPCPERF_NO_SAVE=1 "$bin" run $mechs -s 256,4k,16k,64k,256k -d 10ms -r 5 -q \
  --export-json "$work/stream.json" >/dev/null
IPCPERF_NO_SAVE=1 "$bin" latency $mechs -s 64,512,4k,16k,64k -d 10ms -r 5 -q \
  --export-json "$work/trips.json" >/dev/null
python3 - "$work" <<'PY'
import json, sys
d = sys.argv[1]
a = json.load(open(f"{d}/stream.json")); b = json.load(open(f"{d}/trips.json"))
a["cases"] += b["cases"]
a["label"] = "seed"
# Each case at its real median, its series spread ±1% by a seeded jitter: this
# VM's own run-to-run noise (10 ms series on a shared host) would hide the
# fleet's planted outliers in every host alike.
seed = 0x9E3779B97F4A7C15
def jitter():
    global seed
    seed = (seed * 6364136223846793005 + 1442695040888963407) % 2**64
    return 0.99 + 0.02 * ((seed >> 11) / 2**53)
def med(xs):
    xs = sorted(xs); n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
for c in a["cases"]:
    if c["status"] != "ok":
        continue
    if c["workload"] == "stream" and c.get("median_bytes_per_sec"):
        for s in c["series"]:
            s["elapsed_ns"] = int(s["bytes"] / c["median_bytes_per_sec"] * 1e9 * jitter())
    # A round trip's figures (the export writes them into the case itself).
    if c.get("series_p50_ns"):
        m = med(c["series_p50_ns"])
        c["series_p50_ns"] = [int(m * jitter()) for _ in c["series_p50_ns"]]
json.dump(a, open(f"{d}/seed.json", "w"))
print(f"seed: {len(a['cases'])} cases, {sum(c['status'] == 'ok' for c in a['cases'])} measured")
PY

clone() { # dialect
  local figures
  local factor="(CASE WHEN f.workload = 'round-trip' THEN 1.0 / i.k ELSE i.k END) * (0.98 + 0.04 * ((i.id * 2654435761 + f.seq * 40503 + IDX * 9973) % 1000) / 1000.0)"
  if [ "$1" = sqlite ]; then
    figures="(SELECT json_group_array(CAST(e.value AS REAL) * ${factor//IDX/e.key}) FROM json_each(f.figure_values) e)"
  else
    figures="(SELECT json_agg(e.v::float8 * ${factor//IDX/e.i} ORDER BY e.i)::text FROM json_array_elements_text(f.figure_values::json) WITH ORDINALITY e(v, i))"
  fi
  sed -e "s/:hosts/$hosts/g; s/:runs/$runs/g" "$here/clone.sql" | awk -v f="$figures" '{ gsub(/SCALED_FIGURES/, f); print }'
}

echo "building: $hosts hosts × $runs runs in SQLite and PostgreSQL"
t0=$(date +%s)
"$bin" import --db "$work/fleet.db" "$work/seed.json" >/dev/null
clone sqlite | sqlite3 "$work/fleet.db"
echo "  SQLite: $(( $(date +%s) - t0 )) s, $(du -m "$work/fleet.db" | cut -f1) MB"
t0=$(date +%s)
psql -q "$pg" -c "CREATE DATABASE $dbname" >/dev/null
"$bin" import --db "$pgurl" "$work/seed.json" >/dev/null
clone pg | psql -q -v ON_ERROR_STOP=1 "$pgurl" >/dev/null
psql -q "$pgurl" -c "ANALYZE runs, cases, series, case_figures" >/dev/null
echo "  PostgreSQL: $(( $(date +%s) - t0 )) s, $(psql -tA "$pgurl" -c "SELECT pg_database_size('$dbname') / 1048576") MB"
n_runs=$(sqlite3 "$work/fleet.db" "SELECT COUNT(*) FROM runs WHERE label = 'scale'")
n_cases=$(sqlite3 "$work/fleet.db" "SELECT COUNT(*) FROM cases c JOIN runs r ON r.id = c.run_id WHERE r.label = 'scale'")
echo "  $n_runs runs, $n_cases cases"

# One timed command: wall seconds and peak RSS (MB), its output kept.
timed() { # name db args...
  local name=$1 db=$2; shift 2
  /usr/bin/time -f "%e %M" -o "$work/t" "$bin" "$@" --db "$db" >"$work/$name.out" 2>"$work/$name.err" \
    || { echo "$name failed:"; cat "$work/$name.err"; exit 1; }
  read -r s kb <"$work/t"
  echo "$name $s $(( kb / 1024 ))" >>"$work/times"
}
: >"$work/times"
for r in $(seq "$rounds"); do
  for db in sqlite pg; do
    url="$work/fleet.db"; [ "$db" = pg ] && url="$pgurl"
    timed "$db:fleet" "$url" fleet --label scale
    timed "$db:fleet-json" "$url" fleet --label scale --format json
    timed "$db:by-kernel" "$url" fleet --label scale --by kernel
    timed "$db:page" "$url" fleet --label scale -o "$work/fleet-$db.html"
    timed "$db:all-cases" "$url" fleet --label scale --all-cases --format csv
    timed "$db:trend" "$url" trend pipe --sizes 64k --host node97
  done
done
echo
echo "$(head -1 "$work/sqlite:fleet.out")   (outliers named: $(grep -c '^  node' "$work/sqlite:fleet.out"), every one a 97th host: $(grep '^  node' "$work/sqlite:fleet.out" | awk -F'[: ]+' '{ sub("node", "", $2); if ($2 % 97) bad++ } END { print bad ? "no" : "yes" }'))"
printf '%-16s %26s %26s\n' "command" "wall s: median (range)" "peak MB: median (range)"
python3 - "$work/times" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    name, s, mb = line.split()
    rows.setdefault(name, []).append((float(s), int(mb)))
for name, v in rows.items():
    s = [x[0] for x in v]; m = [x[1] for x in v]
    print(f"{name:<16} {statistics.median(s):>8.2f} ({min(s):.2f}–{max(s):.2f}){'':>7} "
          f"{statistics.median(m):>8.0f} ({min(m)}–{max(m)})")
worst_s = max(float(l.split()[1]) for l in open(sys.argv[1]))
worst_m = max(int(l.split()[2]) for l in open(sys.argv[1]))
print(f"worst: {worst_s:.2f} s, {worst_m} MB (targets: 5 s, 300 MB): "
      f"{'met' if worst_s <= 5 and worst_m <= 300 else 'NOT met'}")
PY
