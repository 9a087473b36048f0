//! `--background cpu:N|memory:N`: N hog threads on CPUs the two sides of the cases
//! do not use (Duncan's "loaded system"): `cpu` spins, `memory` copies 64 MiB
//! buffers back and forth (a memory-bandwidth load). Started before the first case,
//! stopped and joined when the guard drops (success or error); Ctrl-C ends the
//! process, and them with it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use ipcperf_core::plan::CaseSpec;
use ipcperf_core::topology::{format_cpu_list, Topology};

use crate::fail::Fail;

/// What load, how many hogs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Background {
    pub memory: bool,
    pub hogs: usize,
}

/// Parse `cpu:N` or `memory:N` (N from 1 to 1024; at most one per free CPU when it
/// runs).
pub fn parse(s: &str) -> Result<Background, String> {
    let (kind, n) = s
        .split_once(':')
        .ok_or_else(|| format!("'{s}': give cpu:N or memory:N"))?;
    let memory = match kind {
        "cpu" => false,
        "memory" | "mem" => true,
        _ => return Err(format!("'{kind}': the background load is cpu or memory")),
    };
    let hogs: usize = n
        .parse()
        .ok()
        .filter(|h| (1..=1024).contains(h))
        .ok_or_else(|| format!("'{n}': give 1 to 1024 hogs"))?;
    Ok(Background { memory, hogs })
}

impl Background {
    /// As recorded in every case's options: `cpu:2 on 2-3`.
    pub fn describe(&self, cpus: &[usize]) -> String {
        format!(
            "{}:{} on {}",
            if self.memory { "memory" } else { "cpu" },
            self.hogs,
            format_cpu_list(cpus)
        )
    }

    /// The CPUs the hogs may use: usable, and used by neither side of any case.
    /// Refused when there are none, or when a case is not pinned (its sides could
    /// run anywhere, under a hog).
    pub fn cpus(&self, specs: &[CaseSpec], topo: &Topology) -> Result<Vec<usize>, Fail> {
        let mut busy = Vec::new();
        for s in specs {
            let (Some(w), Some(r)) = (s.placement.writer_cpu, s.placement.reader_cpu) else {
                return Err(Fail::usage(
                    "--background needs pinned sides (--pin): a hog runs on a CPU the two \
                     sides do not use",
                ));
            };
            busy.extend([w, r]);
        }
        // Cores of their own first: a hog on an SMT sibling of a side shares that
        // side's core (its execution units, L1 and L2), a harsher load than a busy
        // machine; siblings take hogs only when no free core is left.
        let mut free: Vec<usize> = topo
            .cpus
            .iter()
            .map(|p| p.cpu)
            .filter(|c| !busy.contains(c))
            .collect();
        let shares_a_core = |c: &usize| {
            topo.place(*c)
                .is_some_and(|p| p.smt_siblings.iter().any(|s| busy.contains(s)))
        };
        free.sort_by_key(|c| (shares_a_core(c), *c));
        if !free.is_empty() && self.hogs > free.len() {
            // More hogs than free CPUs would only share them (and memory hogs hold
            // 128 MiB each): one per free CPU at most.
            return Err(Fail::usage(format!(
                "--background {}:{}: {} CPU{} left free for hogs ({}): ask for at most that many",
                if self.memory { "memory" } else { "cpu" },
                self.hogs,
                free.len(),
                if free.len() == 1 { " is" } else { "s are" },
                format_cpu_list(&free)
            )));
        }
        if free.is_empty() {
            let usable: Vec<usize> = topo.cpus.iter().map(|p| p.cpu).collect();
            return Err(Fail::usage(format!(
                "--background: no CPU is left for a hog: the cases use {} of the usable {}",
                format_cpu_list(&busy),
                format_cpu_list(&usable)
            )));
        }
        Ok(free)
    }

    /// Start the hogs, one per CPU of `cpus`.
    pub fn start(&self, cpus: &[usize]) -> Result<Hogs, Fail> {
        let stop = Arc::new(AtomicBool::new(false));
        let mut joins = Vec::new();
        for i in 0..self.hogs {
            let cpu = cpus[i % cpus.len()];
            let (stop, memory) = (stop.clone(), self.memory);
            let j = std::thread::Builder::new()
                .name(format!("ipcperf-hog-{i}"))
                .spawn(move || {
                    let _pin = ipcperf_sys::cpu::PinGuard::pin(Some(cpu));
                    if memory {
                        let (mut a, mut b) = (vec![1u8; 64 << 20], vec![2u8; 64 << 20]);
                        while !stop.load(Ordering::Relaxed) {
                            b.copy_from_slice(&a);
                            std::mem::swap(&mut a, &mut b);
                            std::hint::black_box(&a);
                        }
                    } else {
                        let mut x = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            for _ in 0..10_000 {
                                x = std::hint::black_box(
                                    x.wrapping_mul(6364136223846793005).wrapping_add(1),
                                );
                            }
                        }
                    }
                })
                .map_err(|e| Fail::failure(format!("cannot start a background hog: {e}")))?;
            joins.push(j);
        }
        Ok(Hogs { stop, joins })
    }
}

/// The running hogs; dropping it stops and joins them.
pub struct Hogs {
    stop: Arc<AtomicBool>,
    joins: Vec<JoinHandle<()>>,
}

impl Drop for Hogs {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for j in self.joins.drain(..) {
            let _ = j.join();
        }
    }
}

/// Start the load `bg` asks for (if any) on CPUs the cases leave free, and name
/// it in every case's options.
pub fn apply(
    bg: Option<Background>,
    specs: &mut [CaseSpec],
    topo: &Topology,
) -> Result<Option<Hogs>, Fail> {
    let Some(bg) = bg else { return Ok(None) };
    let cpus = bg.cpus(specs, topo)?;
    let text = bg.describe(&cpus[..bg.hogs.min(cpus.len())]);
    for s in specs.iter_mut() {
        s.opts.background = Some(text.clone());
    }
    bg.start(&cpus).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::fixture_topology;
    use ipcperf_core::mechanism::MechanismKind;
    use ipcperf_core::mode::{Mode, Placement};

    fn pinned(w: usize, r: usize) -> CaseSpec {
        CaseSpec::new(
            MechanismKind::Pipe,
            Mode::Processes,
            4096,
            Placement::pinned(w, r),
        )
    }

    /// Hogs go to cores the sides leave whole (an emulated 64-CPU server put the
    /// first hog on the writer's SMT sibling); siblings of a side come last.
    #[test]
    fn hogs_take_cores_of_their_own_before_a_sides_sibling() {
        // Siblings c and c+8; the sides on 0 and 1, so 8 and 9 share their cores.
        let t = fixture_topology("intel-2s-smt");
        let bg = Background {
            memory: false,
            hogs: 4,
        };
        let cpus = bg.cpus(&[pinned(0, 1)], &t).unwrap();
        assert_eq!(&cpus[..4], &[2, 3, 4, 5]);
        assert_eq!(&cpus[cpus.len() - 2..], &[8, 9]);
        assert!(!cpus.contains(&0) && !cpus.contains(&1));
        // All 14 free CPUs asked for: the siblings are used, as the last resort.
        let bg = Background {
            memory: false,
            hogs: 14,
        };
        assert_eq!(bg.cpus(&[pinned(0, 1)], &t).unwrap().len(), 14);
    }
}
