//! ipcperf's shm ring (message layout, spin wake) in a minimal round-trip loop:
//! two threads pinned to CPUs 0 and 1, one ring each way, 1 MiB each, for
//! chasing the gap between `ipcperf latency shm` and a C floor without the
//! runner around it. `shm_replica SIZE COUNT HOW` prints the p50 in ns after a
//! warm-up: HOW 0 times a hand-written loop with ipcperf's clock, 1 runs
//! ipcperf's own ping/echo loops (what `latency` runs), 2 a hand-written loop
//! timed by `Instant`. `cargo run --release -p ipcperf-core --example
//! shm_replica -- 64 200000 1`.
use ipcperf_core::mechanism::shm_ring::{RingObject, ShmRing, Wake};
use ipcperf_core::payload::{Payload, Touch};
use ipcperf_core::workload::roundtrip::{echo_loop, ping, MessageEnd, Pair};
use ipcperf_sys::clock::now_ns;

fn ring(messages: bool) -> (ShmRing, ShmRing, RingObject) {
    let obj = RingObject::create(1 << 20, Wake::Spin, false)
        .unwrap()
        .messages(messages)
        .unwrap();
    let w = ShmRing::open_end(&obj.handoff, obj.end_fds().unwrap(), true).unwrap();
    let r = ShmRing::open_end(&obj.handoff, obj.end_fds().unwrap(), false).unwrap();
    (w, r, obj)
}

fn sum(b: &[u8]) -> u64 {
    ipcperf_core::payload::sum(b)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size: usize = args[1].parse().unwrap();
    let count: usize = args[2].parse().unwrap();
    let how: u32 = args[3].parse().unwrap(); // 0 hand loop, 1 ipcperf loops
    let (abw, abr, _o1) = ring(true);
    let (baw, bar, _o2) = ring(true);
    let warm = count / 10 + 1000;
    let total = warm + count;
    let echo = std::thread::spawn(move || {
        ipcperf_sys::cpu::pin_current_thread(1).unwrap();
        let mut e = Pair { tx: baw, rx: abr };
        let mut buf = vec![0u8; size];
        if how != 1 {
            let mut sink = 0u64;
            for _ in 0..total {
                e.recv_msg(&mut buf).unwrap();
                sink = sink.wrapping_add(sum(&buf));
                e.send_msg(&buf).unwrap();
            }
            std::hint::black_box(sink);
        } else {
            let mut d = Vec::new();
            echo_loop::<_, Touch, false>(&mut e, &mut buf, total as u64, &mut d).unwrap();
        }
    });
    ipcperf_sys::cpu::pin_current_thread(0).unwrap();
    let mut p = Pair { tx: abw, rx: bar };
    let mut wbuf = vec![0u8; size];
    let mut rbuf = vec![0u8; size];
    let mut samples: Vec<u64> = Vec::with_capacity(total);
    if how == 2 {
        let mut sink = 0u64;
        for i in 0..total {
            wbuf.fill(i as u8);
            let t0 = std::time::Instant::now();
            p.send_msg(&wbuf).unwrap();
            p.recv_msg(&mut rbuf).unwrap();
            let t1 = t0.elapsed().as_nanos() as u64;
            sink = sink.wrapping_add(sum(&rbuf));
            samples.push(t1);
        }
        std::hint::black_box(sink);
    } else if how == 0 {
        let mut sink = 0u64;
        for i in 0..total {
            wbuf.fill(i as u8);
            let t0 = now_ns();
            p.send_msg(&wbuf).unwrap();
            p.recv_msg(&mut rbuf).unwrap();
            let t1 = now_ns();
            sink = sink.wrapping_add(sum(&rbuf));
            samples.push(t1 - t0);
        }
        std::hint::black_box(sink);
    } else {
        ping(
            Payload::Touch,
            &mut p,
            &mut wbuf,
            &mut rbuf,
            total as u64,
            &mut samples,
        )
        .unwrap();
    }
    echo.join().unwrap();
    let mut s = samples[warm..].to_vec();
    s.sort_unstable();
    println!("replica{how} p50 {}", s[s.len() / 2]);
}
