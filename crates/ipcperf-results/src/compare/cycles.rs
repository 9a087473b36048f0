//! A sync case's figure: its cycles a second, set/clear's where the primitive
//! hands a token to the other side, else request/release's (and those beside
//! set/clear in a row of their own).

use ipcperf_core::record::{CaseRecord, SyncRecord, SyncSeries};

use super::Figure;

/// A sync case's cycles a second in each series of the kind `pick` chooses.
pub(super) fn cycles(c: &CaseRecord, pick: fn(&SyncRecord) -> &Vec<SyncSeries>) -> Figure {
    Figure {
        values: c
            .sync
            .as_ref()
            .map(|s| {
                pick(s)
                    .iter()
                    .filter(|x| x.elapsed_ns > 0)
                    .map(|x| x.cycles as f64 / (x.elapsed_ns as f64 / 1e9))
                    .collect()
            })
            .unwrap_or_default(),
        lower_better: false,
    }
}

/// Whether a sync case's figure is its set/clear cycles (else request/release).
pub(super) fn set_clear(c: &CaseRecord) -> bool {
    c.sync
        .as_ref()
        .is_some_and(|s| !s.set_clear_series.is_empty())
}

#[cfg(test)]
mod tests {
    use ipcperf_core::record::SyncSeries;

    fn series(per_sec: &[f64]) -> Vec<SyncSeries> {
        per_sec
            .iter()
            .map(|r| SyncSeries {
                cycles: (*r) as u64,
                elapsed_ns: 1_000_000_000,
                tare_ns: 0,
                atomic_ns: None,
                cost: None,
                partner_cost: None,
            })
            .collect()
    }

    /// A sync case is compared on set/clear where it has it, request/release
    /// in a row of its own beside it; a primitive with request/release only
    /// says so in its unit ("cycles/s" said neither). Its name drops the
    /// "0 B … no-touch" a sync case does not have.
    #[test]
    fn a_sync_case_says_which_cycle_and_compares_both() {
        let mut a = crate::testdata::run();
        a.cases = vec![
            crate::testdata::sync_case("futex", 1, 2, 3, 4),
            crate::testdata::sync_case("mutex", 1, 2, 3, 4),
        ];
        for c in &mut a.cases {
            // As sync runs record it: no block, no payload looked at.
            c.payload = ipcperf_core::payload::Payload::NoTouch;
            let s = c.sync.as_mut().unwrap();
            s.request_release_series = series(&[5e7, 5.1e7, 4.9e7, 5e7, 5.05e7]);
            if c.mechanism == "futex" {
                s.set_clear_series = series(&[1e4, 1.01e4, 0.99e4, 1e4, 1.02e4]);
            }
        }
        let rows = super::super::compare(&a, &a.clone(), 0.05);
        let units: Vec<(&str, &str)> = rows
            .iter()
            .filter(|r| !super::super::is_counter(r))
            .map(|r| (r.case.as_str(), r.unit))
            .collect();
        assert_eq!(units.len(), 3, "{units:?}");
        assert_eq!(units[0].1, "set/clear cycles/s");
        assert!(units[1].0.ends_with(" · request/release"), "{units:?}");
        assert_eq!(units[1].1, "request/release cycles/s");
        assert_eq!(units[2].1, "request/release cycles/s");
        assert!(rows[0].case.contains(" 0 B ") && rows[0].case.contains("no-touch"));
        let v = crate::compare::view::view("1", &a, "2", &a.clone(), 0.05);
        let names: Vec<&str> = v.tables[0].rows.iter().map(|r| r[0].as_str()).collect();
        assert!(
            names
                .iter()
                .all(|n| !n.contains("0 B") && !n.contains("touch")),
            "{names:?}"
        );
    }
}
