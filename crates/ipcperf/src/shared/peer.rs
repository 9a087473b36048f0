//! `--peer HOST[:PORT]` and `--token-file`: the other machine of a run, for the
//! commands that measure with one and for `serve`.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;

use ipcperf_core::mode::remote::{Remote, DEFAULT_PORT};

use crate::fail::Fail;

/// The longest first line a token file may have.
const MAX_TOKEN_LINE: u64 = 4096;

/// A token from its file: the first line, without surrounding white space; an
/// empty or unreadable file is bad input, and so is a first line longer than
/// [`MAX_TOKEN_LINE`] (only that much is read: `/dev/zero` named by mistake
/// must not be read until memory runs out).
pub fn read_token(path: &Path) -> Result<Vec<u8>, Fail> {
    use std::io::BufRead;
    let bad = |why: String| Fail::usage(format!("--token-file {}: {why}", path.display()));
    // A FIFO (`--token-file <(pass show ipcperf)`) is waited for a bounded time.
    let (f, first) = ipcperf_sys::fd::open_stream(path, std::time::Duration::from_secs(20))
        .map_err(|e| bad(e.to_string()))?
        .ok_or_else(|| bad("a FIFO no writer opened within 20 s".into()))?;
    let f = std::io::Read::chain(std::io::Cursor::new(first), f);
    let mut line = Vec::new();
    std::io::BufReader::new(std::io::Read::take(f, MAX_TOKEN_LINE + 1))
        .read_until(b'\n', &mut line)
        .map_err(|e| bad(e.to_string()))?;
    if line.len() as u64 > MAX_TOKEN_LINE {
        return Err(bad(format!(
            "its first line is longer than {MAX_TOKEN_LINE} bytes: not a token"
        )));
    }
    let text = String::from_utf8(line).map_err(|_| bad("the token is not UTF-8 text".into()))?;
    let t = text.trim();
    if t.is_empty() {
        return Err(bad("the file holds no token".into()));
    }
    // A secret others can read is no secret (the book's recipe and both
    // sbatch scripts chmod it 600; the binary took a 0644 one without a word).
    if let Some(mode) = readable_by_others(path) {
        ipcperf_results::console::warn(&format!(
            "--token-file {}: others may read it (mode {mode:o}), and with it run measurements \
             on the server: chmod 600 it",
            path.display()
        ));
    }
    Ok(t.as_bytes().to_vec())
}

/// A regular file's permission bits when its group or others may read it
/// (a FIFO, `<(pass show ipcperf)`, is not looked at).
fn readable_by_others(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    (m.is_file() && m.mode() & 0o044 != 0).then_some(m.mode() & 0o777)
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
    // A port out of range was "not a host": said as the port.
    let port = peer
        .rsplit_once(':')
        .map(|(_, p)| p)
        .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if let Some(p) = port.filter(|p| !matches!(p.parse::<u16>(), Ok(1..))) {
        if peer.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(Fail::usage(format!(
                "--peer {peer}: port {p} is not one from 1 to 65535"
            )));
        }
    }
    let addr = match with_port.to_socket_addrs() {
        Ok(mut a) => a.next(),
        Err(e) if !peer.is_empty() => {
            return Err(Fail::usage(format!(
                "--peer {peer}: not a host this machine can find ({e})"
            )))
        }
        Err(_) => None,
    }
    .ok_or_else(|| Fail::usage(format!("--peer {peer}: not a host (HOST or HOST:PORT)")))?;
    Ok(Remote::new(addr, token_file.map(read_token).transpose()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port out of range is said as the port (it was "not a host"), a name
    /// that does not resolve with the resolver's word; an IPv6 address alone
    /// (its last group all digits) is a host, not a port.
    #[test]
    fn a_bad_peer_port_is_said_as_the_port() {
        for (peer, says) in [
            ("[::1]:99999", "port 99999 is not one from 1 to 65535"),
            ("127.0.0.1:0", "port 0 is not one from 1 to 65535"),
            ("host:70000", "port 70000 is not one from 1 to 65535"),
            ("nosuch.invalid", "not a host this machine can find"),
            ("", "not a host (HOST or HOST:PORT)"),
        ] {
            let e = remote(peer, None).expect_err(peer).message;
            assert!(e.contains(says), "{peer}: {e}");
        }
        for ok in [
            "127.0.0.1",
            "127.0.0.1:7787",
            "::1",
            "[::1]:7787",
            "2001:db8::1234",
        ] {
            assert!(remote(ok, None).is_ok(), "{ok}");
        }
    }

    /// A token is the first line, trimmed; an empty file, a line past the
    /// bound (a device named by mistake: read no further) or one that is not
    /// text are bad input, said with the file.
    #[test]
    fn a_token_file_is_read_to_its_first_line_and_no_further() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, body: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, body).unwrap();
            p
        };
        let ok = file("ok", b"  s3cret \nsecond line\n");
        assert_eq!(read_token(&ok).unwrap(), b"s3cret");
        let long = file("long", &vec![b'x'; 5000]);
        for (p, says) in [
            (file("empty", b"\n\n"), "holds no token"),
            (long, "longer than 4096 bytes"),
            (file("latin1", b"caf\xe9\n"), "not UTF-8"),
            (
                Path::new("/dev/zero").to_path_buf(),
                "longer than 4096 bytes",
            ),
        ] {
            let e = read_token(&p).unwrap_err();
            assert_eq!(e.code, 2, "{}", e.message);
            assert!(
                e.message.contains(says) && e.message.contains(&p.display().to_string()),
                "{}",
                e.message
            );
        }
    }

    /// A token file group or others may read is said (its mode); one only its
    /// owner reads, and a FIFO, are not.
    #[test]
    fn a_token_file_others_may_read_is_found() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t");
        std::fs::write(&p, b"s3cret\n").unwrap();
        for (mode, said) in [(0o644, Some(0o644)), (0o640, Some(0o640)), (0o600, None)] {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(readable_by_others(&p), said, "{mode:o}");
        }
        let fifo = dir.path().join("f");
        ipcperf_sys::fd::mkfifo(&fifo).unwrap();
        assert_eq!(readable_by_others(&fifo), None);
    }
}
