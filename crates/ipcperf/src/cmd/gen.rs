//! `ipcperf gen`: Stover's generator. Random printable ASCII to standard output in
//! `--chunk`-sized writes, so it composes with any program through the shell.

use std::os::fd::AsFd;

use clap::Args;
use ipcperf_core::gen::Printable;
use ipcperf_sys::error::Errno;

use crate::fail::Fail;
use crate::shared::gen_sink::random_seed;
use crate::units;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  ipcperf gen --bytes 512M | gzip | wc -c\n  ipcperf gen --bytes 1G --chunk 64k --seed 7 | ipcperf sink --bytes 1G --verify-seed 7"
)]
pub struct GenArgs {
    /// How many bytes to write: 512M and 512MiB are 512 × 2^20, 512MB is 512 × 10^6
    /// (as every size ipcperf takes).
    #[arg(long, short, default_value = "512M", value_parser = units::parse_bytes)]
    pub bytes: usize,

    /// Bytes per write(2) (the last write may be shorter).
    #[arg(long, short, default_value = "1k", value_parser = units::parse_block)]
    pub chunk: usize,

    /// The same seed writes the same bytes (check them with `sink --verify-seed`).
    /// Default: a fresh random seed.
    #[arg(long, value_parser = units::parse_seed)]
    pub seed: Option<u64>,
}

pub fn run(a: GenArgs) -> Result<i32, Fail> {
    // Under a pipeline's shell: never outlive it.
    ipcperf_sys::signal::die_with_parent();
    let mut stream = Printable::new(a.seed.unwrap_or_else(random_seed));
    let mut scratch = vec![0u8; a.chunk.min(a.bytes)];
    let stdout = std::io::stdout();
    let out = stdout.as_fd();
    let mut left = a.bytes;
    while left > 0 {
        let n = a.chunk.min(left);
        let chunk = stream.next(&mut scratch[..n]);
        let mut done = 0;
        while done < n {
            match ipcperf_sys::fd::write(out, &chunk[done..]) {
                Ok(w) => done += w,
                // The reader has gone (`gen | head`): that is the reader's choice, not an error.
                Err(Errno::EPIPE) => return Ok(0),
                Err(e) => {
                    return Err(Fail::failure(format!(
                        "gen: write to stdout: {} ({e:?})",
                        e.desc()
                    )))
                }
            }
        }
        left -= n;
    }
    Ok(0)
}
