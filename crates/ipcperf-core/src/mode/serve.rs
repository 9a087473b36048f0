//! `ipcperf serve`: the other machine's side of `--peer` (the protocol is
//! [`super::remote`]'s). One run at a time: a client that comes while one runs is
//! told "busy" and closed. A run's peer is an `ipcperf __peer` process, exactly
//! as on one machine; the server only carries its messages to and from the
//! client, and never runs anything but ipcperf's own measurements.

use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use super::process::ProcessPeer;
use super::protocol::{FromPeer, PeerHandle, ToPeer};
use super::remote::{
    banner, check_setup, nonce, proves, read_frame, write_frame, ClientHello, ServerSays,
    HANDSHAKE, MAX_FRAME, PROTOCOL,
};
use crate::error::{Error, Result};
use crate::kind::PeerCommand;
use crate::machine::Machine;

/// How a server serves.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The token a client must prove it knows; None: anyone who reaches the port.
    pub token: Option<Vec<u8>>,
    /// The longest a run may last, from the welcome.
    pub max_duration: Duration,
    /// Serve one run, then return.
    pub once: bool,
    /// How to start a run's peer.
    pub peer: PeerCommand,
}

/// Serve clients from `listener`; with `once`, until the first client's run is
/// over (it says so, or 10 s pass without its next connection). `log` hears one
/// line per connection.
pub fn serve(
    listener: TcpListener,
    cfg: &ServeConfig,
    log: impl Fn(String) + Send + Sync + 'static,
) -> Result<()> {
    let log = Arc::new(log);
    let busy = Arc::new(AtomicBool::new(false));
    let mut served = false;
    loop {
        // `--once`: after the first connection, the run's next one comes at once
        // (its next series) or its "over"; 10 s of quiet ends the wait too.
        if cfg.once && served {
            let mut fds = [PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
            if matches!(poll(&mut fds, PollTimeout::from(10_000u16)), Ok(0)) {
                log("no more of the run came within 10 s".into());
                return Ok(());
            }
        }
        let conn = listener.accept().map(|(s, _)| s);
        let s = match conn {
            Ok(s) => s,
            Err(e) => {
                log(format!("accept failed: {e}"));
                continue;
            }
        };
        let who = s
            .peer_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| "?".into());
        if busy.swap(true, Ordering::AcqRel) {
            // Told at once, never left hanging.
            std::thread::spawn(move || {
                let mut s = s;
                let _ = s.set_write_timeout(Some(HANDSHAKE));
                let _ = write_frame(&mut s, &ServerSays::Busy);
            });
            log(format!("{who}: busy with another run; told so"));
            continue;
        }
        let (cfg2, log2, busy2) = (cfg.clone(), log.clone(), busy.clone());
        let worker = std::thread::spawn(move || {
            let t0 = Instant::now();
            let mut s = s;
            let r = session(&mut s, &cfg2);
            // Free before the client sees the connection close, so its next run
            // (the next round of series) is not told "busy".
            busy2.store(false, Ordering::Release);
            drop(s);
            match r {
                Ok(true) => {
                    log2(format!("{who}: the run is over"));
                    true
                }
                Ok(false) => {
                    log2(format!(
                        "{who}: series ended after {:.1} s",
                        t0.elapsed().as_secs_f64()
                    ));
                    false
                }
                Err(e) => {
                    log2(format!("{who}: {e}"));
                    false
                }
            }
        });
        if cfg.once {
            served = true;
            if worker.join().unwrap_or(false) {
                return Ok(());
            }
        }
    }
}

/// Refuse a client: say why, then the caller closes.
fn refuse(s: &mut TcpStream, why: String) -> Error {
    let _ = write_frame(s, &ServerSays::Refused { why: why.clone() });
    Error::Refused(why)
}

