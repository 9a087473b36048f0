//! `--explain`'s parts in a comparison: a row per part, judged where both runs
//! traced several series.

use ipcperf_core::record::CaseRecord;

use super::{judge, shown, spread, Figure, Row, Verdict, PART};

/// Two explained cases (`--explain`): a row for each part either has, its
/// median in each and their ratio; judged as a case is where each side traced
/// several series (`--repeat`: their medians are the values), else shown, not
/// judged (one traced series gives no spread).
pub(super) fn explained_parts(a: &CaseRecord, b: &CaseRecord, min_change: f64) -> Vec<Row> {
    let (Some(xa), Some(xb)) = (a.explain.as_deref(), b.explain.as_deref()) else {
        return Vec::new();
    };
    let values = |x: &ipcperf_core::explain::ExplainRecord, name: &str| -> Vec<f64> {
        x.parts
            .iter()
            .find(|p| p.name == name)
            .map(|p| {
                if p.series_median_ns.len() >= 2 {
                    p.series_median_ns.iter().map(|&v| v as f64).collect()
                } else {
                    vec![p.median_ns as f64]
                }
            })
            .unwrap_or_default()
    };
    // A round trip's parts, or a stream's (each side's per block).
    ipcperf_core::explain::split::PARTS
        .iter()
        .chain(ipcperf_core::explain::stream::STREAM_PARTS.iter())
        .filter_map(|(name, label)| {
            let (va, vb) = (values(xa, name), values(xb, name));
            let median = |v: &[f64]| spread(v).map(|s| s.median);
            let (ma, mb) = (median(&va), median(&vb));
            if ma.unwrap_or(0.0) <= 0.0 && mb.unwrap_or(0.0) <= 0.0 {
                return None;
            }
            let case = format!("{} · {label}", shown(a, b));
            let all_positive = va.iter().chain(&vb).all(|&v| v > 0.0);
            if va.len() >= 2 && vb.len() >= 2 && all_positive {
                let fig = |values| Figure {
                    values,
                    lower_better: true,
                };
                return Some(judge(case, PART, &fig(va), &fig(vb), min_change));
            }
            Some(shown_row(
                case,
                PART,
                (ma, mb),
                "one traced series a side (--explain; --repeat traces more): the change is \
                 shown, not judged",
            ))
        })
        .collect()
}

/// A row shown, not judged: the medians `m` of A and B, their ratio, and why.
pub(super) fn shown_row(
    case: String,
    unit: &'static str,
    m: (Option<f64>, Option<f64>),
    why: &str,
) -> Row {
    Row {
        case,
        unit,
        a: Some(m.0.unwrap_or(0.0)),
        b: Some(m.1.unwrap_or(0.0)),
        ratio: match m {
            (Some(x), Some(y)) if x > 0.0 => Some(y / x),
            _ => None,
        },
        interval: None,
        p: None,
        verdict: Verdict::NoiseUnknown,
        why: why.into(),
        lower_better: true,
        detectable: None,
        se_df: None,
        floor: None,
        runs: None,
        limit: None,
    }
}
