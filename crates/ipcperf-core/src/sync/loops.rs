//! The timed loops. Generic over the end, so each is monomorphized per primitive;
//! the loop holds the operations under test and nothing else (the clock is read
//! once before and once after, except in [`ping_sampled`], which times each cycle
//! on purpose and whose clock cost is measured and subtracted).

use super::ends::{Channel, Lock};
use crate::error::Result;
use ipcperf_sys::clock::now_ns;

/// `n` request/release cycles; nanoseconds taken.
#[inline(never)]
pub fn request_release<L: Lock>(l: &mut L, n: u64) -> Result<u64> {
    let t0 = now_ns();
    for _ in 0..n {
        l.acquire()?;
        l.release()?;
    }
    Ok(now_ns() - t0)
}

/// Side A of `n` set/clear cycles: give a token, wait for it to come back. A
/// channel that takes and gives in one call (lmbench's `lat_sem`) gives the first
/// token alone, then takes each answer and gives the next token together, and
/// takes the last answer alone: n tokens each way, as in the plain form.
#[inline(never)]
pub fn ping<C: Channel>(c: &mut C, n: u64) -> Result<u64> {
    let t0 = now_ns();
    if c.one_call() && n > 0 {
        c.signal()?;
        for _ in 1..n {
            c.wait_then_signal()?;
        }
        c.wait()?;
    } else {
        for _ in 0..n {
            c.signal()?;
            c.wait()?;
        }
    }
    Ok(now_ns() - t0)
}

/// The same, each cycle timed into `samples` (cleared first); `origin` is set to
/// the first cycle's start, so cycle i starts at origin + the samples before it.
#[inline(never)]
pub fn ping_sampled<C: Channel>(
    c: &mut C,
    n: u64,
    samples: &mut Vec<u64>,
    origin: &mut u64,
) -> Result<u64> {
    samples.clear();
    let t0 = now_ns();
    *origin = t0;
    let mut prev = t0;
    if c.one_call() && n > 0 {
        c.signal()?;
        for _ in 1..n {
            c.wait_then_signal()?;
            let t = now_ns();
            samples.push(t - prev);
            prev = t;
        }
        c.wait()?;
    } else {
        for _ in 0..n {
            c.signal()?;
            c.wait()?;
            let t = now_ns();
            samples.push(t - prev);
            prev = t;
        }
        return Ok(prev - t0);
    }
    let t = now_ns();
    samples.push(t - prev);
    Ok(t - t0)
}

/// Side B of `n` cycles: wait for a token, give it back (in one call where the
/// channel has one).
#[inline(never)]
pub fn pong<C: Channel>(c: &mut C, n: u64) -> Result<()> {
    for _ in 0..n {
        c.wait_then_signal()?;
    }
    Ok(())
}
