//! `--wait` on the command line: its list, and the cases a mechanism makes
//! with it.

use ipcperf_core::mechanism::{MechOptions, MechanismKind};

use crate::shared::args::MechArgs;

impl MechArgs {
    /// The cases one mechanism makes: its option variants, each for every
    /// `--wait` (`uring` runs the mechanism's io_uring twin, as itself).
    pub fn cases(&self, m: MechanismKind, opts: &MechOptions) -> Vec<(MechanismKind, MechOptions)> {
        use ipcperf_core::mechanism::wait::{Wait, Waits};
        let waits = self
            .wait
            .as_ref()
            .map(|w| w.0.clone())
            .unwrap_or_else(|| vec![Waits::default()]);
        let mut out = Vec::new();
        for w in waits {
            let kind = m.waiting(w.client);
            // An io_uring mechanism's waits are its own: its record is the same
            // whether it was named or reached by --wait uring.
            let wait = if w.client == Wait::Uring && kind.waits() == [Wait::Uring] {
                Waits::default()
            } else {
                w
            };
            for v in self.variants(kind, opts) {
                out.push((kind, MechOptions { wait, ..v }));
            }
        }
        out
    }
}