/// One client connection, from the banner to the end of its series; true when
/// the client said its run is over.
fn session(s: &mut TcpStream, cfg: &ServeConfig) -> Result<bool> {
    let client = s
        .peer_addr()
        .map_err(|e| Error::Peer(format!("no client address: {e}")))?
        .ip();
    let _ = s.set_nodelay(true);
    let _ = s.set_write_timeout(Some(HANDSHAKE));
    let n = nonce()?;
    write_frame(s, &banner(&n, cfg.token.is_some()))?;
    let hello: ClientHello = read_frame(s, 64 << 10, HANDSHAKE)?;
    if hello.protocol != PROTOCOL {
        return Err(refuse(
            s,
            format!(
                "this server is ipcperf {} (control protocol {PROTOCOL}); the client is ipcperf \
                 {} (protocol {}): use the same version on both",
                env!("CARGO_PKG_VERSION"),
                hello.ipcperf,
                hello.protocol
            ),
        ));
    }
    if let Some(t) = &cfg.token {
        if !hello.proof.as_deref().is_some_and(|p| proves(t, &n, p)) {
            return Err(refuse(s, "wrong or missing token".into()));
        }
    }
    write_frame(
        s,
        &ServerSays::Welcome {
            machine: Box::new(Machine::collect()),
        },
    )?;
    if hello.over {
        return Ok(true);
    }
    // The path's round trip: empty frames echoed (at most a handful).
    for _ in 0..hello.pings.min(super::remote::PINGS) {
        read_frame::<()>(s, 16, HANDSHAKE)?;
        write_frame(s, &())?;
    }
    let ToPeer::Hello(setup) = read_frame(s, MAX_FRAME, HANDSHAKE)? else {
        return Err(Error::Peer(
            "the first message after the welcome was not a setup".into(),
        ));
    };
    if let Err(e) = check_setup(&setup, client) {
        let _ = write_frame(
            s,
            &FromPeer::Failed {
                message: e.to_string(),
            },
        );
        return Err(e);
    }
    let mut peer = match ProcessPeer::spawn(&cfg.peer, setup) {
        Ok(p) => p,
        Err(e) => {
            let _ = write_frame(
                s,
                &FromPeer::Failed {
                    message: e.to_string(),
                },
            );
            return Err(e);
        }
    };
    let start = Instant::now();
    loop {
        if start.elapsed() > cfg.max_duration {
            let why = format!(
                "the run passed this server's --max-duration ({} s)",
                cfg.max_duration.as_secs()
            );
            let _ = write_frame(
                s,
                &FromPeer::Failed {
                    message: why.clone(),
                },
            );
            return Err(Error::Timeout(why));
        }
        let (from_client, from_peer) = {
            let mut fds = [
                PollFd::new(s.as_fd(), PollFlags::POLLIN),
                PollFd::new(peer.control(), PollFlags::POLLIN),
            ];
            match poll(&mut fds, PollTimeout::from(100u8)) {
                Ok(0) => (false, false),
                Ok(_) => {
                    let ready = |f: &PollFd| {
                        f.revents().is_some_and(|r| {
                            r.intersects(
                                PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR,
                            )
                        })
                    };
                    (ready(&fds[0]), ready(&fds[1]))
                }
                Err(nix::errno::Errno::EINTR) => (false, false),
                Err(e) => return Err(Error::Peer(format!("poll: {e}"))),
            }
        };
        if from_peer {
            match peer.recv(0) {
                Ok(m) => write_frame(s, &m)?,
                Err(e) => {
                    let _ = write_frame(
                        s,
                        &FromPeer::Failed {
                            message: e.to_string(),
                        },
                    );
                    return Err(e);
                }
            }
        }
        if from_client {
            // A client that went away (or sends garbage) ends the run: dropping
            // the peer kills its process.
            let m: ToPeer = read_frame(s, MAX_FRAME, HANDSHAKE)?;
            if matches!(m, ToPeer::Quit) {
                return peer.finish().map(|()| false);
            }
            peer.send(m)?;
        }
    }
}
