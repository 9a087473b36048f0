use super::*;

/// Seeded draws in [0, 1) in steps of 1/10,000 (xorshift): the same fleet for
/// the same seed.
fn uniform(mut seed: u64) -> impl FnMut() -> f64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 10_000) as f64 / 10_000.0
    }
}

/// A fleet of `n` hosts with one CPU and kernel, each with its own series of
/// the same figure (a seeded spread of ±3%); `scale` multiplies one host's.
fn fleet(n: usize, odd: Option<(usize, f64)>) -> Vec<Entry> {
    let mut next = uniform(0x1234_5678_9abc_def1);
    (0..n)
        .map(|i| {
            let k = odd.filter(|(h, _)| *h == i).map_or(1.0, |(_, s)| s);
            Entry {
                host: format!("node{i:02}"),
                group: ("Xeon 8480".into(), "6.8.0".into()),
                key: "stream pipe 64 KiB".into(),
                values: (0..5).map(|_| 1e9 * k * (0.97 + 0.06 * next())).collect(),
                lower_better: false,
            }
        })
        .collect()
}

#[test]
fn an_a_a_fleet_names_no_outlier() {
    let rows = judge(&fleet(20, None), 0.05);
    assert_eq!(rows.len(), 20);
    assert!(rows.iter().all(|r| !r.outlier), "{rows:#?}");
    assert!(rows.iter().all(|r| r.p.is_some()));
}

#[test]
fn a_host_at_half_speed_is_named_first() {
    let rows = judge(&fleet(13, Some((7, 0.5))), 0.05);
    assert!(rows[0].outlier, "{rows:#?}");
    assert_eq!(rows[0].host, "node07");
    assert!((rows[0].ratio - 0.5).abs() < 0.05, "{}", rows[0].ratio);
    assert_eq!(rows.iter().filter(|r| r.outlier).count(), 1, "{rows:#?}");
    let line = outlier_line(&rows[0]);
    assert!(
        line.starts_with("node07: stream pipe 64 KiB 0.5")
            && line.contains("its 12 peers (Xeon 8480, 6.8.0), p "),
        "{line}"
    );
}

#[test]
fn too_few_peers_are_not_judged_and_one_series_a_host_is() {
    // Two peers (or fewer) cannot say how far hosts spread.
    let rows = judge(&fleet(3, Some((1, 0.5))), 0.05);
    assert!(
        rows.iter().all(|r| !r.outlier && r.why.contains("too few")),
        "{rows:#?}"
    );
    assert!(rows[0].why.starts_with("2 peers of"), "{}", rows[0].why);
    // Said once above the tables, "too few peers" on each row (the whole
    // sentence was on every row); CSV keeps each row's reason whole.
    let text = output::hosts_text(&rows, crate::export::Format::Table).unwrap();
    assert_eq!(
        text.matches("too few to know their spread").count(),
        1,
        "{text}"
    );
    assert_eq!(
        text.matches("too few peers").count(),
        rows.len() + 1,
        "{text}"
    );
    let csv = output::hosts_text(&rows, crate::export::Format::Csv).unwrap();
    assert_eq!(csv.matches("too few to know").count(), rows.len(), "{csv}");
    // A host alone in its group has no median of peers: "-", not its own
    // figure again and "1.00×".
    let alone = judge(&fleet(1, None), 0.05);
    let text = output::hosts_text(&alone, crate::export::Format::Table).unwrap();
    let row = text.lines().find(|l| l.contains("node00")).unwrap();
    let cells: Vec<&str> = row.split(['|', '┆', '│']).map(str::trim).collect();
    assert_eq!(cells[4..7], ["-", "-", "0"], "{row}");
    // A host is judged against its peers' hosts, not its own series: one series
    // a host still places it among five peers.
    let mut f = fleet(6, Some((1, 0.5)));
    for e in &mut f {
        e.values.truncate(1);
    }
    let rows = judge(&f, 0.05);
    let named: Vec<&str> = rows
        .iter()
        .filter(|r| r.outlier)
        .map(|r| r.host.as_str())
        .collect();
    assert_eq!(named, ["node01"], "{rows:#?}");
}

