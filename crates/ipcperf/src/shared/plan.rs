//! The parts of a plan every measuring command makes the same way: mechanisms by
//! name, placements from `--pin`, a series' length.

use ipcperf_core::mechanism::MechanismKind;
use ipcperf_core::mode::Placement;
use ipcperf_core::plan::{CaseSpec, Length};
use ipcperf_core::topology::{format_cpu_list, PlacementClass, Topology};

use crate::fail::Fail;
use crate::shared::args::{CaseArgs, PairsList, PinArg};

/// A read of the history (`trend`, `fleet`) that found nothing for `names`: a
/// name no build of ipcperf measures is bad input, said as such; one of a
/// library this build lacks may still be in a history (imported), so passes.
pub fn refuse_unknown(names: &[String]) -> Result<(), Fail> {
    for n in names.iter().flat_map(|n| n.split(',')) {
        if !MechanismKind::NOT_BUILT.iter().any(|m| m.0 == n) {
            parse_mechanisms(&[n.to_string()])?;
        }
    }
    Ok(())
}

pub fn parse_mechanisms(names: &[String]) -> Result<Vec<MechanismKind>, Fail> {
    let mut v = Vec::new();
    for n in names {
        for part in n.split(',').filter(|p| !p.is_empty()) {
            let k = MechanismKind::from_name(part).ok_or_else(|| {
                if let Some((_, feature)) = MechanismKind::NOT_BUILT.iter().find(|m| m.0 == part) {
                    return Fail::usage(format!(
                        "{part} is not in this build: its library comes with cargo's --features \
                         {feature} (cargo build --release --features {feature})"
                    ));
                }
                let known: Vec<_> = MechanismKind::INFOS.iter().map(|m| m.name).collect();
                Fail::usage(format!(
                    "unknown mechanism '{part}' (known: {})",
                    known.join(", ")
                ))
            })?;
            if !v.contains(&k) {
                v.push(k);
            }
        }
    }
    // `run ''` or `run ,` named mechanisms and named none: bad input, not an
    // empty run saved with an empty reason.
    if v.is_empty() && !names.is_empty() {
        return Err(Fail::usage(format!(
            "'{}' names no mechanism (a comma list, such as pipe,unix; `ipcperf list` names them)",
            names.join(" ")
        )));
    }
    Ok(v)
}

/// Refuse, as bad input and before anything is measured, a case of a named
/// mechanism that its plan already says cannot run (`round_trip`: as a round
/// trip, else as a stream; `peer`: with its peer on another machine, `--peer`):
/// one line, the first such case and its reason, with how many more there are.
/// Without named mechanisms (every one, or the default suite) such a case stays
/// in the run as a row that says why it was skipped.
pub fn refuse_up_front(
    specs: &[ipcperf_core::plan::CaseSpec],
    named: bool,
    round_trip: bool,
    peer: bool,
) -> Result<(), Fail> {
    if !named {
        return Ok(());
    }
    let refused: Vec<_> = specs
        .iter()
        .filter_map(|s| {
            s.refusal(round_trip)
                .or_else(|| {
                    peer.then(|| ipcperf_core::runner::remote_refusal(s))
                        .flatten()
                })
                .map(|why| (s, why))
        })
        .collect();
    let Some((s, why)) = refused.first() else {
        return Ok(());
    };
    let more = match refused.len() - 1 {
        0 => String::new(),
        1 => " (and 1 more case)".into(),
        n => format!(" (and {n} more cases)"),
    };
    Err(Fail::usage(format!(
        "{} {} {} cannot run: {why}{more}",
        s.mechanism.name(),
        s.mode.name(),
        crate::units::fmt_size(s.block_size as u64)
    )))
}

/// The payload a stream of mechanism `m` takes when the user chose none: the
/// default (`payload`), or where `m` refuses it but takes the payload untouched
/// (vmsplice: its reader splices the pages away unlooked-at), that, with a
/// note saying so. A payload the user chose is kept (and refused if it must be).
pub fn stream_payload(
    m: MechanismKind,
    payload: ipcperf_core::payload::Payload,
    chosen: bool,
) -> ipcperf_core::payload::Payload {
    use ipcperf_core::payload::Payload;
    if chosen || m.refuse_payload(payload).is_none() || m.refuse_payload(Payload::NoTouch).is_some()
    {
        return payload;
    }
    // The reason, past its own "runs with --no-touch only (touch asked)".
    let why = m.refuse_payload(payload).unwrap_or_default();
    let why = why.split_once("): ").map_or(why.as_str(), |(_, w)| w);
    ipcperf_results::console::note(&format!(
        "{} runs with --no-touch, the one payload it takes: {why}",
        m.name()
    ));
    Payload::NoTouch
}

