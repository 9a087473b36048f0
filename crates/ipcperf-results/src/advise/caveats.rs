//! What the answer warns of, from the run's own figures: placement, spinning
//! waits, the budget, ties at the top, a virtual machine.

use super::*;

pub(super) fn caveats(
    run: &RunRecord,
    ranked: &[Row],
    excluded: &[(String, String)],
    ask: &Ask,
) -> Vec<String> {
    let mut v = Vec::new();
    // Placement: the same mechanism on one CPU against two, where both ran.
    if let Some(r) = ranked
        .iter()
        .find(|r| r.by_placement.contains_key("same-cpu") && r.by_placement.len() > 1)
    {
        let same = r.by_placement["same-cpu"];
        if let Some((p, other)) = r.by_placement.iter().find(|(p, _)| *p != "same-cpu") {
            let ratio = if higher_is_better(ask) {
                same / other
            } else {
                other / same
            };
            if ratio > 1.2 {
                v.push(format!(
                    "placement matters here: {} is {ratio:.1}× better on one CPU than {p} \
                     ({} against {}); pin both sides to one CPU if the work allows",
                    r.name,
                    fmt_figure(same, ask),
                    fmt_figure(*other, ask)
                ));
            }
        }
    }
    // A spinning wait whose sides shared a CPU: the scheduler's figure (one
    // line for all of them: every descriptor mechanism has a busy wait).
    v.extend(crate::export::view::spin_notes(
        run.cases.iter().filter(|c| shaped(c, ask.pattern)),
    ));
    // A spinning wait in the ranking, or left out by the budget. A sleeping
    // wait's busy CPUs are work (a stream keeps both sides at it), not waiting.
    let spinners: Vec<&Row> = ranked
        .iter()
        .filter(|r| r.spins && r.cpu_load > 1.5)
        .collect();
    match spinners.as_slice() {
        [] => {}
        [r] => v.push(format!(
            "{} keeps {:.2} CPUs busy: a spinning wait burns a CPU whether or not there is work",
            r.name, r.cpu_load
        )),
        rs => v.push(format!(
            "{} keep CPUs busy ({}): a spinning wait burns a CPU whether or not there is work",
            rs.iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            rs.iter()
                .map(|r| format!("{:.2}", r.cpu_load))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
    for (_, why) in excluded.iter().filter(|(_, w)| w.contains("budget")) {
        v.push(format!("left out: {why}"));
    }
    // Ties at the top.
    if let (Some(a), Some(b)) = (ranked.first(), ranked.get(1)) {
        if tie(a, b) {
            v.push(format!(
                "{} and {} are within each other's noise: measure longer (--repeat) to tell them apart",
                a.name, b.name
            ));
        }
    }
    if run.machine.virtualization.is_some() {
        v.push(
            "this is a virtual machine: its CPUs are the host's threads, and figures move with \
             the host's load"
                .into(),
        );
    }
    v
}