#[test]
fn kernels_sort_by_version() {
    let mut k = vec![
        "6.10.2",
        "6.8.0-45-generic",
        "6.1.0-31-amd64",
        "6.1.0-28-amd64",
        "5.15.0",
    ];
    k.sort_by(|a, b| version_cmp(a, b));
    assert_eq!(
        k,
        [
            "5.15.0",
            "6.1.0-28-amd64",
            "6.1.0-31-amd64",
            "6.8.0-45-generic",
            "6.10.2"
        ]
    );
}

#[test]
fn a_kernel_step_is_called_and_a_steady_kernel_is_not() {
    // Kernels a, b at the same speed; c 20% slower; 8 hosts each.
    let mut all = Vec::new();
    for (kernel, k) in [("6.1.0", 1.0), ("6.5.0", 1.0), ("6.8.0", 0.8)] {
        for mut e in fleet(8, None) {
            e.group.1 = kernel.into();
            for v in &mut e.values {
                *v *= k;
            }
            all.push(e);
        }
    }
    // The same seeds for every kernel would make a and b identical: vary b.
    for e in all.iter_mut().filter(|e| e.group.1 == "6.5.0") {
        for v in &mut e.values {
            *v *= 1.001;
        }
    }
    let rows = by_kernel(&all, 0.05);
    let kernels: Vec<&str> = rows.iter().map(|r| r.kernel.as_str()).collect();
    assert_eq!(kernels, ["6.1.0", "6.5.0", "6.8.0"]);
    assert!(!rows[0].change.step && rows[0].change.ratio.is_none());
    assert!(!rows[1].change.step, "{:?}", rows[1]);
    assert!(rows[2].change.step, "{:?}", rows[2]);
    assert!((rows[2].change.ratio.unwrap() - 0.8).abs() < 0.02);
}

#[test]
fn a_large_group_is_judged_as_a_small_one_is() {
    // 400 hosts (2000 pooled figures: the normal form), one at 0.9×.
    let rows = judge(&fleet(400, Some((123, 0.9))), 0.05);
    let outliers: Vec<&HostRow> = rows.iter().filter(|r| r.outlier).collect();
    assert_eq!(outliers.len(), 1, "{:?}", &rows[..3]);
    assert_eq!(outliers[0].host, "node123");
    assert!(outliers[0].p.unwrap() < 0.001);
    let big = judge(&fleet(400, None), 0.05);
    assert!(big.iter().all(|r| !r.outlier));
}

