//! How a case is named in a comparison, and why a case of one run has no match
//! in the other.

use ipcperf_core::record::CaseRecord;

use super::key;

/// Why a case of run `this` has no match in `other`: only there, or (the same case
/// on other CPUs) the CPUs differ, which is a different placement, not compared.
pub(super) fn elsewhere(
    c: &CaseRecord,
    mine: &[CaseRecord],
    other: &[CaseRecord],
    this: &str,
    that: &str,
) -> String {
    let sans = |x: &CaseRecord| key(x).replacen(&placement_key(&x.placement), "", 1);
    // The other run's placements of this case that this run did not measure.
    let cpus: Vec<String> = other
        .iter()
        .filter(|o| sans(o) == sans(c) && !mine.iter().any(|m| key(m) == key(o)))
        .map(|o| o.placement.shown())
        .collect();
    if cpus.is_empty() {
        format!("only in {this}")
    } else {
        format!(
            "the CPUs differ: {that} ran it on {}; a different placement is not compared",
            cpus.join(", ")
        )
    }
}

pub(super) fn shown(a: &CaseRecord, b: &CaseRecord) -> String {
    let mut k = key(a).replacen(&placement_key(&a.placement), &b.placement.shown(), 1);
    if a.placement.label != b.placement.label {
        k.push_str(&format!(" (A: {})", a.placement.label));
    }
    k
}

/// A case's placement as compare matches it: the exact CPUs when pinned (so runs
/// saved before placement classes, labelled `cross-cpu`, still match their
/// `shared-l3` successors on the same CPUs), else its label (`unpinned`).
pub(super) fn placement_key(p: &ipcperf_core::record::PlacementRecord) -> String {
    // Two machines' CPU numbers are not one machine's: never the same case.
    if p.label == "other-host" {
        return format!(
            "other-host {}→{}",
            p.writer_cpu.map_or("-".into(), |c| c.to_string()),
            p.reader_cpu.map_or("-".into(), |c| c.to_string())
        );
    }
    match (p.writer_cpu, p.reader_cpu) {
        (Some(w), Some(r)) => format!("cpus {w}→{r}"),
        _ => p.label.clone(),
    }
}
