//! One conformance suite, instantiated for every stream mechanism in every mode it
//! has: the bytes sent arrive and verify, the peer (thread or process) ends
//! cleanly, and no named object is left in the directory the case was given.

use ipcperf_core::conformance;
use ipcperf_core::mechanism::{MechOptions, MechanismKind};
use ipcperf_core::mode::process::PeerCommand;
use ipcperf_core::mode::{Mode, Placement};
use ipcperf_core::observer::Quiet;
use ipcperf_core::payload::Payload;
use ipcperf_core::plan::{CaseSpec, Length, RunEnv};
use ipcperf_core::record::CaseStatus;
use ipcperf_core::runner::run_case;

fn env() -> RunEnv {
    RunEnv::new(PeerCommand {
        program: env!("CARGO_BIN_EXE_ipcperf").into(),
        args: vec!["__peer".into()],
    })
}

/// The generated suite (`ipcperf_core::conformance`: every registered mechanism ×
/// every mode × every workload it declares) in two processes; the core's unit
/// tests run it in one thread and in two.
#[test]
fn every_mechanism_conforms_in_two_processes() {
    every_mechanism_conforms(Mode::Processes);
}

fn every_mechanism_conforms(mode: Mode) {
    let cases = conformance::in_process(mode);
    assert!(cases.len() >= 20, "{} cases", cases.len());
    let base = tempfile::tempdir().unwrap();
    let f = conformance::check_all(&cases, &env(), base.path());
    assert!(f.is_empty(), "{f:#?}");
}

/// Set-up included (Stover's timing) runs a fresh session per series and still
/// delivers and cleans up.
#[test]
fn include_setup_processes() {
    let dir = tempfile::tempdir().unwrap();
    let spec = CaseSpec {
        payload: Payload::Verify,
        length: Length::Count { blocks: 100 },
        repeat: 3,
        include_setup: true,
        opts: MechOptions {
            dir: Some(dir.path().to_path_buf()),
            ..MechOptions::default()
        },
        ..CaseSpec::new(
            MechanismKind::Unix,
            Mode::Processes,
            1024,
            Placement::UNPINNED,
        )
    };
    let rec = run_case(&spec, &env(), &mut Quiet);
    assert_eq!(rec.status, CaseStatus::Ok, "{:?}", rec.message);
    assert_eq!(rec.series.len(), 3);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Pinned placements are honoured and recorded.
#[test]
fn pinned_placement_is_recorded() {
    let spec = CaseSpec {
        length: Length::Count { blocks: 100 },
        ..CaseSpec::new(
            MechanismKind::Pipe,
            Mode::Processes,
            4096,
            Placement::pinned(0, 0),
        )
    };
    let rec = run_case(&spec, &env(), &mut Quiet);
    assert_eq!(rec.status, CaseStatus::Ok, "{:?}", rec.message);
    assert_eq!(rec.placement.label, "same-cpu");
    assert_eq!(rec.placement.seen_writer_cpu, Some(0));
    assert_eq!(rec.placement.seen_reader_cpu, Some(0));
}

/// Non-blocking descriptors driven by poll deliver the same bytes.
#[test]
fn tcp_nonblocking_nodelay_buffers() {
    let spec = CaseSpec {
        payload: Payload::Verify,
        length: Length::Count { blocks: 50 },
        opts: MechOptions {
            nonblocking: true,
            nodelay: true,
            sndbuf: Some(1 << 20),
            rcvbuf: Some(1 << 20),
            ..MechOptions::default()
        },
        ..CaseSpec::new(
            MechanismKind::Tcp,
            Mode::Threads,
            100_000,
            Placement::UNPINNED,
        )
    };
    let rec = run_case(&spec, &env(), &mut Quiet);
    assert_eq!(rec.status, CaseStatus::Ok, "{:?}", rec.message);
    assert_eq!(rec.wait, "try-poll");
    assert_eq!(rec.options.get("nodelay").map(String::as_str), Some("true"));
}

/// A block bigger than the pipe can hold is refused in single mode, naming the capacity.
#[test]
fn single_mode_refuses_oversized_block_with_capacity() {
    let spec = CaseSpec {
        length: Length::Count { blocks: 10 },
        ..CaseSpec::new(
            MechanismKind::Pipe,
            Mode::Single,
            1 << 20,
            Placement::UNPINNED,
        )
    };
    let rec = run_case(&spec, &env(), &mut Quiet);
    assert_eq!(rec.status, CaseStatus::Refused);
    let msg = rec.message.unwrap();
    assert!(msg.contains("65536"), "names the capacity: {msg}");
    assert!(rec.series.is_empty() && rec.median_bytes_per_sec.is_none());
}

/// --pipe-size lets single mode hold a bigger block, and the granted size is recorded.
#[test]
fn pipe_size_raises_capacity() {
    let spec = CaseSpec {
        payload: Payload::Verify,
        length: Length::Count { blocks: 10 },
        opts: MechOptions {
            pipe_size: Some(1 << 20),
            ..MechOptions::default()
        },
        ..CaseSpec::new(
            MechanismKind::Pipe,
            Mode::Single,
            256 * 1024,
            Placement::UNPINNED,
        )
    };
    let rec = run_case(&spec, &env(), &mut Quiet);
    assert_eq!(rec.status, CaseStatus::Ok, "{:?}", rec.message);
    assert_eq!(
        rec.options.get("pipe_size_granted").map(String::as_str),
        Some("1048576")
    );
}
