//! `ipcperf sink`: Stover's sink. Reads standard input to end of file in `--chunk`
//! reads, reads every byte it gets, and reports bytes, seconds and MB/s on stderr.

use std::os::fd::AsFd;

use clap::{Args, ValueEnum};
use ipcperf_core::gen::{check, Printable};
use ipcperf_sys::clock::now_ns;

use crate::fail::Fail;
use crate::shared::gen_sink::SinkReport;
use crate::units::{self, fmt_mbps};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SinkFormat {
    /// One line for people.
    Text,
    /// One JSON object for machines.
    Json,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  ipcperf gen --bytes 1G | ipcperf sink\n  ipcperf sink --format json < big.file"
)]
pub struct SinkArgs {
    /// Bytes per read(2).
    #[arg(long, short, default_value = "1k", value_parser = units::parse_block)]
    pub chunk: usize,

    /// Check every byte against what `ipcperf gen --seed S` writes; a difference
    /// fails (exit 1) and names its offset. Needs --bytes, so a stream cut short
    /// fails too.
    #[arg(long, value_name = "S", requires = "bytes", value_parser = units::parse_seed)]
    pub verify_seed: Option<u64>,

    /// The bytes expected (as given to gen --bytes: k = 1024); any other count
    /// fails (exit 1).
    #[arg(long, short, value_parser = units::parse_bytes)]
    pub bytes: Option<usize>,

    /// How the report on stderr is written.
    #[arg(long, short, value_enum, default_value_t = SinkFormat::Text)]
    pub format: SinkFormat,
}

pub fn run(a: SinkArgs) -> Result<i32, Fail> {
    // Under a pipeline's shell: never outlive it.
    ipcperf_sys::signal::die_with_parent();
    let mut buf = vec![0u8; a.chunk];
    let mut verify = a
        .verify_seed
        .map(|s| (s, Printable::new(s), vec![0u8; a.chunk]));
    let stdin = std::io::stdin();
    let input = stdin.as_fd();
    let (mut bytes, mut reads) = (0u64, 0u64);
    let t0 = now_ns();
    loop {
        let n = ipcperf_sys::fd::read(input, &mut buf).map_err(|e| {
            let line = format!("sink: read from stdin: {} ({e:?})", e.desc());
            // A directory given as the input is bad input, nothing read yet.
            if e == ipcperf_sys::error::Errno::EISDIR {
                Fail::usage(line)
            } else {
                Fail::failure(line)
            }
        })?;
        if n == 0 {
            break;
        }
        let got = &buf[..n];
        match &mut verify {
            Some((seed, stream, scratch)) => check(stream, got, scratch).map_err(|e| {
                Fail::failure(format!("sink: {e} (as gen --seed {seed} writes it)"))
            })?,
            None => {
                std::hint::black_box(ipcperf_core::payload::sum(got));
            }
        }
        bytes += n as u64;
        reads += 1;
    }
    let seconds = (now_ns() - t0).max(1) as f64 / 1e9;
    if let Some(want) = a.bytes.filter(|&w| w as u64 != bytes) {
        return Err(Fail::failure(format!(
            "sink: got {bytes} bytes where {want} were expected{}",
            if (bytes as usize) < want {
                " (the stream was cut short)"
            } else {
                ""
            }
        )));
    }
    let report = SinkReport {
        bytes,
        reads,
        seconds,
        mb_per_sec: (bytes > 0).then(|| bytes as f64 / seconds / 1e6),
        verified_seed: a.verify_seed,
    };
    match a.format {
        SinkFormat::Json => ipcperf_results::errln!(
            "{}",
            serde_json::to_string(&report).expect("reports serialize")
        ),
        SinkFormat::Text => match report.mb_per_sec {
            Some(rate) => ipcperf_results::errln!(
                "ipcperf sink: {bytes} bytes in {seconds:.3} s: {} MB/s ({reads} {}{})",
                fmt_mbps(rate * 1e6),
                if reads == 1 { "read" } else { "reads" },
                a.verify_seed
                    .map(|s| format!(", every byte as gen --seed {s} writes it"))
                    .unwrap_or_default()
            ),
            None => ipcperf_results::errln!(
                "ipcperf sink: 0 bytes: end of file at once after {seconds:.3} s, so no rate"
            ),
        },
    }
    Ok(0)
}
