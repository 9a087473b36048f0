//! The machine as it is: the one-way latency between every pair of CPUs,
//! measured with a cache-line ping-pong (core-to-core-latency's method: two
//! threads pinned to the two CPUs take turns flipping one flag with a
//! compare-and-swap; a sample is `rounds` round trips timed together, one way
//! being half a round trip). Each pair gets a fresh line, allocated by the
//! measuring (ping) side after it is pinned, so the line lives on that side's
//! NUMA node; each ordered pair is measured (the line's home differs by
//! direction), in a few series whose spread says how steady the pair was.
//!
//! In a VM, sysfs describes the guest, not where the vCPUs run: two vCPUs the
//! host runs on one core's two hyperthreads show here as a pair several times
//! faster than its class. [`group`] clusters the measured latencies into levels
//! whose members are within the noise of one another and names the pairs that
//! sit far from their sysfs class.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::topology::{PlacementClass, Topology};

/// How much to measure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Round trips timed together in one sample.
    pub rounds: u32,
    /// Series per ordered pair (each a median of its samples).
    pub series: u32,
    /// Time for each ordered pair's series together.
    pub per_pair_ms: u64,
}

/// The most a measurement may take before it starts, for `n` CPUs: about 30 ms
/// an ordered pair, at least 0.5 s in all and at most 45 s (each pair at least
/// 3 ms and at most 250 ms).
pub fn plan(n: usize) -> Plan {
    let pairs = (n * n.saturating_sub(1)).max(1) as f64;
    let budget = (0.03 * pairs).clamp(0.5, 45.0);
    let per_pair = (budget / pairs).clamp(0.003, 0.25);
    Plan {
        rounds: 1000,
        series: 3,
        per_pair_ms: (per_pair * 1e3).round() as u64,
    }
}

impl Plan {
    /// About how long `n` CPUs take (each ordered pair, its threads' start).
    pub fn estimate_secs(&self, n: usize) -> f64 {
        (n * n.saturating_sub(1)) as f64 * (self.per_pair_ms as f64 / 1e3 + 0.001)
    }
}

/// One ordered pair: the ping side (whose node holds the line) and the pong side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    pub ping: usize,
    pub pong: usize,
    /// The median one-way latency of each series, ns.
    pub series_ns: Vec<f64>,
    /// The median of the series, ns.
    pub one_way_ns: f64,
    /// (max − min) / median of the series.
    pub spread: f64,
    /// The samples the series hold together.
    pub samples: u32,
}

/// A whole measurement: every ordered pair of `cpus`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// When it was taken (ms since the epoch): in a VM it is a snapshot.
    pub at_ms: u64,
    /// The boot it was taken in (/proc/sys/kernel/random/boot_id).
    #[serde(default)]
    pub boot_id: String,
    pub method: String,
    pub plan: Plan,
    pub cpus: Vec<usize>,
    pub pairs: Vec<Pair>,
    /// How long it took, s.
    pub secs: f64,
    /// The levels found in the latencies ([`group`]).
    pub levels: Vec<Level>,
    /// Pairs far from their sysfs class.
    pub outliers: Vec<Outlier>,
}

/// The method's name in records.
pub const METHOD: &str = "cache-line ping-pong (compare-and-swap), one way = half a round trip";

/// This boot's id, or empty.
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

const PING: bool = false;
const PONG: bool = true;

/// The flag, alone on its cache line (and the next, against the adjacent-line
/// prefetcher).
#[repr(align(128))]
struct Line(AtomicBool);

/// Spin until `flag` goes from `from` to `to`, or `end` is set (looked at every
/// 65,536 failed tries, with the clock against `deadline`, which sets it).
#[inline(always)]
fn flip(flag: &AtomicBool, from: bool, to: bool, end: &AtomicBool, deadline: Instant) -> bool {
    let mut tries = 0u32;
    while flag
        .compare_exchange(from, to, Ordering::Relaxed, Ordering::Relaxed)
        .is_err()
    {
        tries = tries.wrapping_add(1);
        if tries & 0xffff == 0 && (end.load(Ordering::Relaxed) || Instant::now() > deadline) {
            end.store(true, Ordering::Relaxed);
            return false;
        }
    }
    true
}

