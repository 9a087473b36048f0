//! The peer process's entry: `ipcperf __peer` reads its handoff from the control
//! socket on standard input and does the job its role names, the stream reader's
//! or the echo's (`mode::protocol`) or a sync primitive's (`sync::peer`). Above
//! both, so that the transport (`mode`) knows no job.

use crate::error::Result;
use crate::mode::protocol::{PeerChannel, PeerRole, PeerSetup};

/// The job for a role.
fn dispatch(ch: &mut dyn PeerChannel, setup: PeerSetup) -> Result<()> {
    match setup.role {
        PeerRole::SyncPartner | PeerRole::SyncHolder | PeerRole::SyncHolderNoUndo => {
            crate::sync::peer::serve(ch, setup)
        }
        PeerRole::StreamReader | PeerRole::Echo | PeerRole::EchoMany | PeerRole::Replay => {
            crate::workload::jobs::serve(ch, setup)
        }
    }
}

/// The whole life of a peer process (see [`crate::mode::process::peer_main`]).
pub fn main() -> Result<()> {
    crate::mode::process::peer_main(dispatch)
}
