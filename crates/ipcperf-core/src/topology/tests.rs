use super::*;
use PlacementClass::*;

/// A recorded tree (`tests/fixtures/topology/NAME.sysfs`, `path: content` lines)
/// laid out under a fresh directory, read as a process limited to the CPUs in
/// its `ipcperf-allowed` line (when it has one) would read it.
pub(crate) fn fixture(name: &str) -> Topology {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/topology")
        .join(format!("{name}.sysfs"));
    let text = std::fs::read_to_string(&src).unwrap();
    let root = std::env::temp_dir().join(format!(
        "ipcperf-topology-{name}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&root);
    for line in text.lines() {
        let (path, content) = line.split_once(':').unwrap();
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, format!("{}\n", content.trim())).unwrap();
    }
    let allowed = read_list(&root, "ipcperf-allowed");
    let t = Topology::read(&root, allowed.as_deref());
    std::fs::remove_dir_all(&root).unwrap();
    t
}

fn classes(t: &Topology) -> Vec<(PlacementClass, (usize, usize))> {
    t.classes()
}

#[test]
fn the_recorded_16_cpu_xeon_guest_is_one_l3() {
    // ../shared/measure/xeon16-sysfs.tgz: a KVM guest's own view of itself.
    let t = fixture("xeon16");
    assert_eq!(t.cpus.len(), 16);
    assert_eq!(
        (t.packages(), t.nodes(), t.cores(), t.smt()),
        (1, 1, 16, false)
    );
    assert_eq!(t.l3_domains(), vec![(0..16).collect::<Vec<_>>()]);
    // Every pair of two CPUs is shared-l3: --pin all is two placements.
    assert_eq!(classes(&t), vec![(SameCpu, (0, 0)), (SharedL3, (0, 1))]);
    assert_eq!(t.classify(0, 2), Some(SharedL3));
    assert_eq!(t.classify(15, 11), Some(SharedL3));
    assert_eq!(t.spread(8, Some(SharedL3)).unwrap().len(), 8);
}

#[test]
fn cpu_lists_parse_and_print() {
    assert_eq!(
        parse_cpu_list("0-3,8,10-11"),
        Some(vec![0, 1, 2, 3, 8, 10, 11])
    );
    assert_eq!(parse_cpu_list("0-7:2"), Some(vec![0, 2, 4, 6]));
    assert_eq!(parse_cpu_list("\n"), Some(vec![]));
    assert_eq!(parse_cpu_list("3-1"), None);
    assert_eq!(parse_cpu_list("x"), None);
    assert_eq!(format_cpu_list(&[11, 0, 1, 2, 3, 8, 10]), "0-3,8,10-11");
}

#[test]
fn a_two_cpu_vm_has_one_cpu_and_a_shared_l3() {
    let t = fixture("vm-2cpu");
    assert_eq!(classes(&t), vec![(SameCpu, (0, 0)), (SharedL3, (0, 1))]);
    assert_eq!(
        (t.packages(), t.nodes(), t.cores(), t.smt()),
        (1, 1, 2, false)
    );
    assert!(t.representative(SmtSibling).is_none());
    let why = t.absent_reason(OtherSocket);
    assert!(
        why.contains("no other-socket pair") && why.contains("0-1"),
        "{why}"
    );
}

#[test]
fn a_two_socket_smt_server() {
    let t = fixture("intel-2s-smt");
    assert_eq!(
        classes(&t),
        vec![
            (SameCpu, (0, 0)),
            (SmtSibling, (0, 8)),
            (SharedL3, (0, 1)),
            (OtherSocket, (0, 4)),
        ]
    );
    assert_eq!(
        (t.packages(), t.nodes(), t.cores(), t.smt()),
        (2, 2, 8, true)
    );
    assert_eq!(t.l3_domains().len(), 2);
    // Every pair is classified by its closest relation.
    assert_eq!(t.classify(12, 4), Some(SmtSibling));
    assert_eq!(t.classify(9, 3), Some(SharedL3));
    assert_eq!(t.classify(9, 15), Some(OtherSocket));
}

#[test]
fn an_epyc_with_several_ccx_per_ccd() {
    let t = fixture("epyc-ccx");
    assert_eq!(
        classes(&t),
        vec![
            (SameCpu, (0, 0)),
            (SmtSibling, (0, 8)),
            (SharedL3, (0, 1)),
            (OtherL3, (0, 2)),
            (OtherNuma, (0, 4)),
        ]
    );
    assert_eq!((t.packages(), t.nodes(), t.l3_domains().len()), (1, 2, 4));
    assert_eq!(t.classify(10, 3), Some(SharedL3));
    assert_eq!(t.classify(10, 0), Some(OtherL3));
    assert_eq!(t.classify(15, 0), Some(OtherNuma));
}

#[test]
fn many_pairs_spread_over_cpus_of_their_own_while_they_last() {
    let t = fixture("intel-2s-smt");
    // 16 CPUs: 8 pairs never share a CPU; the 9th starts over.
    let v = t.spread(9, None).unwrap();
    let mut seen: Vec<usize> = v[..8].iter().flat_map(|&(a, b)| [a, b]).collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..16).collect::<Vec<_>>());
    assert!(v.iter().all(|(a, b)| a != b));
    assert_eq!(v[8], v[0]);
    // By class: every pair is of it, on CPUs of its own.
    let v = t.spread(4, Some(OtherSocket)).unwrap();
    assert_eq!(v.len(), 4);
    for &(a, b) in &v {
        assert_eq!(t.classify(a, b), Some(OtherSocket), "{a} {b}");
    }
    let mut cpus: Vec<usize> = v.iter().flat_map(|&(a, b)| [a, b]).collect();
    cpus.sort_unstable();
    cpus.dedup();
    assert_eq!(cpus.len(), 8);
    let v = t.spread(3, Some(SameCpu)).unwrap();
    assert_eq!(v, vec![(0, 0), (1, 1), (2, 2)]);
    // A 2-CPU VM: every pair is 0 and 1; a class it lacks has no spread.
    let t = fixture("vm-2cpu");
    assert_eq!(t.spread(3, None).unwrap(), vec![(0, 1); 3]);
    assert!(t.spread(2, Some(OtherNuma)).is_none());
}

