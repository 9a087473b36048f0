//! `--peer HOST[:PORT]` and `--token-file`: the other machine of a run, for the
//! commands that measure with one and for `serve`.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;

use ipcperf_core::mode::remote::{Remote, DEFAULT_PORT};

use crate::fail::Fail;

/// A token from its file: the first line, without surrounding white space; an
/// empty or unreadable file is bad input.
pub fn read_token(path: &Path) -> Result<Vec<u8>, Fail> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Fail::usage(format!("--token-file {}: {e}", path.display())))?;
    let t = text.lines().next().unwrap_or("").trim();
    if t.is_empty() {
        return Err(Fail::usage(format!(
            "--token-file {}: the file holds no token",
            path.display()
        )));
    }
    Ok(t.as_bytes().to_vec())
}

/// `--peer HOST[:PORT]` (port 7787 unless named) and its token.
pub fn remote(peer: &str, token_file: Option<&Path>) -> Result<Remote, Fail> {
    let with_port = if peer.parse::<SocketAddr>().is_ok()
        || peer
            .rsplit_once(':')
            .is_some_and(|(h, p)| !h.contains(':') && p.parse::<u16>().is_ok())
    {
        peer.to_string()
    } else if peer.contains(':') {
        format!("[{peer}]:{DEFAULT_PORT}")
    } else {
        format!("{peer}:{DEFAULT_PORT}")
    };
    let addr = with_port
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| Fail::usage(format!("--peer {peer}: not a host (HOST or HOST:PORT)")))?;
    Ok(Remote::new(addr, token_file.map(read_token).transpose()?))
}
