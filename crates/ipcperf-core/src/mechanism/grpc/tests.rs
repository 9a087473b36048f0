use super::*;

fn pair(unary: bool) -> (GrpcEnd, GrpcEnd) {
    let mut link = setup(&MechOptions::default(), unary).unwrap();
    let peer = link.take_peer().unwrap();
    let t = std::thread::spawn(move || GrpcUds::open(peer, 2000));
    let ours = super::super::open_local::<GrpcUds>(&mut link, 2000).unwrap();
    (ours, t.join().unwrap().unwrap())
}

/// Every message of a stream arrives, whole, the last one too: a write
/// returns once its message is on the socket, not in HTTP/2's buffer.
#[test]
fn a_stream_delivers_every_byte_of_every_size() {
    for size in [1usize, 16 << 10, 64 << 10, 1 << 20] {
        let (mut ours, mut theirs) = pair(false);
        let n = 5;
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            let mut buf = vec![0u8; size];
            while got.len() < n * size {
                let k = theirs
                    .read_some(&mut buf)
                    .unwrap_or_else(|e| panic!("{size} B, {} read: {e}", got.len()));
                got.extend_from_slice(&buf[..k]);
            }
            got
        });
        let mut sent = Vec::new();
        for i in 0..n {
            let block: Vec<u8> = (0..size).map(|j| (i * 7 + j) as u8).collect();
            ours.write_all(&block).unwrap();
            sent.extend_from_slice(&block);
        }
        // The writer waits elsewhere: nothing of its drives the connection now.
        let got = reader.join().unwrap();
        assert!(got == sent, "{size} B");
    }
}

/// A unary call carries its request and brings back the answer.
#[test]
fn unary_calls_round_trip() {
    let (mut ours, mut theirs) = pair(true);
    let t = std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 20];
        for _ in 0..4 {
            let k = theirs.read_some(&mut buf).unwrap();
            buf[..k].reverse();
            theirs.write_all(&buf[..k]).unwrap();
        }
        theirs
    });
    for size in [1usize, 4096, 70_000, 1 << 20] {
        let msg: Vec<u8> = (0..size).map(|j| j as u8).collect();
        ours.write_all(&msg).unwrap();
        let mut back = vec![0u8; size];
        let mut at = 0;
        while at < size {
            at += ours.read_some(&mut back[at..]).unwrap();
        }
        back.reverse();
        assert!(back == msg, "{size} B");
    }
    let _theirs = t.join().unwrap();
}

/// Every crate the results name is the version built in.
/// The record says which call carries the case and what bounds a message.
#[test]
fn the_facts_name_the_call_and_the_windows() {
    for (unary, call) in [(true, "unary"), (false, "bidirectional stream")] {
        let link = setup(&MechOptions::default(), unary).unwrap();
        let fact = |k: &str| {
            link.facts
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(fact("grpc_call").as_deref(), Some(call));
        assert!(fact("http2_windows").is_some_and(|v| v.starts_with("2147483647 B")));
        assert!(fact("grpc_message_limits").is_some());
    }
}

#[test]
fn the_named_versions_are_the_built_ones() {
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock"))
        .expect("Cargo.lock");
    let named = LIBRARY.replace(['(', ')', ','], " ");
    let words: Vec<&str> = named.split_whitespace().collect();
    assert_eq!(words.len(), 8, "{LIBRARY}");
    for pair in words.chunks(2) {
        let entry = format!("name = \"{}\"\nversion = \"{}\"", pair[0], pair[1]);
        assert!(lock.contains(&entry), "{entry}");
    }
}

/// An answerer whose asker has gone is told so, not left waiting.
#[test]
fn a_gone_asker_is_an_error_soon() {
    let (ours, mut theirs) = pair(true);
    drop(ours);
    let t0 = std::time::Instant::now();
    let mut buf = [0u8; 8];
    let r = theirs.read_some(&mut buf);
    assert!(matches!(r, Err(Error::Peer(_))), "{r:?}");
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
}
