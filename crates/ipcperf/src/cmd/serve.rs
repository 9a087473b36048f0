//! `ipcperf serve`: wait for `ipcperf run|latency --peer` from another machine and
//! be its peer, one run at a time (the protocol: `ipcperf_core::mode::remote`).

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;

use clap::Args;
use ipcperf_core::kind::PeerCommand;
use ipcperf_core::mode::remote::DEFAULT_PORT;
use ipcperf_core::mode::serve::{serve, ServeConfig};

use crate::fail::Fail;
use crate::shared::peer::read_token;
use crate::units;

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  ipcperf serve --token-file ~/.ipcperf-token      # on machine B (port 7787)
  ipcperf serve --token-file ~/.ipcperf-token --once
  ipcperf serve                                    # no token: loopback only
  ipcperf run tcp --peer B --token-file ~/.ipcperf-token --sizes 16..1M   # then, on A
  ipcperf latency tcp --peer B:7787 --token-file ~/.ipcperf-token --peer-wait 2m")]
pub struct ServeArgs {
    /// Where to listen for clients (ADDR:PORT). Default: every address (port
    /// 7787) with --token-file or --no-token, else loopback only (127.0.0.1:7787).
    #[arg(long, value_parser = parse_listen)]
    pub listen: Option<SocketAddr>,

    /// A file holding the token clients must prove they know (the token never
    /// crosses the wire: a challenge is answered with an HMAC of it). Without one
    /// `serve` listens on loopback only, unless --no-token.
    #[arg(long, value_name = "FILE", conflicts_with = "no_token")]
    pub token_file: Option<PathBuf>,

    /// Serve without a token on any address: anyone who can reach the port may
    /// run measurements here (a closed network, a test bed).
    #[arg(long)]
    pub no_token: bool,

    /// The longest one run may last.
    #[arg(long, value_parser = units::parse_duration, default_value = "60s")]
    pub max_duration: std::time::Duration,

    /// Serve one client's run (all its series), then exit: when the client says
    /// the run is over, or 10 s after its last series with nothing more.
    #[arg(long)]
    pub once: bool,
}

/// `--listen`: an address and port, said in words when it is not one ("invalid
/// socket address syntax" was all a port of 99999 got).
fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    s.trim().parse().map_err(|_| {
        format!(
            "'{s}' is not ADDR:PORT (an IP address and a port from 0 to 65535: \
             0.0.0.0:7787, [::]:7787, 127.0.0.1:7787)"
        )
    })
}

/// Where `serve` listens: as asked, or by default every address with a token
/// (or --no-token) and loopback without; without a token, only a loopback
/// address unless --no-token.
pub fn listen_addr(a: &ServeArgs) -> Result<SocketAddr, Fail> {
    let open = a.token_file.is_some() || a.no_token;
    let addr = a.listen.unwrap_or_else(|| {
        let ip: std::net::IpAddr = if open {
            std::net::Ipv4Addr::UNSPECIFIED.into()
        } else {
            std::net::Ipv4Addr::LOCALHOST.into()
        };
        SocketAddr::new(ip, DEFAULT_PORT)
    });
    if !open && !addr.ip().is_loopback() {
        return Err(Fail::usage(format!(
            "--listen {addr} without --token-file: anyone who reaches it could run \
             measurements here; give --token-file FILE, or --no-token to allow it"
        )));
    }
    Ok(addr)
}

pub fn run(a: ServeArgs) -> Result<i32, Fail> {
    let token = a.token_file.as_deref().map(read_token).transpose()?;
    let listen = listen_addr(&a)?;
    let listener = TcpListener::bind(listen).map_err(|e| {
        use std::io::ErrorKind::{AddrInUse, AddrNotAvailable, PermissionDenied};
        let said = format!("--listen {listen}: cannot listen there: {e}");
        match e.kind() {
            // The address asked for cannot be had here: bad input, nothing ran.
            AddrInUse => Fail::usage(format!("{said} (choose another port)")),
            AddrNotAvailable => Fail::usage(format!("{said} (not an address of this machine)")),
            PermissionDenied => Fail::usage(format!("{said} (a port below 1024 needs root)")),
            _ => Fail::failure(format!("cannot listen on {listen}: {e}")),
        }
    })?;
    let at = listener.local_addr().unwrap_or(listen);
    ipcperf_results::errln!(
        "ipcperf serve: listening on {at}, one run at a time, each at most {} s",
        a.max_duration.as_secs()
    );
    if token.is_none() && !at.ip().is_loopback() {
        crate::console::warn(&format!(
            "--no-token: anyone who can reach {at} may run measurements here"
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