#[test]
fn offline_cpus_and_a_cpuset_are_left_out() {
    let t = fixture("offline-cpuset");
    let usable: Vec<usize> = t.cpus.iter().map(|p| p.cpu).collect();
    assert_eq!(usable, vec![0, 1, 4, 5]);
    assert_eq!(t.offline, vec![3]);
    assert_eq!(t.not_allowed, vec![2, 6, 7]);
    assert_eq!(
        classes(&t),
        vec![(SameCpu, (0, 0)), (SmtSibling, (0, 4)), (SharedL3, (0, 1))]
    );
    // A CPU this process may not use is never classified (never offered).
    assert_eq!(t.classify(0, 2), None);
    assert_eq!(t.classify(0, 3), None);
}

/// Trees recorded inside QEMU guests (`bench/manycore/run.sh LAYOUT
/// --keep-sysfs`): what Debian's kernel reports for each layout QEMU was told
/// to make, read as exactly that layout.
#[test]
fn emulated_servers_read_as_qemu_made_them() {
    type Want = (
        usize,
        usize,
        usize,
        bool,
        usize,
        &'static [(PlacementClass, (usize, usize))],
    );
    let cases: &[(&str, Want)] = &[
        // -smp 16,sockets=2,cores=4,threads=2, a node per socket.
        (
            "qemu-intel16",
            (
                2,
                2,
                8,
                true,
                2,
                &[
                    (SameCpu, (0, 0)),
                    (SmtSibling, (0, 1)),
                    (SharedL3, (0, 2)),
                    (OtherSocket, (0, 8)),
                ],
            ),
        ),
        // The same with two nodes per socket: the L3 is still reported per
        // socket, and 0 and 4 are in different nodes of it.
        (
            "qemu-numa16",
            (
                2,
                4,
                8,
                true,
                2,
                &[
                    (SameCpu, (0, 0)),
                    (SmtSibling, (0, 1)),
                    (SharedL3, (0, 2)),
                    (OtherNuma, (0, 4)),
                    (OtherSocket, (0, 8)),
                ],
            ),
        ),
        // -smp 16,sockets=1,dies=4,cores=2,threads=2: an L3 per die, two nodes.
        (
            "qemu-amd16",
            (
                1,
                2,
                8,
                true,
                4,
                &[
                    (SameCpu, (0, 0)),
                    (SmtSibling, (0, 1)),
                    (SharedL3, (0, 2)),
                    (OtherL3, (0, 4)),
                    (OtherNuma, (0, 8)),
                ],
            ),
        ),
        // -smp 64,sockets=2,dies=4,cores=4,threads=2, four nodes.
        (
            "qemu-big64",
            (
                2,
                4,
                32,
                true,
                8,
                &[
                    (SameCpu, (0, 0)),
                    (SmtSibling, (0, 1)),
                    (SharedL3, (0, 2)),
                    (OtherL3, (0, 8)),
                    (OtherNuma, (0, 16)),
                    (OtherSocket, (0, 32)),
                ],
            ),
        ),
    ];
    for (name, (packages, nodes, cores, smt, l3, want)) in cases {
        let t = fixture(name);
        assert_eq!(
            (
                t.packages(),
                t.nodes(),
                t.cores(),
                t.smt(),
                t.l3_domains().len()
            ),
            (*packages, *nodes, *cores, *smt, *l3),
            "{name}"
        );
        assert_eq!(classes(&t), want.to_vec(), "{name}");
    }
    // Sub-NUMA clustering: the pair shares the package's L3 and still crosses a
    // memory node, and that is the class it gets (it was `shared-l3`).
    let t = fixture("qemu-numa16");
    assert!(t.place(0).unwrap().l3.as_ref().unwrap().contains(&4));
    assert_eq!(t.classify(0, 4), Some(OtherNuma));
    assert_eq!(t.classify(5, 2), Some(OtherNuma));
    assert_eq!(t.classify(4, 7), Some(SharedL3));
    assert_eq!(t.spread(2, Some(OtherNuma)).unwrap().len(), 2);
}

