//! Conformance for the message mechanisms and the round-trip workload: bytes
//! delivered and verified both ways, named objects gone afterwards, and a peer
//! killed with SIGKILL reported as an error within 2 s.

use std::time::{Duration, Instant};

use ipcperf_core::mechanism::MechanismKind;
use ipcperf_core::mode::process::PeerCommand;
use ipcperf_core::mode::{Mode, Placement};
use ipcperf_core::observer::Quiet;
use ipcperf_core::payload::Payload;
use ipcperf_core::plan::{CaseSpec, Length, RunEnv};
use ipcperf_core::record::{CaseRecord, CaseStatus};
use ipcperf_core::runner::{run_case, run_latency_case};
use ipcperf_core::workload::roundtrip_session::RoundTripSession;

const NEW: [MechanismKind; 4] = [
    MechanismKind::SysvMsg,
    MechanismKind::PosixMq,
    MechanismKind::UnixDgram,
    MechanismKind::UnixSeqpacket,
];

fn env() -> RunEnv {
    RunEnv::new(PeerCommand {
        program: env!("CARGO_BIN_EXE_ipcperf").into(),
        args: vec!["__peer".into()],
    })
}

fn spec(m: MechanismKind, mode: Mode, block: usize, n: u64) -> CaseSpec {
    CaseSpec {
        payload: Payload::Verify,
        length: Length::Count { blocks: n },
        ..CaseSpec::new(m, mode, block, Placement::UNPINNED)
    }
}

/// The named objects a case recorded are gone.
fn assert_objects_gone(r: &CaseRecord) {
    if let Some(id) = r.options.get("sysv_msqid") {
        let id: i32 = id.parse().unwrap();
        assert!(!ipcperf_sys::sysv_msg::exists(id), "SysV queue {id} left");
    }
    if let Some(name) = r.options.get("mq_name") {
        assert!(!ipcperf_sys::mqueue::exists(name), "queue {name} left");
    }
}

#[test]
fn round_trips_verified_over_every_message_mechanism_and_objects_removed() {
    for m in NEW
        .into_iter()
        .chain([MechanismKind::Udp, MechanismKind::Cma])
    {
        for mode in [Mode::Threads, Mode::Processes] {
            let r = run_latency_case(&spec(m, mode, 512, 300), &env(), &mut Quiet);
            assert_eq!(r.status, CaseStatus::Ok, "{m:?} {mode:?}: {:?}", r.message);
            let l = r.latency.as_ref().unwrap();
            assert_eq!(l.round_trips + l.round_trips_lost, 300, "{m:?} {mode:?}");
            if m != MechanismKind::Udp {
                assert_eq!(l.round_trips_lost, 0);
            } else {
                // Loopback rarely loses; whatever was lost is accounted for.
                let d = r.datagrams.unwrap();
                let lost = l.round_trips_lost;
                assert!(d.sent >= 600 - lost && d.sent <= 600, "{d:?}");
                assert_eq!(d.lost, d.sent - (d.received - d.duplicated));
                assert_eq!(l.round_trips + l.round_trips_lost, 300);
            }
            assert!(l.p50_ns > 0 && l.p50_ns <= l.p99_ns && l.p99_ns <= l.max_ns);
            assert_eq!(r.series[0].bytes, 2 * 512 * 300);
            assert_objects_gone(&r);
        }
    }
}

#[test]
fn streams_verified_over_every_message_mechanism_in_every_mode() {
    for m in NEW {
        for mode in [Mode::Single, Mode::Threads, Mode::Processes] {
            let r = run_case(&spec(m, mode, 4096, 200), &env(), &mut Quiet);
            assert_eq!(r.status, CaseStatus::Ok, "{m:?} {mode:?}: {:?}", r.message);
            assert_eq!(r.series[0].bytes, 4096 * 200);
            assert_objects_gone(&r);
        }
    }
}

#[test]
fn round_trips_over_pipes_fifos_and_sockets() {
    for m in [
        MechanismKind::Pipe,
        MechanismKind::Fifo,
        MechanismKind::Unix,
        MechanismKind::Tcp,
    ] {
        let r = run_latency_case(&spec(m, Mode::Processes, 1000, 200), &env(), &mut Quiet);
        assert_eq!(r.status, CaseStatus::Ok, "{m:?}: {:?}", r.message);
        assert_eq!(r.latency.unwrap().round_trips, 200);
    }
}