/// The placements `--pin` asks for; `db` is the history (`--db`) a
/// `measured:` placement reads its measurement from.
pub fn placements(
    pins: &[PinArg],
    default_suite: bool,
    topo: &Topology,
    db: Option<&str>,
) -> Result<Vec<Placement>, Fail> {
    let usable: Vec<usize> = topo.cpus.iter().map(|p| p.cpu).collect();
    let check = |c: usize| {
        if usable.contains(&c) {
            Ok(c)
        } else {
            Err(Fail::usage(format!(
                "CPU {c} is not one this process may use (usable: {}; see `ipcperf topology`)",
                format_cpu_list(&usable)
            )))
        }
    };
    let pair = |w: usize, r: usize| Placement::pinned(w, r).with_class(topo.classify(w, r));
    let first = usable.first().copied().unwrap_or(0);
    let second = usable.get(1).copied();
    // Without --pin: the default suite on one CPU and across two; a named
    // case across two (one CPU: on it), as the suite measures that relation, so
    // naming a mechanism does not give a noisier figure than the suite's (an
    // unpinned 64 KiB pipe read 119 MB/s, 83.1-275, as the scheduler moved
    // it). `--pin none` leaves the sides to the scheduler.
    if pins.is_empty() {
        return Ok(match second {
            Some(s) if default_suite => vec![pair(first, first), pair(first, s)],
            Some(s) => vec![pair(first, s)],
            None => vec![pair(first, first)],
        });
    }
    let mut v = Vec::new();
    let mut absent = Vec::new();
    for p in pins {
        let pls = match *p {
            PinArg::Cpus(w, r) => vec![pair(check(w)?, check(r)?)],
            PinArg::Same => vec![pair(first, first)],
            PinArg::Cross => match second {
                Some(s) => vec![pair(first, s)],
                None => return Err(Fail::usage(topo_one_cpu(&usable))),
            },
            PinArg::None => vec![Placement::UNPINNED],
            PinArg::Measured(which) => {
                let m = crate::measured::current(topo, db)?;
                match crate::measured::pick(&m, which) {
                    Some((w, r, ns)) => {
                        vec![pair(check(w)?, check(r)?).with_measured(Some(ns.round() as u32))]
                    }
                    None => return Err(Fail::failure("the measurement holds no pair")),
                }
            }
            PinArg::Class(c) => match topo.representative(c) {
                Some((w, r)) => vec![pair(w, r)],
                None => return Err(Fail::usage(topo.absent_reason(c))),
            },
            PinArg::All => {
                let present = topo.classes();
                absent.extend(
                    PlacementClass::ALL
                        .into_iter()
                        .filter(|c| !present.iter().any(|(k, _)| k == c))
                        .map(|c| c.name()),
                );
                present.into_iter().map(|(_, (w, r))| pair(w, r)).collect()
            }
        };
        for pl in pls {
            if !v.contains(&pl) {
                v.push(pl);
            }
        }
    }
    if !absent.is_empty() {
        ipcperf_results::console::note_once(&format!(
            "placement classes this machine does not have: {} (see `ipcperf topology`)",
            absent.join(", ")
        ));
    }
    Ok(v)
}

fn topo_one_cpu(usable: &[usize]) -> String {
    format!(
        "`cross` needs two CPUs, and this process may use one ({})",
        format_cpu_list(usable)
    )
}

/// The timed series a plan spends when neither `--duration` nor `--count` is
/// given: one budget, shared by all its series, so that naming a mechanism or
/// not changes how many cases run, never by what rule their series are cut.
pub const SERIES_BUDGET_MS: u64 = 10_000;
/// The shortest and longest series the budget gives.
pub const SERIES_MS: std::ops::RangeInclusive<u64> = 40..=600;

/// One series' length by the budget rule: [`SERIES_BUDGET_MS`] shared by
/// `series` series (cases × `--repeat`), kept within [`SERIES_MS`].
pub fn budget_series_ms(series: usize) -> u64 {
    (SERIES_BUDGET_MS / series.max(1) as u64).clamp(*SERIES_MS.start(), *SERIES_MS.end())
}

/// The line that says how the series were cut (stderr, none with `-q`).
pub fn say_series(cases: usize, repeat: u32, ms: u64) {
    ipcperf_results::console::note(&format!(
        "{cases} case{} × {repeat} series of {ms} ms (the default: {} s of series shared by the \
         plan, {}–{} ms each; --duration or --count sets it)",
        if cases == 1 { "" } else { "s" },
        SERIES_BUDGET_MS / 1000,
        SERIES_MS.start(),
        SERIES_MS.end()
    ));
}