/// Each hand-written tree beside the guest of its layout: the same files
/// per CPU, and read as the same machine (counts, domains, classes present).
/// The hand-written ones keep the numbering real servers use (SMT siblings
/// c and c+N), which QEMU does not reproduce (it numbers them c and c+1).
#[test]
fn hand_written_trees_match_the_guests_of_their_layout() {
    fn files_of_cpu0(name: &str) -> Vec<String> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/topology")
            .join(format!("{name}.sysfs"));
        let text = std::fs::read_to_string(src).unwrap();
        let mut v: Vec<String> = text
            .lines()
            .filter_map(|l| l.split_once(':'))
            .filter_map(|(p, _)| p.strip_prefix("devices/system/cpu/cpu0/"))
            .map(str::to_string)
            .collect();
        v.sort();
        v
    }
    for (hand, guest) in [("intel-2s-smt", "qemu-intel16"), ("epyc-ccx", "qemu-amd16")] {
        assert_eq!(files_of_cpu0(hand), files_of_cpu0(guest), "{hand}");
        let (h, g) = (fixture(hand), fixture(guest));
        assert_eq!(
            (h.packages(), h.nodes(), h.cores(), h.smt()),
            (g.packages(), g.nodes(), g.cores(), g.smt()),
            "{hand}"
        );
        let sizes = |t: &Topology| {
            let mut v: Vec<usize> = t.l3_domains().iter().map(Vec::len).collect();
            v.sort_unstable();
            (v, t.l2_domains().len())
        };
        assert_eq!(sizes(&h), sizes(&g), "{hand}");
        let present = |t: &Topology| -> Vec<PlacementClass> {
            t.classes().into_iter().map(|(c, _)| c).collect()
        };
        assert_eq!(present(&h), present(&g), "{hand}");
    }
}

#[test]
fn class_names_round_trip() {
    for c in PlacementClass::ALL {
        assert_eq!(PlacementClass::from_name(c.name()), Some(c));
    }
    assert_eq!(PlacementClass::from_name("cross-cpu"), None);
}