/// The longest a pair may take before it is given up: a vCPU the host does not
/// run for this long is reported, not waited for.
const PAIR_LIMIT: Duration = Duration::from_secs(2);

/// Measure one ordered pair: `series` series of samples of `rounds` round trips
/// for `plan.per_pair_ms` in all, after one warm-up sample. `stop`: give up now.
/// A pair whose CPUs did not take turns within [`PAIR_LIMIT`] is measured
/// again: once (a busy host that ran one of the vCPUs late), and after each
/// stop of this process that fell in it (Ctrl-Z: its clock counted the stop),
/// up to three; a stop in a pair measured whole is in no more than a few of
/// its samples, and each series is their median.
pub fn measure_pair(ping: usize, pong: usize, plan: &Plan, stop: &AtomicBool) -> Result<Pair> {
    let (mut again, mut stops) = (1, 3);
    loop {
        let mark = ipcperf_sys::signal::continues();
        match measure_pair_once(ping, pong, plan, stop) {
            Err(Error::Timeout(_)) if ipcperf_sys::signal::continues() != mark && stops > 0 => {
                stops -= 1
            }
            Err(Error::Timeout(_)) if again > 0 => again -= 1,
            Err(Error::Timeout(lost)) => return Err(Error::Invalid(lost)),
            r => return r,
        }
    }
}

/// One try at a pair; CPUs that did not take turns in time are a [`Error::Timeout`].
fn measure_pair_once(ping: usize, pong: usize, plan: &Plan, stop: &AtomicBool) -> Result<Pair> {
    if ping == pong {
        return Err(Error::Invalid(format!("CPU {ping} with itself is no pair")));
    }
    // Set when the ping side is done (or either side gives up): the other stops.
    let give_up = Arc::new(AtomicBool::new(false));
    // The line: allocated by the ping thread once pinned, handed to pong.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Arc<Line>>(1);
    let deadline = Instant::now() + PAIR_LIMIT + Duration::from_millis(plan.per_pair_ms * 2);
    let pong_thread = {
        let give_up = give_up.clone();
        std::thread::Builder::new()
            .name(format!("c2c-pong-{pong}"))
            .spawn(move || -> Result<()> {
                if let Err(e) = ipcperf_sys::cpu::pin_current_thread(pong) {
                    give_up.store(true, Ordering::Relaxed);
                    return Err(Error::Invalid(format!("cannot pin to CPU {pong}: {e}")));
                }
                let Ok(line) = rx.recv_timeout(PAIR_LIMIT) else {
                    return Ok(());
                };
                // Answer until the ping side is done.
                while flip(&line.0, PING, PONG, &give_up, deadline) {}
                Ok(())
            })
            .map_err(|e| Error::Invalid(format!("cannot start a thread: {e}")))?
    };
    // The ping side in a thread of its own too: the caller's affinity is untouched.
    let ping_side = || -> Result<Pair> {
        ipcperf_sys::cpu::pin_current_thread(ping)
            .map_err(|e| Error::Invalid(format!("cannot pin to CPU {ping}: {e}")))?;
        let line = Arc::new(Line(AtomicBool::new(PING)));
        tx.send(line.clone())
            .map_err(|_| Error::Invalid(format!("CPU {pong}'s side ended early")))?;
        let rounds = plan.rounds.max(1);
        let sample = |line: &Line| -> Option<f64> {
            let t0 = Instant::now();
            for _ in 0..rounds {
                if !flip(&line.0, PONG, PING, &give_up, deadline) {
                    return None;
                }
            }
            Some(t0.elapsed().as_nanos() as f64 / rounds as f64 / 2.0)
        };
        let lost = || {
            Error::Timeout(format!(
                "CPUs {ping} and {pong} did not take turns within {} s (a CPU the host does \
                 not run?)",
                PAIR_LIMIT.as_secs()
            ))
        };
        // The first round trip starts the pong side; one sample warms up.
        let warm = sample(&line).ok_or_else(lost)?;
        let per_series = Duration::from_micros(plan.per_pair_ms * 1000 / plan.series.max(1) as u64);
        let mut series_ns = Vec::new();
        let mut samples = 0u32;
        let mut v = Vec::new();
        for _ in 0..plan.series.max(1) {
            v.clear();
            let t0 = Instant::now();
            while v.len() < 3 || (t0.elapsed() < per_series && v.len() < 100_000) {
                if stop.load(Ordering::Relaxed) {
                    give_up.store(true, Ordering::Relaxed);
                    return Err(Error::Invalid("interrupted".into()));
                }
                v.push(sample(&line).ok_or_else(lost)?);
            }
            samples += v.len() as u32;
            series_ns.push(median(&mut v));
        }
        let _ = warm;
        let mut s = series_ns.clone();
        let mid = median(&mut s);
        let spread = (s[s.len() - 1] - s[0]) / mid.max(1e-9);
        Ok(Pair {
            ping,
            pong,
            series_ns,
            one_way_ns: mid,
            spread,
            samples,
        })
    };
    let result = std::thread::scope(|s| {
        std::thread::Builder::new()
            .name(format!("c2c-ping-{ping}"))
            .spawn_scoped(s, ping_side)
            .map_err(|e| Error::Invalid(format!("cannot start a thread: {e}")))?
            .join()
            .unwrap_or_else(|_| Err(Error::Invalid(format!("CPU {ping}'s side failed"))))
    });
    give_up.store(true, Ordering::Relaxed);
    let joined = pong_thread.join();
    let pair = result?;
    match joined {
        Ok(Ok(())) => Ok(pair),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(Error::Invalid(format!("CPU {pong}'s side failed"))),
    }
}