/// Mark the cases whose figure may hold wake-ups from idle (two pinned CPUs,
/// one pair, a sleeping wait, at the machine's own idle) for one more series at
/// polling idle, where the machine's idle may halt and a request can be made;
/// where it cannot, one line says so.
pub fn idle_probes(specs: &mut [CaseSpec]) {
    for s in specs.iter_mut().filter(|s| idle_sensitive(s)) {
        s.opts.idle_probe = true;
    }
    if !idle_requests(specs) {
        for s in specs.iter_mut() {
            s.opts.idle_probe = false;
        }
    }
}

/// `advise`: each case whose figure may hold wake-ups from idle also planned at
/// polling idle (a twin with `--idle poll`, its series as many and as long), so
/// that both rankings have their ranges; no probes then. False where there is
/// no twin to make (nothing halts, no rights, or no such case).
pub fn idle_twins(specs: &mut Vec<CaseSpec>) -> bool {
    for s in specs.iter_mut() {
        s.opts.idle_probe = false;
    }
    let twins: Vec<CaseSpec> = specs
        .iter()
        .filter(|s| idle_sensitive(s))
        .map(|s| {
            let mut t = s.clone();
            t.opts.idle = ipcperf_core::idle::Idle::Poll;
            t
        })
        .collect();
    if twins.is_empty() || !idle_requests(&twins) {
        return false;
    }
    specs.extend(twins);
    true
}

/// Two pinned CPUs, one pair, a sleeping wait, at the machine's own idle.
fn idle_sensitive(s: &CaseSpec) -> bool {
    let p = s.placement;
    s.opts.idle.is_as_is()
        && p.writer_cpu.is_some()
        && p.reader_cpu.is_some()
        && p.writer_cpu != p.reader_cpu
        && s.pairs.is_empty()
        && s.clients == 0
        && s.subscribers == 0
        && s.opts.rate_per_sec.is_none()
        && !s.mechanism.info().solo
        && !(s.mechanism == MechanismKind::Shm
            && s.opts.shm_wake == Some(ipcperf_core::mechanism::wake::Wake::Spin))
}

/// Whether a latency request both matters here and can be made, for these
/// cases (any that would use one); where it matters but cannot be made, one
/// line says so.
fn idle_requests(specs: &[CaseSpec]) -> bool {
    idle_requests_on(
        specs,
        &ipcperf_core::idle::IdleInfo::current(),
        ipcperf_sys::idle::can_request,
    )
}

/// [`idle_requests`] for a machine whose idle state is `info`, `may` saying
/// whether this process may make a request.
fn idle_requests_on(
    specs: &[CaseSpec],
    info: &ipcperf_core::idle::IdleInfo,
    may: impl FnOnce() -> Result<(), String>,
) -> bool {
    if !specs
        .iter()
        .any(|s| s.opts.idle_probe || !s.opts.idle.is_as_is())
    {
        return false;
    }
    if !info.request_matters() {
        return false;
    }
    match may() {
        Ok(()) => true,
        Err(e) => {
            ipcperf_results::console::note(&format!(
                "wake-ups from idle are not measured apart ({e}); this machine's idle may halt \
                 a CPU ({}), which cross-CPU figures include",
                info.summary()
            ));
            false
        }
    }
}

/// `--count N` or `--duration D` for every case; else the budget rule over the
/// plan's cases, said on stderr.
pub fn series_length(
    specs: &mut [CaseSpec],
    count: Option<u64>,
    duration: Option<std::time::Duration>,
) {
    let length = match (count, duration) {
        (Some(n), _) => Length::Count { blocks: n },
        (None, Some(d)) => Length::Duration {
            ns: d.as_nanos() as u64,
        },
        (None, None) => {
            let series: usize = specs.iter().map(|s| s.repeat as usize).sum();
            let ms = budget_series_ms(series);
            if let Some(first) = specs.first() {
                say_series(specs.len(), first.repeat, ms);
            }
            Length::Duration { ns: ms * 1_000_000 }
        }
    };
    for s in specs {
        s.length = length;
    }
}

/// How a command fans each case out (`--subscribers`, `--clients`): the
/// counts asked, the flag, the mechanisms it refuses (and why), the field set.
pub type Fan<'a> = (
    Option<&'a PairsList>,
    &'static str,
    fn(MechanismKind) -> Option<String>,
    fn(&mut CaseSpec, u32),
);

