//! `ipcperf serve`: wait for `ipcperf run|latency --peer` from another machine and
//! be its peer, one run at a time (the protocol: `ipcperf_core::mode::remote`).

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::{Path, PathBuf};

use clap::Args;
use ipcperf_core::kind::PeerCommand;
use ipcperf_core::mode::remote::{Remote, DEFAULT_PORT};
use ipcperf_core::mode::serve::{serve, ServeConfig};

use crate::fail::Fail;
use crate::units;

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  ipcperf serve                                    # on machine B (port 7787)
  ipcperf serve --token-file ~/.ipcperf-token --once
  ipcperf run tcp --peer B --sizes 16..1M          # then, on machine A
  ipcperf latency tcp --peer B:7787 --token-file ~/.ipcperf-token")]
pub struct ServeArgs {
    /// Where to listen for clients (ADDR:PORT).
    #[arg(long, default_value = "0.0.0.0:7787")]
    pub listen: SocketAddr,

    /// A file holding the token clients must prove they know (the token never
    /// crosses the wire: a challenge is answered with an HMAC of it). Without one,
    /// anyone who can reach the port may run measurements here.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,

    /// The longest one run may last.
    #[arg(long, value_parser = units::parse_duration, default_value = "60s")]
    pub max_duration: std::time::Duration,

    /// Serve one client's run (all its series), then exit: when the client says
    /// the run is over, or 10 s after its last series with nothing more.
    #[arg(long)]
    pub once: bool,
}

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

pub fn run(a: ServeArgs) -> Result<i32, Fail> {
    let token = a.token_file.as_deref().map(read_token).transpose()?;
    let listener = TcpListener::bind(a.listen)
        .map_err(|e| Fail::failure(format!("cannot listen on {}: {e}", a.listen)))?;
    let at = listener.local_addr().unwrap_or(a.listen);
    eprintln!(
        "ipcperf serve: listening on {at}, one run at a time, each at most {} s",
        a.max_duration.as_secs()
    );
    if token.is_none() {
        crate::console::warn(&format!(
            "no --token-file: anyone who can reach {at} may run measurements here"
        ));
    }
    let cfg = ServeConfig {
        token,
        max_duration: a.max_duration,
        once: a.once,
        peer: PeerCommand::current_exe().map_err(|e| Fail::failure(e.to_string()))?,
    };
    // A closed stderr must not end the server: the log is best effort.
    serve(listener, &cfg, |line| {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "ipcperf serve: {line}");
    })
    .map_err(|e| Fail::failure(e.to_string()))?;
    Ok(0)
}