#[test]
fn a_block_over_the_system_limit_is_refused_with_the_sysctl() {
    for (m, sysctl) in [
        (MechanismKind::SysvMsg, "kernel.msgmax"),
        (MechanismKind::PosixMq, "fs.mqueue.msgsize_max"),
        (MechanismKind::UnixDgram, "wmem"),
    ] {
        let r = run_latency_case(&spec(m, Mode::Threads, 16 << 20, 10), &env(), &mut Quiet);
        assert_eq!(r.status, CaseStatus::Refused, "{m:?}");
        let msg = r.message.unwrap();
        assert!(msg.contains(sysctl), "{m:?}: {msg}");
    }
}

#[test]
fn single_mode_and_solo_mechanisms_cannot_do_round_trips() {
    let r = run_latency_case(
        &spec(MechanismKind::Pipe, Mode::Single, 64, 10),
        &env(),
        &mut Quiet,
    );
    assert_eq!(r.status, CaseStatus::Refused);
    let r = run_latency_case(
        &spec(MechanismKind::File, Mode::Threads, 64, 10),
        &env(),
        &mut Quiet,
    );
    assert_eq!(r.status, CaseStatus::Refused);
}

#[test]
fn a_killed_peer_is_an_error_within_two_seconds() {
    use ipcperf_core::mechanism::{cma, msgq, pipe, sockpair, udp};
    killed_peer::<msgq::SysvMsg>();
    killed_peer::<msgq::PosixMq>();
    killed_peer::<sockpair::UnixDgram>();
    killed_peer::<sockpair::UnixSeqpacket>();
    killed_peer::<udp::Udp>();
    killed_peer::<cma::Cma>();
    killed_peer::<pipe::Pipe>();
}

fn killed_peer<M: ipcperf_core::mechanism::Mechanism>() {
    {
        let m = M::INFO.kind;
        let s = spec(m, Mode::Processes, 64, 10);
        let mut sess = RoundTripSession::<M>::open(&s, &env()).unwrap();
        sess.series(50, RunEnv::STALL_NS).unwrap();
        let pid = sess.peer_pid().unwrap();
        ipcperf_sys::signal::kill(pid as i32);
        let t0 = Instant::now();
        let r = sess.series(5_000_000, RunEnv::STALL_NS);
        let took = t0.elapsed();
        assert!(r.is_err(), "{m:?}: a dead peer went unnoticed");
        assert!(took < Duration::from_secs(2), "{m:?}: took {took:?}");
        let msg = r.unwrap_err().to_string();
        assert!(
            msg.contains("peer"),
            "{m:?}: the error should name the peer: {msg}"
        );
        drop(sess);
    }
}

#[test]
fn vmsplice_moves_every_byte_without_touch_and_refuses_touch() {
    for mode in [Mode::Threads, Mode::Processes] {
        let mut s = spec(MechanismKind::Vmsplice, mode, 65536, 300);
        s.payload = Payload::NoTouch;
        let r = run_case(&s, &env(), &mut Quiet);
        assert_eq!(r.status, CaseStatus::Ok, "{mode:?}: {:?}", r.message);
        // The reader counts what splice moved: the run ends only when all arrived.
        assert_eq!(r.series[0].bytes, 65536 * 300);
    }
    let r = run_case(
        &spec(MechanismKind::Vmsplice, Mode::Threads, 4096, 10),
        &env(),
        &mut Quiet,
    );
    assert_eq!(r.status, CaseStatus::Refused);
    assert!(r.message.unwrap().contains("--no-touch"));
}

#[test]
fn cma_streams_verified_in_threads_and_processes() {
    for mode in [Mode::Threads, Mode::Processes] {
        let r = run_case(
            &spec(MechanismKind::Cma, mode, 65536, 100),
            &env(),
            &mut Quiet,
        );
        assert_eq!(r.status, CaseStatus::Ok, "{mode:?}: {:?}", r.message);
        assert_eq!(r.series[0].bytes, 65536 * 100);
    }
}

#[test]
fn udp_streams_count_what_was_lost_and_report_what_arrived() {
    for mode in [Mode::Threads, Mode::Processes] {
        let r = run_case(
            &spec(MechanismKind::Udp, mode, 1024, 20_000),
            &env(),
            &mut Quiet,
        );
        assert_eq!(r.status, CaseStatus::Ok, "{mode:?}: {:?}", r.message);
        let d = r.datagrams.expect("udp streams carry datagram counts");
        let s = &r.series[0];
        // Verified blocks arrived; the rest is accounted for as lost.
        assert_eq!(d.sent, 20_000, "{d:?}");
        assert_eq!(d.lost, d.sent - (d.received - d.duplicated));
        assert_eq!(s.bytes, (d.received - d.duplicated) * 1024);
        assert!(s.bytes <= 1024 * 20_000);
    }
}
