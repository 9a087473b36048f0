use super::*;

fn rr_pair() -> (Link, Iox2End, Iox2End) {
    let opts = MechOptions {
        iox2_request_response: true,
        ..MechOptions::default()
    };
    assert!(matches!(Iceoryx2::setup(&opts, 64), Err(Error::Refused(_))));
    let mut link = Iceoryx2::setup_round_trip(&opts, 4096).unwrap();
    let peer = link.take_peer().unwrap();
    let t = std::thread::spawn(move || Iceoryx2::open(peer, 2000));
    let client = super::super::open_local::<Iceoryx2>(&mut link, 2000).unwrap();
    let server = t.join().unwrap().unwrap();
    (link, client, server)
}

fn read_all(e: &mut Iox2End, n: usize) -> Result<Vec<u8>> {
    let mut got = vec![0u8; n];
    let mut off = 0;
    while off < n {
        off += e.read_some(&mut got[off..])?;
    }
    Ok(got)
}

/// Request-response: each request arrives whole at the server and its
/// response whole at the client, whatever the size up to the block; the
/// client is the owner's side.
#[test]
fn request_response_carries_every_byte_both_ways() {
    let (_link, mut client, mut server) = rr_pair();
    assert!(matches!(client.ports, Ports::Client { .. }));
    assert!(matches!(server.ports, Ports::Server { .. }));
    for size in [1usize, 100, 4096] {
        let ask: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
        client.write_all(&ask).unwrap();
        assert_eq!(read_all(&mut server, size).unwrap(), ask);
        let answer: Vec<u8> = ask.iter().map(|b| b ^ 0x5a).collect();
        server.write_all(&answer).unwrap();
        assert_eq!(read_all(&mut client, size).unwrap(), answer);
    }
    // A response with no request, and a second request in flight, are refused.
    assert!(matches!(server.write_all(b"x"), Err(Error::Invalid(_))));
    client.write_all(b"y").unwrap();
    assert!(matches!(client.write_all(b"z"), Err(Error::Invalid(_))));
}

/// A client waiting on a response whose server died (the watchdog's word)
/// is told so at once, not after its bound.
#[test]
fn a_dead_server_ends_the_wait_for_a_response_at_once() {
    let (link, mut client, server) = rr_pair();
    client.write_all(&[1, 2, 3]).unwrap();
    drop(server);
    for f in &link.on_peer_death {
        f();
    }
    let t0 = std::time::Instant::now();
    assert!(matches!(read_all(&mut client, 3), Err(Error::Peer(_))));
    assert!(
        t0.elapsed() < Duration::from_millis(500),
        "{:?}",
        t0.elapsed()
    );
}
