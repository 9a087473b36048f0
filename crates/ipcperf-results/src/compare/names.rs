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

/// A short case name split before its block size: (`pipe · processes`,
/// `64 B same-cpu 0→0`); a replay's pattern in brackets stays as it is.
pub(super) fn split_name(name: &str) -> Option<(String, String)> {
    let words: Vec<&str> = name.split(' ').collect();
    let at = (1..words.len().saturating_sub(1)).find(|&j| {
        words[j].parse::<u64>().is_ok() && ["B", "KiB", "MiB", "GiB"].contains(&words[j + 1])
    })?;
    let group = &words[..at];
    let sep = if group.iter().any(|w| w.contains('[') || w.contains(']')) {
        " "
    } else {
        " · "
    };
    Some((group.join(sep), words[at..].join(" ")))
}

/// A case as the table names it: without its workload (the unit of A and B
/// says it) and without the default payload (`touch`), so that a row fits an
/// 80-column terminal in two lines; JSON and CSV keep the whole name.
pub(super) fn short(case: &str) -> String {
    // A sync case has no block and no payload: "0 B … no-touch" said nothing.
    if let Some(rest) = case.strip_prefix("sync ") {
        return rest.replacen(" 0 B", "", 1).replacen(" no-touch", "", 1);
    }
    let rest = ["stream ", "round-trip ", "replay "]
        .iter()
        .find_map(|w| case.strip_prefix(w))
        .unwrap_or(case);
    rest.replacen(" touch", "", 1)
}

/// A change as "could call" and "limit" say it: ±N% up to ten times, then the
/// ratio (×68), and past a thousand times "> ×1000". A run-to-run spread
/// of 240% on one degree of freedom printed "±5251164931805%".
pub(super) fn fmt_change(d: f64) -> String {
    if !d.is_finite() {
        "none".into()
    } else if d < 9.0 {
        format!("±{:.0}%", d * 100.0)
    } else if d < 999.0 {
        format!("×{:.0}", 1.0 + d)
    } else {
        "> ×1000".into()
    }
}

#[cfg(test)]
mod tests {
    use super::fmt_change;

    #[test]
    fn a_change_past_ten_times_reads_as_a_ratio() {
        assert_eq!(fmt_change(0.05), "±5%");
        assert_eq!(fmt_change(6.72), "±672%");
        assert_eq!(fmt_change(67.0), "×68");
        assert_eq!(fmt_change(52_511_649_318.0), "> ×1000");
        assert_eq!(fmt_change(f64::INFINITY), "none");
    }
}
