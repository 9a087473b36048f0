//! The control connection's token: a client proves it knows the server's
//! token without sending it (HMAC-SHA256 of the server's fresh nonce), and the
//! nonce and proof cross the wire as hex.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::error::{Error, Result};

pub(super) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub(super) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

fn mac(token: &[u8], nonce: &[u8]) -> Hmac<Sha256> {
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(token).expect("HMAC takes any key");
    m.update(nonce);
    m.update(b"ipcperf client");
    m
}

/// The proof of knowing `token` for this `nonce`.
pub fn proof(token: &[u8], nonce: &[u8]) -> String {
    hex(&mac(token, nonce).finalize().into_bytes())
}

/// Whether `proof` (hex) is the proof for `token` and `nonce` (compared in
/// constant time).
pub fn proves(token: &[u8], nonce: &[u8], proof: &str) -> bool {
    unhex(proof).is_some_and(|p| mac(token, nonce).verify_slice(&p).is_ok())
}

/// A nonce for a banner.
pub fn nonce() -> Result<Vec<u8>> {
    let mut n = vec![0u8; 32];
    getrandom::fill(&mut n).map_err(|e| Error::Peer(format!("no randomness: {e}")))?;
    Ok(n)
}
