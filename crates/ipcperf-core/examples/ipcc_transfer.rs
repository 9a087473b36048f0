//! ipc-channel's own benchmark method, as its `benches/platform.rs`
//! (`transfer_data`) has it, for `bench/ipc-channel.sh` to set beside ipcperf:
//! one thread sends a SIZE-byte message on a channel of the crate's platform
//! layer and receives it back, over and over; criterion reports the time per
//! send-and-receive, here the elapsed time over ITERATIONS (in ns).
//!
//! With `ipcperf` as a fifth argument it runs the same loop the way ipcperf's
//! ipc-channel mechanism uses the crate: a typed `IpcSender<ByteBuf>` (the
//! block copied into an owned buffer and serialized), a receive bounded by a
//! timeout, the message kept until the next one replaces it and copied out into
//! the reader's buffer. So what that use costs can be told from what ipcperf's
//! harness costs.
//!
//! SIZE 0 is the crate's other benchmark of one message, `benches/ipc.rs`'s
//! `transfer_empty`: the typed API (`ipc::channel::<()>`), sending `()` and
//! receiving it, the nearest the crate's own benchmarks come to the typed
//! channel ipcperf uses (set beside ipcperf's 1-byte blocks).
//!
//! `cargo run --release --example ipcc_transfer -- ITERATIONS SIZE CPU [ipcperf]`
//! (the crate's method sends up to its largest unfragmented message in one
//! thread; larger ones need a second thread, which this does not reproduce).

use std::time::{Duration, Instant};

use ipc_channel::ipc;
use ipc_channel::platform;
use serde_bytes::ByteBuf;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let like_ipcperf = args.len() == 4 && args.pop().as_deref() == Some("ipcperf");
    let nums: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let [iterations, size, cpu] = nums[..] else {
        eprintln!("usage: ipcc_transfer ITERATIONS SIZE CPU [ipcperf]");
        std::process::exit(2);
    };
    let max = platform::OsIpcSender::get_max_fragment_size();
    if size > max {
        eprintln!("ipcc_transfer: {size} B is over the largest unfragmented message ({max} B)");
        std::process::exit(2);
    }
    let mut set = nix::sched::CpuSet::new();
    set.set(cpu).expect("cpu");
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).expect("pin");
    // The crate's bench fills its data once, with i % 251.
    let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    let ns = if size == 0 {
        let (tx, rx) = ipc::channel::<()>().expect("channel");
        let start = Instant::now();
        for _ in 0..iterations {
            tx.send(()).expect("send");
            rx.recv().expect("receive");
        }
        start.elapsed().as_nanos()
    } else if like_ipcperf {
        let (tx, rx) = ipc::channel::<ByteBuf>().expect("channel");
        let mut out = vec![0u8; size];
        // As ipcperf's reader, the last message is kept until the next replaces it.
        let mut msg: Vec<u8> = Vec::new();
        let start = Instant::now();
        for _ in 0..iterations {
            tx.send(ByteBuf::from(&data[..])).expect("send");
            msg = rx
                .try_recv_timeout(Duration::from_secs(2))
                .expect("receive")
                .into_vec();
            out.copy_from_slice(&msg);
        }
        let ns = start.elapsed().as_nanos();
        std::hint::black_box((&out, &msg));
        ns
    } else {
        let (tx, rx) = platform::channel().expect("channel");
        let start = Instant::now();
        for _ in 0..iterations {
            tx.send(&data, vec![], vec![]).expect("send");
            std::hint::black_box(rx.recv().expect("receive"));
        }
        start.elapsed().as_nanos()
    };
    println!("{}", ns / iterations.max(1) as u128);
}