#[test]
fn a_trend_marks_the_step_and_nothing_else() {
    // One host's nightly runs of 10 series each (±3%): from night 7 on, half
    // speed. (Five series a night cannot carry a call over 11 neighbours:
    // their smallest p, 0.008, is above Benjamini–Hochberg's cutoff.)
    let mut next = uniform(0x5eed);
    let figs: Vec<CaseFigures> = (0..12)
        .map(|i| {
            let k = if i >= 7 { 0.5 } else { 1.0 };
            CaseFigures {
                run_id: i,
                started_ms: 1_000 * i as u64,
                host: "node01".into(),
                cpu_model: "x".into(),
                kernel: "k".into(),
                label: None,
                key: "stream pipe 64 KiB".into(),
                workload: "stream".into(),
                values: (0..10).map(|_| 1e9 * k * (0.97 + 0.06 * next())).collect(),
            }
        })
        .collect();
    let pts = trend(&figs, 0.05);
    assert_eq!(pts.len(), 12);
    let steps: Vec<i64> = pts
        .iter()
        .filter(|p| p.change.step)
        .map(|p| p.run_id)
        .collect();
    assert_eq!(steps, [7], "{pts:#?}");
    // Its row's ratio is to the run before; the step's size is its segments'
    // (a step's row showed the segments' ratio under "the run before").
    let step = &pts[7];
    let before = pts[6].median;
    assert!((step.change.ratio.unwrap() - step.median / before).abs() < 1e-12);
    let s = step.change.step_ratio.unwrap();
    assert!((s - 0.5).abs() < 0.03, "{s}");
    assert!(pts.iter().filter(|p| p.change.step_ratio.is_some()).count() >= 1);
    assert!(pts[6].change.step_ratio.is_none());

    // Cases come by their sizes, as a run lists them (sorted as strings, 1 MiB
    // came before 64 B).
    let mut two = figs[..2].to_vec();
    two[0].key = "stream pipe 1 MiB".into();
    two[1].key = "stream pipe 64 B".into();
    let keys: Vec<String> = trend(&two, 0.05).into_iter().map(|p| p.case).collect();
    assert_eq!(keys, ["stream pipe 64 B", "stream pipe 1 MiB"]);

    // Too few runs to find a step says so ("0 steps" read as steady). Nine
    // runs, the step clear after the fifth, find none; ten do.
    let clear = |n: usize| -> Vec<CaseFigures> {
        let mut f = figs[..n].to_vec();
        for (i, c) in f.iter_mut().enumerate() {
            let k = if i >= n / 2 { 0.5 } else { 1.0 };
            c.values = (0..10)
                .map(|j| 1e9 * k * (1.0 + 0.001 * j as f64))
                .collect();
        }
        f
    };
    assert_eq!(crate::fleet::fewest_runs_for_a_step(), 10);
    assert!(trend(&clear(9), 0.05).iter().all(|p| !p.change.step));
    assert!(trend(&clear(10), 0.05).iter().any(|p| p.change.step));
    let short = trend(&figs[..5], 0.05);
    let doc = crate::fleet::trend_output::trend_document(&short).unwrap();
    assert!(
        doc.table
            .lines()
            .next()
            .unwrap()
            .ends_with("0 steps (a step needs 10 runs of a case, 3 after it: at most 5 here)"),
        "{}",
        doc.table
    );
    let doc = crate::fleet::trend_output::trend_document(&pts).unwrap();
    assert!(
        doc.table.lines().next().unwrap().ends_with("; 1 step"),
        "{}",
        doc.table
    );
}

/// A fleet of `n` hosts of one CPU model and kernel, each host's figure its
/// own factor (normal, sd `host_sd`) times 5 series 1% wide; host 0 at `first`.
fn simulated(n: usize, host_sd: f64, first: f64, seed: u64) -> Vec<Entry> {
    let mut normal = super::changes::tests::normals(seed);
    (0..n)
        .flat_map(|h| {
            let factor = if h == 0 {
                first
            } else {
                (host_sd * normal()).exp()
            };
            let values: Vec<f64> = (0..5)
                .map(|_| 1000.0 * factor * (0.005 * normal()).exp())
                .collect();
            ["stream pipe 64 KiB", "round-trip unix 512 B"]
                .into_iter()
                .map(move |key| Entry {
                    host: format!("node{h:02}"),
                    group: ("Xeon".into(), "6.1".into()),
                    key: key.into(),
                    values: values.clone(),
                    lower_better: false,
                })
        })
        .collect()
}

