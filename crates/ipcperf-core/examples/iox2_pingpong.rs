//! iceoryx2's publish-subscribe benchmark method, as its `benchmarks/
//! publish-subscribe` describes it, for `bench/iceoryx2.sh` to set beside
//! ipcperf: two threads pinned to two CPUs, one service each way, each side
//! loaning a slice of SIZE bytes and sending it, the other busy-polling
//! `receive`. The benchmark sends its loans uninitialized (or, with --send-copy,
//! filled); here they come zeroed from `loan_slice`, iceoryx2's safe API (no
//! `unsafe` outside ipcperf-sys), its --send-copy case; after ITERATIONS round trips it prints the elapsed time divided by
//! twice the round trips (half a mean round trip, in ns), as that benchmark does.
//!
//! `cargo run --release --example iox2_pingpong --features iceoryx2 -- ITERATIONS SIZE CPU_A CPU_B`

#[cfg(feature = "iceoryx2")]
fn main() {
    use iceoryx2::prelude::*;
    use std::sync::Barrier;
    use std::time::Instant;

    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("ITERATIONS SIZE CPU_A CPU_B"))
        .collect();
    let [iterations, size, cpu_a, cpu_b] = args[..] else {
        eprintln!("usage: iox2_pingpong ITERATIONS SIZE CPU_A CPU_B");
        std::process::exit(2);
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
            .subscriber_max_buffer_size(1)
            .enable_safe_overflow(true)
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
            let rx = b2a.subscriber_builder().create().unwrap();
            ready.wait();
            for _ in 0..iterations {
                let sample = tx.loan_slice(size).unwrap();
                sample.send().unwrap();
                while rx.receive().unwrap().is_none() {}
            }
        });
        s.spawn(|| {
            pin(cpu_b);
            let tx = b2a
                .publisher_builder()
                .initial_max_slice_len(size)
                .create()
                .unwrap();
            let rx = a2b.subscriber_builder().create().unwrap();
            ready.wait();
            for _ in 0..iterations {
                let sample = tx.loan_slice(size).unwrap();
                while rx.receive().unwrap().is_none() {}
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
