//! advise's candidates: the mechanisms that fit the question, and the waits
//! each descriptor candidate is measured with (`--wait`), one case per wait.

use ipcperf_core::mechanism::wait::{Wait, Waits};
use ipcperf_core::plan::CaseSpec;

use ipcperf_core::mechanism::MechanismKind;

use super::{AdviseArgs, Pattern};
use crate::fail::Fail;

/// The waits each descriptor candidate is measured with (see `--wait`).
pub(super) fn waits(a: &AdviseArgs) -> Result<Vec<Waits>, Fail> {
    if let Some(list) = &a.wait {
        let mut v = Vec::new();
        for item in list.split(',') {
            let w = Waits::parse(item).map_err(|e| Fail::usage(format!("--wait: {e}")))?;
            if !v.contains(&w) {
                v.push(w);
            }
        }
        return Ok(v);
    }
    // An event loop's wait: epoll, or poll where only POSIX will do (epoll is
    // Linux's).
    let event_loop = if a.posix_only {
        Wait::Poll
    } else {
        Wait::Epoll
    };
    let mut v = vec![Waits::both(Wait::Block), Waits::both(event_loop)];
    // Both sides spin: two CPUs kept busy.
    if a.cpu_budget.is_none_or(|b| b >= 2.0) {
        v.push(Waits::both(Wait::Busy));
    }
    Ok(v)
}

/// Each case of a mechanism with a choice of waits, once per wait it takes
/// (`uring` as the mechanism's io_uring twin, where it has one); the others
/// as they are.
pub(super) fn with_waits(specs: Vec<CaseSpec>, waits: &[Waits]) -> Vec<CaseSpec> {
    let mut out: Vec<CaseSpec> = Vec::new();
    for s in specs {
        if s.mechanism.waits().len() < 2 {
            out.push(s);
            continue;
        }
        for &w in waits {
            let kind = s.mechanism.waiting(w.client);
            let wait = if kind != s.mechanism {
                Waits::default()
            } else {
                w
            };
            if kind.refuse_wait(wait).is_some() {
                continue;
            }
            let mut c = s.clone();
            c.mechanism = kind;
            c.opts.wait = wait;
            // A twin named as a candidate already is measured once.
            if !out.iter().any(|o| {
                o.mechanism == c.mechanism
                    && o.opts == c.opts
                    && o.block_size == c.block_size
                    && o.placement == c.placement
                    && o.mode == c.mode
            }) {
                out.push(c);
            }
        }
    }
    out
}

/// Candidates that are not IPC between two sides (references).
const NOT_IPC: &[&str] = &["memcpy", "null"];

/// The candidates for a pattern, by name.
pub(crate) fn candidates(a: &AdviseArgs) -> Result<Vec<String>, Fail> {
    let pick = |k: &MechanismKind| -> bool {
        if NOT_IPC.contains(&k.name()) {
            return false;
        }
        match a.pattern {
            // Fixed-size wake-up mechanisms carry no request of a size.
            Pattern::RequestReply | Pattern::Replay => {
                k.round_trip().is_some() && k.default_round_trip_sizes().is_none()
            }
            Pattern::Notify => k.round_trip().is_some(),
            Pattern::Stream => !k.info().solo && k.default_round_trip_sizes().is_none(),
            Pattern::FanIn => ipcperf_core::workload::fanin::refuse(*k).is_none(),
            Pattern::FanOut => ipcperf_core::workload::fanin::refuse_fan_out(*k).is_none(),
        }
    };
    let all: Vec<String> = MechanismKind::ALL
        .iter()
        .filter(|k| pick(k))
        .map(|k| k.name().to_string())
        .collect();
    // Across a boundary: only what crosses it (the rest is left out, with why).
    let crosses = |m: &String| across_refusal(a, m).is_none();
    if a.only.is_empty() {
        return Ok(all.into_iter().filter(crosses).collect());
    }
    // As every command reads a comma list: an empty name is skipped, a list of
    // nothing else is bad input.
    let only: Vec<String> = a.only.iter().filter(|m| !m.is_empty()).cloned().collect();
    if only.is_empty() {
        return Err(Fail::usage(format!(
            "--mechanisms '{}' names no mechanism; candidates: {}",
            a.only.join(","),
            all.join(", ")
        )));
    }
    for m in &only {
        // A name of no mechanism at all is said so (a typo), not "not a candidate".
        if MechanismKind::from_name(m).is_none() {
            return Err(Fail::usage(format!(
                "--mechanisms {m}: unknown mechanism; candidates: {}",
                all.join(", ")
            )));
        }
        if !all.contains(m) {
            return Err(Fail::usage(format!(
                "--mechanisms {m}: not a candidate for the {} pattern here; candidates: {}",
                a.pattern,
                all.join(", ")
            )));
        }
    }
    Ok(only.into_iter().filter(|m| crosses(m)).collect())
}

/// Why mechanism `m` cannot be measured across the boundaries asked (None: it can).
pub(crate) fn across_refusal(a: &AdviseArgs, m: &str) -> Option<String> {
    let k = MechanismKind::from_name(m)?;
    a.across
        .as_ref()?
        .0
        .iter()
        .find_map(|&ns| ipcperf_core::crossing::refuse(k, ns))
}

/// The candidates `--across` leaves out, with why.
pub(crate) fn left_across(a: &AdviseArgs) -> Vec<(String, String)> {
    MechanismKind::ALL
        .iter()
        .filter(|k| a.only.is_empty() || a.only.iter().any(|m| m == k.name()))
        .filter_map(|k| across_refusal(a, k.name()).map(|why| (k.name().to_string(), why)))
        .filter(|(m, _)| !NOT_IPC.contains(&m.as_str()))
        .collect()
}

/// Leave out, unmeasured, the cases `ask` leaves out whatever they measure
/// (`--posix-only`, `--messages`: a byte stream or epoll stays one): measuring
/// them took ~35 of 92 cases' time under `--messages --posix-only`. The names
/// and reasons, each once, for the answer to say; an error where nothing
/// would be left to measure.
pub(crate) fn drop_left_out(
    specs: &mut Vec<CaseSpec>,
    ask: &crate::advise::Ask,
) -> Result<Vec<(String, String)>, Fail> {
    let mut left: Vec<(String, String)> = Vec::new();
    specs.retain(|s| {
        let rec = ipcperf_core::record::CaseRecord::for_spec(s);
        match crate::advise::left_out_unmeasured(&rec, ask) {
            Some(l) => {
                if !left.contains(&l) {
                    left.push(l);
                }
                false
            }
            None => true,
        }
    });
    if specs.is_empty() && !left.is_empty() {
        let why: Vec<String> = crate::advise::left_out_lines(&left)
            .into_iter()
            .map(|(n, w)| format!("{n}: {w}"))
            .collect();
        return Err(Fail::usage(format!(
            "no candidate is left to measure: {}",
            why.join("; ")
        )));
    }
    Ok(left)
}
