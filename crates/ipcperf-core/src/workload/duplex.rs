//! One side's end(s) for round trips: a two-way end, or a pair of one-way ends
//! (the forward object and the one back). The echo job and the timing session
//! both hold their ends this way.

use super::roundtrip::Pair;
use crate::error::Result;

/// One side's end(s) for round trips: one two-way end, or a pair of one-way ends.
#[derive(Debug)]
pub enum Duplex<E> {
    One(E),
    Two(Pair<E, E>),
}

impl<E> Duplex<E> {
    /// Send on `tx`, receive on `rx` (`rx` None: one two-way end).
    pub fn new(tx: E, rx: Option<E>) -> Duplex<E> {
        match rx {
            None => Duplex::One(tx),
            Some(rx) => Duplex::Two(Pair { tx, rx }),
        }
    }

    /// The peer's view: it receives on the forward end and answers on `back`.
    pub fn for_peer(fwd: E, back: Option<E>) -> Duplex<E> {
        match back {
            Some(b) => Duplex::new(b, Some(fwd)),
            None => Duplex::One(fwd),
        }
    }

    /// `--busy-poll`: every end of this side spins instead of sleeping (false:
    /// the mechanism has no such wait).
    pub fn set_busy_poll(&mut self) -> Result<bool>
    where
        E: crate::mechanism::ByteStream,
    {
        match self {
            Duplex::One(e) => e.set_busy_poll(),
            Duplex::Two(p) => Ok(p.tx.set_busy_poll()? && p.rx.set_busy_poll()?),
        }
    }

    /// `--wait`: every end of this side waits as `w` asks.
    pub fn wait_as(
        &mut self,
        w: crate::mechanism::wait::Wait,
        kind: crate::mechanism::MechanismKind,
    ) -> Result<()>
    where
        E: crate::mechanism::ByteStream,
    {
        use crate::mechanism::endpoint::wait_as;
        match self {
            Duplex::One(e) => wait_as(e, w, kind),
            Duplex::Two(p) => {
                wait_as(&mut p.tx, w, kind)?;
                wait_as(&mut p.rx, w, kind)
            }
        }
    }

    /// The receiving end.
    pub fn rx(&mut self) -> &mut E {
        match self {
            Duplex::One(e) => e,
            Duplex::Two(p) => &mut p.rx,
        }
    }
}

/// Run `$body` with `$e` bound to the concrete `&mut impl MessageEnd` inside `$d`
/// (a `&mut Duplex<E>`): one branch per series, none per round trip.
#[macro_export]
macro_rules! with_duplex {
    ($d:expr, $e:ident => $body:expr) => {
        match $d {
            $crate::workload::duplex::Duplex::One($e) => $body,
            $crate::workload::duplex::Duplex::Two($e) => $body,
        }
    };
}
