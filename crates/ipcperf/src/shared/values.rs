//! The values of flags several commands share, each with its parser: block
//! sizes, CPU pins, counts of pairs or clients, namespace kinds, waits.

use crate::fail::Fail;
use crate::units;
use ipcperf_core::topology::parse_cpu_list;

/// A parsed `--sizes` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeList(pub Vec<usize>);

pub fn parse_size_list(s: &str) -> Result<SizeList, String> {
    units::parse_sizes(s).map(SizeList)
}

/// A placement from `--pin`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinArg {
    Cpus(usize, usize),
    Same,
    Cross,
    None,
    /// A placement class's representative pair (`smt-sibling`, `other-l3`, ...).
    Class(ipcperf_core::topology::PlacementClass),
    /// One pair of every class this machine has.
    All,
    /// The pair a measurement of this boot finds closest, farthest or median
    /// (`measured:closest`; see `ipcperf topology --measure`).
    Measured(crate::measured::Which),
}

pub fn parse_pin(s: &str) -> Result<PinArg, String> {
    match s {
        "same" => return Ok(PinArg::Same),
        "cross" => return Ok(PinArg::Cross),
        "none" | "unpinned" => return Ok(PinArg::None),
        "all" => return Ok(PinArg::All),
        _ => {}
    }
    if let Some(c) = ipcperf_core::topology::PlacementClass::from_name(s) {
        return Ok(PinArg::Class(c));
    }
    if let Some(w) = s.strip_prefix("measured:") {
        return crate::measured::Which::parse(w)
            .map(PinArg::Measured)
            .ok_or_else(|| {
                format!("'{s}': measured:closest, measured:farthest or measured:median")
            });
    }
    let (w, r) = s.split_once(',').ok_or_else(|| {
        format!(
            "'{s}': give two CPU numbers like 0,1, a placement class ({}), measured:closest \
             (farthest, median), all, same, cross or none",
            ipcperf_core::topology::PlacementClass::ALL
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    if r.contains(',') {
        return Err(format!(
            "'{s}': a pair is two CPUs, A,B (repeat --pin to measure more placements)"
        ));
    }
    let cpu = |x: &str| {
        x.trim()
            .parse::<usize>()
            .map_err(|_| format!("'{s}': '{x}' is not a CPU number (A,B: two, like 0,1)"))
    };
    Ok(PinArg::Cpus(cpu(w)?, cpu(r)?))
}

/// A parsed `--pairs` value: how many pairs, each a case of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairsList(pub Vec<usize>);

pub fn parse_pairs(s: &str) -> Result<PairsList, String> {
    let max = ipcperf_core::runner::pairs::MAX_PAIRS;
    let count = |x: &str| match x.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("'{x}': a count of pairs from 1 to {max}")),
    };
    let mut v = Vec::new();
    units::refuse_empty_item(s, "1,2,4")?;
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        match item.split_once("..") {
            Some((lo, hi)) => {
                let (lo, hi) = (count(lo)?, count(hi)?);
                if hi < lo {
                    return Err(format!("'{item}': the range ends below where it starts"));
                }
                v.extend(ipcperf_core::plan::pow2_range(lo, hi));
                v.push(hi);
            }
            None => v.push(count(item)?),
        }
    }
    if v.is_empty() {
        return Err(format!("'{s}' names no count of pairs"));
    }
    v.sort_unstable();
    v.dedup();
    Ok(PairsList(v))
}

/// A count flag (`--clients`, `--subscribers`): like `--pairs`, at most `max`.
pub fn parse_counts(s: &str, what: &str, max: usize) -> Result<PairsList, String> {
    let v = parse_pairs(s).map_err(|e| e.replace("count of pairs", &format!("count of {what}")))?;
    match v.0.iter().find(|&&n| n > max) {
        Some(n) => Err(format!("'{n}': a count of {what} from 1 to {max}")),
        None => Ok(v),
    }
}

/// `--across net,ipc`: namespace kinds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcrossList(pub Vec<ipcperf_core::crossing::Namespace>);

pub fn parse_across(s: &str) -> Result<AcrossList, String> {
    ipcperf_core::crossing::Namespace::parse_list(s).map(AcrossList)
}

/// CPUs to pair, from `--cpus`.
#[derive(Debug, Clone)]
pub struct CpuList(pub Vec<usize>);

pub fn parse_cpus(s: &str) -> Result<CpuList, String> {
    match parse_cpu_list(s) {
        Some(v) if v.len() >= 2 => Ok(CpuList(v)),
        Some(_) => Err(format!("'{s}': a matrix needs at least two CPUs")),
        None => Err(format!("'{s}' is not a CPU list (like 0-3,8)")),
    }
}

/// Whether the heatmap goes to an SVG (else a PNG); another name is bad input.
/// A `--dir` that ipcperf can use: a directory that a directory can be made
/// in (one is made and removed at once). A mistyped one looked nowhere, and a
/// read-only or pseudo file system (/proc) failed every case as it ran.
pub fn usable_dir(d: &std::path::Path) -> Result<(), Fail> {
    if !d.is_dir() {
        return Err(Fail::usage(format!(
            "--dir {}: no such directory",
            d.display()
        )));
    }
    let probe = d.join(format!(".ipcperf-probe-{}", std::process::id()));
    match std::fs::create_dir(&probe) {
        Ok(()) => {
            let _ = std::fs::remove_dir(&probe);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Fail::usage(format!(
            "--dir {}: cannot make a directory there: {e}",
            d.display()
        ))),
    }
}

pub fn heatmap_is_svg(path: &std::path::Path) -> Result<bool, Fail> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("svg") => Ok(true),
        Some("png") => Ok(false),
        _ => Err(Fail::usage(format!(
            "{}: name the heatmap file .svg or .png",
            path.display()
        ))),
    }
}

/// A heatmap into `path`, as SVG or PNG by its name (`matrix -o` and
/// `topology --measure -o`).
pub fn write_heatmap(
    m: &crate::chart::heatmap::Matrix,
    path: &std::path::Path,
) -> Result<(), Fail> {
    if heatmap_is_svg(path)? {
        let svg = crate::chart::heatmap::svg(m).map_err(Fail::failure)?;
        std::fs::write(path, svg)
            .map_err(|e| Fail::failure(format!("cannot write {}: {e}", path.display())))
    } else {
        crate::chart::heatmap::png(m, path).map_err(Fail::failure)
    }
}

/// `--wait`'s list, in the order given.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitList(pub Vec<ipcperf_core::mechanism::wait::Waits>);

pub fn parse_waits(s: &str) -> Result<WaitList, String> {
    let mut v = Vec::new();
    for item in s.split(',') {
        let w = ipcperf_core::mechanism::wait::Waits::parse(item)?;
        if !v.contains(&w) {
            v.push(w);
        }
    }
    Ok(WaitList(v))
}
