//! `ipcperf serve`: the other machine's side of `--peer` (the protocol is
//! [`super::remote`]'s). One run at a time: a client that proves its token while
//! one runs is told "busy" and closed (it tries again for its `--peer-wait`);
//! handshakes run side by side, bounded, and never hold the run slot. A run's peer is an `ipcperf __peer` process, exactly
//! as on one machine; the server only carries its messages to and from the
//! client, and never runs anything but ipcperf's own measurements.

use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
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

/// The most handshakes in progress at once; one more is told "busy" and closed.
/// Each lasts at most a few [`HANDSHAKE`] bounds, so a flood of silent or slow
/// connections passes, and never holds the run slot.
pub const MAX_HANDSHAKES: usize = 64;

/// What the connections of a server share.
struct Shared {
    /// A run holds the one run slot (taken only after the handshake).
    busy: AtomicBool,
    /// Handshakes in progress.
    greeting: AtomicUsize,
    /// `--once`: a run has held the slot; its client said the run is over.
    served: AtomicBool,
    over: AtomicBool,
    /// When a connection last came or a run last ended (for `--once`'s quiet).
    last: Mutex<Instant>,
}

/// Serve clients from `listener`; with `once`, until the first client's run is
/// over (it says so, or 10 s pass without its next connection). `log` hears one
/// line per connection. Handshakes run side by side, each in its own thread and
/// bounded in time, at most [`MAX_HANDSHAKES`] at once; the run slot is taken
/// only by a client that got through its handshake (token proven).
pub fn serve(
    listener: TcpListener,
    cfg: &ServeConfig,
    log: impl Fn(String) + Send + Sync + 'static,
) -> Result<()> {
    let log = Arc::new(log);
    let sh = Arc::new(Shared {
        busy: AtomicBool::new(false),
        greeting: AtomicUsize::new(0),
        served: AtomicBool::new(false),
        over: AtomicBool::new(false),
        last: Mutex::new(Instant::now()),
    });
    let since_last = |sh: &Shared| sh.last.lock().map(|t| t.elapsed()).unwrap_or_default();
    loop {
        if cfg.once {
            // `--once`: the run's next connection comes at once (its next series)
            // or its "over"; 10 s of quiet after its last series ends the wait too.
            if sh.over.load(Ordering::Acquire) {
                return Ok(());
            }
            if sh.served.load(Ordering::Acquire)
                && !sh.busy.load(Ordering::Acquire)
                && since_last(&sh) > Duration::from_secs(10)
            {
                log("no more of the run came within 10 s".into());
                return Ok(());
            }
            let mut fds = [PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
            if !matches!(poll(&mut fds, PollTimeout::from(200u8)), Ok(n) if n > 0) {
                continue;
            }
        }
        let s = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) => {
                log(format!("accept failed: {e}"));
                continue;
            }
        };
        if let Ok(mut t) = sh.last.lock() {
            *t = Instant::now();
        }
        let who = s
            .peer_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| "?".into());
        if sh.greeting.fetch_add(1, Ordering::AcqRel) >= MAX_HANDSHAKES {
            sh.greeting.fetch_sub(1, Ordering::AcqRel);
            // Told at once, never left hanging.
            std::thread::spawn(move || {
                let mut s = s;
                let _ = s.set_write_timeout(Some(HANDSHAKE));
                let _ = write_frame(&mut s, &ServerSays::Busy);
            });
            log(format!(
                "{who}: {MAX_HANDSHAKES} handshakes already in progress; told busy"
            ));
            continue;
        }
        let (cfg2, log2, sh2) = (cfg.clone(), log.clone(), sh.clone());
        std::thread::spawn(move || {
            let mut s = s;
            let t0 = Instant::now();
            let greeted = greet(&mut s, &cfg2);
            sh2.greeting.fetch_sub(1, Ordering::AcqRel);
            let hello = match greeted {
                Ok(h) => h,
                Err(e) => return log2(format!("{who}: {e}")),
            };
            if hello.over {
                let _ = welcome(&mut s);
                sh2.over.store(true, Ordering::Release);
                return log2(format!("{who}: the run is over"));
            }
            if sh2.busy.swap(true, Ordering::AcqRel) {
                let _ = write_frame(&mut s, &ServerSays::Busy);
                return log2(format!("{who}: busy with another run; told so"));
            }
            sh2.served.store(true, Ordering::Release);
            let r = welcome(&mut s).and_then(|()| session(&mut s, &cfg2, &hello));
            if let Ok(mut t) = sh2.last.lock() {
                *t = Instant::now();
            }
            // Free before the client sees the connection close, so its next run
            // (the next round of series) is not told "busy".
            sh2.busy.store(false, Ordering::Release);
            drop(s);
            match r {
                Ok(()) => log2(format!(
                    "{who}: series ended after {:.1} s",
                    t0.elapsed().as_secs_f64()
                )),
                Err(e) => log2(format!("{who}: {e}")),
            }
        });
    }
}

/// Refuse a client: say why, then the caller closes.
fn refuse(s: &mut TcpStream, why: String) -> Error {
    let _ = write_frame(s, &ServerSays::Refused { why: why.clone() });
    Error::Refused(why)
}

/// The handshake: banner, the client's hello, its version and token checked.
/// Bounded by [`HANDSHAKE`] for each frame; holds nothing but its thread.
fn greet(s: &mut TcpStream, cfg: &ServeConfig) -> Result<ClientHello> {
    let _ = s.set_nodelay(true);
    // A client whose machine vanishes frees the server in seconds.
    crate::mechanism::tcp::far_peer_bounds(s)?;
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
    Ok(hello)
}

/// The server's machine, for a client that got through.
fn welcome(s: &mut TcpStream) -> Result<()> {
    write_frame(
        s,
        &ServerSays::Welcome {
            machine: Box::new(Machine::collect()),
        },
    )
}

/// One client's series, from the welcome to its end.
fn session(s: &mut TcpStream, cfg: &ServeConfig, hello: &ClientHello) -> Result<()> {
    let client = s
        .peer_addr()
        .map_err(|e| Error::Peer(format!("no client address: {e}")))?
        .ip();
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
                return peer.finish();
            }
            peer.send(m)?;
        }
    }
}