/// The median, sorting `v` in place; NaN for none.
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Measure every ordered pair of `cpus` (ping, pong), in one thread of pairs at
/// a time; `each(done, total)` after each pair; `stop` ends it early. A pair
/// that fails ends it with that pair's reason.
pub fn measure(
    cpus: &[usize],
    plan: &Plan,
    stop: &AtomicBool,
    mut each: impl FnMut(usize, usize),
) -> Result<Vec<Pair>> {
    let total = cpus.len() * cpus.len().saturating_sub(1);
    let mut out = Vec::with_capacity(total);
    for &a in cpus {
        for &b in cpus {
            if a != b {
                out.push(measure_pair(a, b, plan, stop)?);
                each(out.len(), total);
            }
        }
    }
    Ok(out)
}

/// A level of latency: pairs within the noise of one another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    /// The median one-way latency of its pairs, ns.
    pub median_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    /// Its ordered pairs (ping, pong).
    pub pairs: Vec<(usize, usize)>,
    /// Its pairs' sysfs classes, with how many of each.
    pub classes: Vec<(PlacementClass, usize)>,
    /// The groups of CPUs its pairs join (connected through them), where the
    /// level is not the machine's common case.
    pub groups: Vec<Vec<usize>>,
}

/// A pair whose latency is under a third, or over three times, its class's median.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outlier {
    pub ping: usize,
    pub pong: usize,
    pub one_way_ns: f64,
    pub class: PlacementClass,
    pub class_median_ns: f64,
}

/// The noise of a measurement: the median of the pairs' series spreads, at least 5%.
pub fn noise(pairs: &[Pair]) -> f64 {
    let mut s: Vec<f64> = pairs.iter().map(|p| p.spread).collect();
    if s.is_empty() {
        return 0.05;
    }
    median(&mut s).max(0.05)
}

/// The median latency of each sysfs class among `pairs`.
pub fn class_medians(pairs: &[Pair], topo: &Topology) -> Vec<(PlacementClass, f64)> {
    let mut by: std::collections::BTreeMap<PlacementClass, Vec<f64>> = Default::default();
    for p in pairs {
        if let Some(c) = topo.classify(p.ping, p.pong) {
            by.entry(c).or_default().push(p.one_way_ns);
        }
    }
    by.into_iter()
        .map(|(c, mut v)| (c, median(&mut v)))
        .collect()
}