/// What a `run` or `latency` measures, each input checked: the cases `plan`
/// makes (with `--pairs` and `fan`; `named`: mechanisms were named), the load
/// beside them (`--background`, held until dropped) and what they share.
pub fn prepare(
    case: &CaseArgs,
    plan: impl FnOnce() -> Result<Vec<CaseSpec>, Fail>,
    named: bool,
    (list, flag, refuse, set): Fan,
    round_trips: bool,
) -> Result<super::Prepared, Fail> {
    case.check_remote_pins()?;
    let topo = Topology::current();
    let mut specs = crate::shared::args::fan_cases(
        case.with_pairs(plan()?, &topo)?,
        list,
        named,
        (flag, refuse),
        set,
    )?;
    refuse_up_front(&specs, named, round_trips, case.peer.is_some())?;
    let hogs = crate::background::apply(case.background, &mut specs, &topo)?;
    let env = case.run_env(&mut specs)?;
    Ok((specs, hogs, env))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case across CPUs is probed only where a request changes something
    /// and may be made: not on a machine without cpuidle (the 16-CPU guest),
    /// nor without rights; a same-CPU case or a spinning ring never.
    #[test]
    fn idle_probes_only_where_a_request_matters_and_may_be_made() {
        use ipcperf_core::idle::{IdleInfo, IdleStateInfo};
        use ipcperf_core::mode::Mode;
        let across = CaseSpec {
            opts: ipcperf_core::mechanism::MechOptions {
                idle_probe: true,
                ..Default::default()
            },
            ..CaseSpec::new(
                MechanismKind::Pipe,
                Mode::Processes,
                64,
                Placement::pinned(0, 1),
            )
        };
        assert!(idle_sensitive(&across));
        let mut same = across.clone();
        same.placement = Placement::pinned(0, 0);
        assert!(!idle_sensitive(&same));
        let mut spin = across.clone();
        spin.mechanism = MechanismKind::Shm;
        spin.opts.shm_wake = Some(ipcperf_core::mechanism::wake::Wake::Spin);
        assert!(!idle_sensitive(&spin));
        let halts = IdleInfo {
            driver: Some("haltpoll".into()),
            states: vec![IdleStateInfo {
                name: "haltpoll idle".into(),
                latency_us: 1,
                residency_us: 1,
                disabled: false,
            }],
            ..Default::default()
        };
        let specs = [across];
        assert!(idle_requests_on(&specs, &halts, || Ok(())));
        assert!(!idle_requests_on(&specs, &halts, || Err("no".into())));
        assert!(!idle_requests_on(&specs, &IdleInfo::default(), || Ok(())));
    }

    /// One rule cuts every plan's series: one case gets the longest, the default
    /// suite (48 cases × 5) the budget shared, a huge plan the shortest.
    #[test]
    fn the_series_budget_is_one_rule_for_every_plan() {
        assert_eq!(budget_series_ms(5), 600);
        assert_eq!(budget_series_ms(48 * 5), 41);
        assert_eq!(budget_series_ms(18 * 5), 111);
        assert_eq!(budget_series_ms(10_000), 40);
        assert_eq!(budget_series_ms(0), 600);
    }
    use crate::testdata::fixture_topology;

    /// On every recorded machine, `--placements all` runs one pair of exactly the
    /// classes the machine has, each named; a class it lacks is refused (exit 2)
    /// with its reason; a CPU outside the process's cpuset is refused.
    #[test]
    fn placements_all_on_every_fixture() {
        for name in [
            "vm-2cpu",
            "intel-2s-smt",
            "epyc-ccx",
            "offline-cpuset",
            "qemu-intel16",
            "qemu-numa16",
            "qemu-amd16",
            "qemu-big64",
        ] {
            let t = fixture_topology(name);
            let got: Vec<(Option<&str>, usize, usize)> =
                placements(&[PinArg::All], false, &t, None)
                    .unwrap()
                    .iter()
                    .map(|p| {
                        (
                            p.class.map(|c| c.name()),
                            p.writer_cpu.unwrap(),
                            p.reader_cpu.unwrap(),
                        )
                    })
                    .collect();
            let want: Vec<(Option<&str>, usize, usize)> = t
                .classes()
                .into_iter()
                .map(|(c, (w, r))| (Some(c.name()), w, r))
                .collect();
            assert_eq!(got, want, "{name}");
            for c in PlacementClass::ALL {
                let r = placements(&[PinArg::Class(c)], false, &t, None);
                match t.representative(c) {
                    Some(_) => assert!(r.is_ok(), "{name} {}", c.name()),
                    None => {
                        let f = r.unwrap_err();
                        assert_eq!(f.code, 2);
                        assert!(f.message.contains(c.name()), "{}", f.message);
                    }
                }
            }
        }
        let t = fixture_topology("offline-cpuset");
        let f = placements(&[PinArg::Cpus(0, 2)], false, &t, None).unwrap_err();
        assert_eq!(f.code, 2);
        assert!(
            f.message.contains("CPU 2 is not one this process may use"),
            "{}",
            f.message
        );
        let ok = placements(&[PinArg::Cpus(1, 5)], false, &t, None).unwrap();
        assert_eq!(ok[0].label(), "smt-sibling");
    }
}