/// Healthy hosts spread by 6% from one to the next; one host at −30%. Judged
/// against the spread of its peers' hosts, the slow one is named in nearly
/// every simulated fleet and no healthy host in most of them: a fleet of
/// realistic spread can fail its A/A only by chance, and rarely.
#[test]
fn a_host_is_judged_against_the_spread_of_its_peers_hosts() {
    let fleets: usize = 200;
    let (mut slow_named, mut others_named) = (0, 0);
    for f in 0..fleets {
        let rows = judge(&simulated(30, 0.06, 0.7, 1000 + f as u64), 0.05);
        assert_eq!(rows.len(), 60);
        slow_named += usize::from(rows.iter().any(|r| r.outlier && r.host == "node00"));
        others_named += usize::from(rows.iter().any(|r| r.outlier && r.host != "node00"));
    }
    assert!(
        slow_named * 100 >= 95 * fleets,
        "slow host named in {slow_named} of {fleets}"
    );
    assert!(
        others_named * 100 <= 10 * fleets,
        "a healthy host named in {others_named} of {fleets}"
    );
    // A/A with the same spread: some fleets may name a host, most do not.
    let mut aa = 0;
    for f in 0..fleets {
        let rows = judge(&simulated(30, 0.06, 1.0, 5000 + f as u64), 0.05);
        aa += usize::from(rows.iter().any(|r| r.outlier));
    }
    assert!(
        aa * 100 <= 10 * fleets,
        "A/A fleets naming a host: {aa} of {fleets}"
    );
    println!("fleet, 30 hosts, sd 6%: −30% host named in {slow_named}/{fleets}; a healthy host in {others_named}/{fleets}; A/A fleets naming any: {aa}/{fleets}");
}

/// Five hosts a case, twelve cases, host-to-host spread about 3%: alone, five
/// hosts' MAD is worth under two degrees of freedom and cannot name a host 25%
/// slow; with the spread moderated over the twelve cases it can, and names no
/// other.
#[test]
fn a_small_fleet_borrows_its_spread_from_the_other_cases() {
    let mut next = uniform(0x5151_aaaa_0707_1234);
    let mut entries = Vec::new();
    for case in 0..12 {
        for host in 0..5 {
            // Host offsets of about ±3% (uniform ±5%), series ±1%.
            let off = 1.0 + 0.1 * (next() - 0.5);
            let k = if case == 4 && host == 2 { 0.75 } else { 1.0 };
            entries.push(Entry {
                host: format!("node{host}"),
                group: ("Xeon 8480".into(), "6.8.0".into()),
                key: format!("stream pipe {} KiB", 1 << case),
                values: (0..5)
                    .map(|_| 1e9 * k * off * (0.99 + 0.02 * next()))
                    .collect(),
                lower_better: false,
            });
        }
    }
    let rows = judge(&entries, 0.05);
    let named: Vec<(&str, &str)> = rows
        .iter()
        .filter(|r| r.outlier)
        .map(|r| (r.host.as_str(), r.case.as_str()))
        .collect();
    assert_eq!(named, [("node2", "stream pipe 16 KiB")], "{rows:#?}");
    // One case alone (no other cases to borrow from): not named.
    let alone: Vec<Entry> = entries
        .iter()
        .filter(|e| e.key == "stream pipe 16 KiB")
        .cloned()
        .collect();
    assert!(judge(&alone, 0.05).iter().all(|r| !r.outlier));
}

/// A stream figure keeps three figures: a 64 B stream at 0.13 MB/s read
/// "0 MB/s" in trend's and fleet's tables, a measured figure shown as none.
#[test]
fn a_small_stream_figure_is_not_shown_as_zero() {
    assert_eq!(fmt_figure(0.13e6, false, "stream pipe"), "0.13 MB/s");
    assert_eq!(fmt_figure(13.8e6, false, "stream pipe"), "13.8 MB/s");
    assert_eq!(fmt_figure(1008.4e6, false, "stream pipe"), "1008 MB/s");
    assert_eq!(fmt_figure(46_270.0, true, "round-trip pipe"), "46.27 µs");
    // A busy-wait case on a 2-vCPU VM: 8 ms, not "8004.46 µs".
    assert_eq!(fmt_figure(8_004_460.0, true, "round-trip fifo"), "8.00 ms");
    assert_eq!(fmt_figure(812.0, true, "round-trip shm"), "812 ns");
}