/// Levels of the measured latencies and the pairs far from their class.
///
/// Sorted by latency, a new level starts where one pair is slower than the one
/// before by more than the noise allows: 3 × the measurement's noise (the
/// median series spread), at least 25%. A level's groups are the CPUs its pairs
/// connect, named for every level but the one holding most pairs.
pub fn group(pairs: &[Pair], topo: &Topology) -> (Vec<Level>, Vec<Outlier>) {
    let mut sorted: Vec<&Pair> = pairs.iter().filter(|p| p.one_way_ns.is_finite()).collect();
    sorted.sort_by(|a, b| a.one_way_ns.total_cmp(&b.one_way_ns));
    let step = (3.0 * noise(pairs)).max(0.25);
    let mut levels: Vec<Vec<&Pair>> = Vec::new();
    for p in sorted {
        match levels.last_mut() {
            Some(l) if p.one_way_ns <= l[l.len() - 1].one_way_ns * (1.0 + step) => l.push(p),
            _ => levels.push(vec![p]),
        }
    }
    let biggest = levels.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::new();
    let mut named_biggest = false;
    for l in &levels {
        let mut v: Vec<f64> = l.iter().map(|p| p.one_way_ns).collect();
        let mut classes: std::collections::BTreeMap<PlacementClass, usize> = Default::default();
        for p in l {
            if let Some(c) = topo.classify(p.ping, p.pong) {
                *classes.entry(c).or_default() += 1;
            }
        }
        let common = l.len() == biggest && !named_biggest;
        named_biggest |= common;
        out.push(Level {
            median_ns: median(&mut v),
            min_ns: v[0],
            max_ns: v[v.len() - 1],
            pairs: l.iter().map(|p| (p.ping, p.pong)).collect(),
            classes: classes.into_iter().collect(),
            groups: if common {
                Vec::new()
            } else {
                components(l.iter().map(|p| (p.ping, p.pong)))
            },
        });
    }
    let medians = class_medians(pairs, topo);
    let mut outliers = Vec::new();
    for p in pairs {
        let Some(class) = topo.classify(p.ping, p.pong) else {
            continue;
        };
        let Some(&(_, m)) = medians.iter().find(|(c, _)| *c == class) else {
            continue;
        };
        if p.one_way_ns * 3.0 < m || p.one_way_ns > 3.0 * m {
            outliers.push(Outlier {
                ping: p.ping,
                pong: p.pong,
                one_way_ns: p.one_way_ns,
                class,
                class_median_ns: m,
            });
        }
    }
    (out, outliers)
}

