//! iceoryx2's publish-subscribe benchmark method, as its `benchmarks/
//! publish-subscribe` describes it, for `bench/iceoryx2.sh` to set beside
//! ipcperf: two threads pinned to two CPUs, one service each way, each side
//! loaning a slice of SIZE bytes and sending it, the other busy-polling
//! `receive`. The benchmark sends its loans uninitialized (or, with --send-copy,
//! filled); here they come zeroed from `loan_slice`, iceoryx2's safe API (no
//! `unsafe` outside ipcperf-sys), its --send-copy case; after ITERATIONS round trips it prints the elapsed time divided by
//! twice the round trips (half a mean round trip, in ns), as that benchmark does.
//!
//! With `ipcperf` as a fifth argument it runs the same loop with the settings
//! ipcperf's iceoryx2 mechanism uses, so what those settings cost can be told
//! from what ipcperf's harness costs: subscribers that hold 8 samples and never
//! lose one (safe overflow off, one publisher and one subscriber per service),
//! a pause in each poll, and the clock read before and after each round trip.
//!
//! `cargo run --release --example iox2_pingpong --features iceoryx2 -- ITERATIONS SIZE CPU_A CPU_B [ipcperf]`

#[cfg(feature = "iceoryx2")]
fn main() {
    use iceoryx2::prelude::*;
    use std::sync::Barrier;
    use std::time::Instant;

    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let like_ipcperf = args.len() == 5 && args.pop().as_deref() == Some("ipcperf");
    let args: Vec<usize> = args
        .iter()
        .map(|a| a.parse().expect("ITERATIONS SIZE CPU_A CPU_B [ipcperf]"))
        .collect();
    let [iterations, size, cpu_a, cpu_b] = args[..] else {
        eprintln!("usage: iox2_pingpong ITERATIONS SIZE CPU_A CPU_B [ipcperf]");
        std::process::exit(2);
    };
    // The method's settings, or ipcperf's.
    let (buffer, safe_overflow, ports) = if like_ipcperf {
        (8, false, (1, 1))
    } else {
        (1, true, (2, 8))
    };
    let poll = |rx: &iceoryx2::port::subscriber::Subscriber<ipc_threadsafe::Service, [u8], ()>| {
        while rx.receive().unwrap().is_none() {
            if like_ipcperf {
                std::hint::spin_loop();
            }
        }
    };
    set_log_level(LogLevel::Error);
    // Named as ipcperf names its own, so `ipcperf clean` knows what a killed one leaves.
    let prefix = format!("ipcperf-{}-0-", std::process::id());
    let mut config = iceoryx2::config::Config::default();
    config.global.prefix = FileName::new(prefix.as_bytes()).expect("prefix");
    let node = NodeBuilder::new()
        .config(&config)
        .create::<ipc_threadsafe::Service>()
        .expect("node");
    let service = |name: &str| {
        node.service_builder(&ServiceName::new(name).expect("name"))
            .publish_subscribe::<[u8]>()
            .history_size(0)
            .subscriber_max_buffer_size(buffer)
            .enable_safe_overflow(safe_overflow)
            .max_publishers(ports.0)
            .max_subscribers(ports.1)
            .create()
            .expect("service")
    };
    let (a2b, b2a) = (service("a2b"), service("b2a"));
    let ready = Barrier::new(3);
    let pin = |cpu: usize| {
        let mut set = nix::sched::CpuSet::new();
        set.set(cpu).expect("cpu");
        nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).expect("pin");
    };
    let start = std::thread::scope(|s| {
        s.spawn(|| {
            pin(cpu_a);
            let tx = a2b
                .publisher_builder()
                .initial_max_slice_len(size)
                .create()
                .unwrap();
            let rx = b2a
                .subscriber_builder()
                .buffer_size(buffer)
                .create()
                .unwrap();
            ready.wait();
            let mut timed = 0u128;
            for _ in 0..iterations {
                let t0 = like_ipcperf.then(Instant::now);
                let sample = tx.loan_slice(size).unwrap();
                sample.send().unwrap();
                poll(&rx);
                if let Some(t0) = t0 {
                    timed += t0.elapsed().as_nanos();
                }
            }
            std::hint::black_box(timed);
        });
        s.spawn(|| {
            pin(cpu_b);
            let tx = b2a
                .publisher_builder()
                .initial_max_slice_len(size)
                .create()
                .unwrap();
            let rx = a2b
                .subscriber_builder()
                .buffer_size(buffer)
                .create()
                .unwrap();
            ready.wait();
            for _ in 0..iterations {
                let sample = tx.loan_slice(size).unwrap();
                poll(&rx);
                sample.send().unwrap();
            }
        });
        ready.wait();
        Instant::now()
    });
    let ns = start.elapsed().as_nanos() / (2 * iterations as u128);
    println!("{ns}");
}

#[cfg(not(feature = "iceoryx2"))]
fn main() {
    eprintln!("iox2_pingpong needs --features iceoryx2");
    std::process::exit(2);
}
