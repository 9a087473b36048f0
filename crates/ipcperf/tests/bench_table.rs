//! The peers' table of the bench scripts (`bench/lib.sh`'s `peer_table`): a row
//! whose rounds lie on both sides of 1 says "inconclusive" with their range,
//! never "level" or a winner; a target band is "met" only when every round's
//! ratio lies inside it.

use std::process::Command;

/// `peer_table` over rows `(median, low, high, target)` of ipcperf/peer ratios
/// (times: lower is better), each row's text.
fn table(rows: &[(f64, f64, f64, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("rows.tsv");
    let text: String = rows
        .iter()
        .enumerate()
        .map(|(i, (m, lo, hi, target))| {
            format!("peer{i}\tcase\tp99\t10\t10\t{m}\t{lo}\t{hi}\t5/5\tlower\t{target}\n")
        })
        .collect();
    std::fs::write(&f, text).unwrap();
    let lib = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/lib.sh");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{lib}'; PEER_ROWS='{}' peer_table markdown",
            f.display()
        ))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .skip(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn a_row_whose_rounds_straddle_1_is_inconclusive_and_a_target_needs_every_round() {
    let rows = table(&[
        // The book's C paced-UDP p99: median 1.640 over rounds on both sides of 1.
        (1.640, 0.9, 2.1, "floor"),
        // sockperf's p99: 0.745 (0.234-1.206), and a band the median alone met.
        (0.745, 0.234, 1.206, "0.738-1.154"),
        // Every round ahead, inside the band.
        (0.95, 0.93, 0.97, "0.90-1.05"),
        // Every round behind, past the band.
        (1.3, 1.2, 1.4, "0.95-1.05"),
    ]);
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert!(
        rows[0].contains("inconclusive (0.900-2.100)"),
        "{}",
        rows[0]
    );
    assert!(
        !rows[0].contains("level") && !rows[0].contains("peer,"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].contains("inconclusive (0.234-1.206)"),
        "{}",
        rows[1]
    );
    assert!(rows[1].contains("0.738-1.154: inconclusive"), "{}", rows[1]);
    assert!(rows[2].contains("ipcperf by 5%"), "{}", rows[2]);
    assert!(rows[2].contains("0.90-1.05: met"), "{}", rows[2]);
    assert!(rows[3].contains("peer by 30%"), "{}", rows[3]);
    assert!(rows[3].contains("0.95-1.05: missed"), "{}", rows[3]);
}