/// The groups of CPUs the pairs connect.
fn components(pairs: impl Iterator<Item = (usize, usize)>) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (a, b) in pairs {
        let ia = groups.iter().position(|g| g.contains(&a));
        let ib = groups.iter().position(|g| g.contains(&b));
        match (ia, ib) {
            (Some(i), Some(j)) if i != j => {
                let g = groups.remove(i.max(j));
                groups[i.min(j)].extend(g);
            }
            (Some(_), Some(_)) => {}
            (Some(i), None) => groups[i].push(b),
            (None, Some(j)) => groups[j].push(a),
            (None, None) => groups.push(vec![a, b]),
        }
    }
    for g in &mut groups {
        g.sort_unstable();
    }
    groups.sort();
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(ping: usize, pong: usize, ns: f64) -> Pair {
        Pair {
            ping,
            pong,
            series_ns: vec![ns; 3],
            one_way_ns: ns,
            spread: 0.02,
            samples: 30,
        }
    }

    /// Four CPUs that sysfs calls one L3; the host runs 0 and 2 on one core.
    fn vm4() -> Topology {
        Topology {
            cpus: (0..4)
                .map(|c| crate::topology::CpuPlace {
                    cpu: c,
                    package: 0,
                    die: 0,
                    core: c as i64,
                    node: Some(0),
                    smt_siblings: vec![c],
                    l2: Some(vec![c]),
                    l3: Some(vec![0, 1, 2, 3]),
                })
                .collect(),
            offline: Vec::new(),
            not_allowed: Vec::new(),
            isolated: Vec::new(),
        }
    }

    #[test]
    fn a_fast_pair_is_its_own_level_and_outside_its_class() {
        let topo = vm4();
        let mut pairs = Vec::new();
        for a in 0..4 {
            for b in 0..4 {
                if a != b {
                    let fast = (a, b) == (0, 2) || (a, b) == (2, 0);
                    pairs.push(pair(a, b, if fast { 9.0 } else { 80.0 + (a + b) as f64 }));
                }
            }
        }
        let (levels, outliers) = group(&pairs, &topo);
        assert_eq!(levels.len(), 2, "{levels:#?}");
        assert_eq!(levels[0].pairs, [(0, 2), (2, 0)]);
        assert_eq!(levels[0].groups, [vec![0, 2]]);
        assert_eq!(levels[0].classes, [(PlacementClass::SharedL3, 2)]);
        assert!(levels[1].groups.is_empty());
        assert_eq!(levels[1].pairs.len(), 10);
        assert_eq!(outliers.len(), 2);
        assert!(outliers.iter().all(|o| o.class == PlacementClass::SharedL3));
    }

    #[test]
    fn a_real_ping_pong_between_two_cpus_or_a_clear_refusal() {
        let cpus = ipcperf_sys::cpu::allowed_cpus().unwrap();
        let stop = AtomicBool::new(false);
        let plan = Plan {
            rounds: 200,
            series: 3,
            per_pair_ms: 15,
        };
        assert!(measure_pair(cpus[0], cpus[0], &plan, &stop).is_err());
        if cpus.len() < 2 {
            eprintln!("skipped: one CPU here");
            return;
        }
        let p = measure_pair(cpus[0], cpus[1], &plan, &stop).unwrap();
        assert_eq!(p.series_ns.len(), 3);
        assert!(p.one_way_ns > 0.0 && p.one_way_ns < 1e6, "{p:?}");
        assert!(p.samples >= 9);
        // Stopped: refused at once.
        stop.store(true, Ordering::Relaxed);
        let t0 = Instant::now();
        assert!(measure_pair(cpus[0], cpus[1], &plan, &stop).is_err());
        assert!(t0.elapsed() < Duration::from_secs(3));
    }

    /// core-to-core-latency's lower triangle (row = ping CPU, column = pong CPU)
    /// on the 16-CPU Xeon guest (../shared/measure/xeon16-c2c.txt, round 1).
    fn xeon16_pairs() -> Vec<Pair> {
        let text = include_str!("../tests/fixtures/c2c/xeon16-round1.csv");
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            for (j, v) in line.split(',').enumerate() {
                if let Ok(ns) = v.parse::<f64>() {
                    out.push(pair(i, j, ns));
                    out.push(pair(j, i, ns));
                }
            }
        }
        out
    }

    #[test]
    fn the_xeon_guests_hidden_siblings_are_found() {
        let topo = crate::topology::tests::fixture("xeon16");
        let pairs = xeon16_pairs();
        assert_eq!(pairs.len(), 240);
        let (levels, outliers) = group(&pairs, &topo);
        // 12↔9 and 12↔10 at 8.6 ns against a median of ~83 ns: their own level,
        // one group, every pair of it shared-l3 by sysfs.
        assert_eq!(levels[0].groups, [vec![9, 10, 12]], "{levels:#?}");
        assert_eq!(levels[0].pairs.len(), 4);
        assert!(levels[0].median_ns < 9.0);
        assert_eq!(levels[0].classes, [(PlacementClass::SharedL3, 4)]);
        let fast: Vec<(usize, usize)> = outliers
            .iter()
            .filter(|o| o.one_way_ns < o.class_median_ns)
            .map(|o| (o.ping, o.pong))
            .collect();
        assert_eq!(fast.len(), 4, "{outliers:#?}");
        assert!(fast.contains(&(12, 9)) && fast.contains(&(10, 12)));
        let m = class_medians(&pairs, &topo);
        assert_eq!(m.len(), 1);
        assert!((75.0..90.0).contains(&m[0].1), "{m:?}");
    }

    #[test]
    fn the_plan_keeps_to_its_budget() {
        assert!(plan(2).estimate_secs(2) <= 2.0);
        assert!(plan(16).estimate_secs(16) <= 10.0);
        assert!(plan(64).estimate_secs(64) <= 60.0);
        assert_eq!(
            components([(1, 2), (3, 4), (2, 3), (7, 8)].into_iter()),
            [vec![1, 2, 3, 4], vec![7, 8]]
        );
    }
}
