//! Which channel a descriptor is, in a trace without `-yy`: followed from the
//! calls that make descriptors (`pipe`, `pipe2`, `socketpair`, `open`,
//! `openat`), copy and move them (`dup`, `dup2`, `dup3`, `fcntl(F_DUPFD)`), drop
//! them (`close`, `close_range`, `execve`'s close-on-exec) and hand them to a
//! child (`fork`, `vfork`, `clone`, `clone3`). Each process has a table of its
//! descriptors, copied from its parent's at the fork (shared with
//! CLONE_FILES, as threads do), so a coprocess that moved its pipes onto 0 and
//! 1 is found at both ends of the same pipe.
//!
//! A pipe or socket pair is named by the process that made it and its two
//! descriptors there: `pipe[100:3,4]`, `socketpair[100:3,4]`.

use std::collections::HashMap;
use std::rc::Rc;

use super::strace::FdOp;

/// What a descriptor is.
#[derive(Clone, Debug)]
enum Obj {
    /// A pipe or socket pair, by its name.
    Channel(Rc<str>),
    /// A path opened by name: a file, or a FIFO.
    Path(Rc<str>),
    /// Something else (a socket, an eventfd): not followed.
    Other,
}

#[derive(Clone, Debug)]
struct Entry {
    obj: Obj,
    cloexec: bool,
}

type Table = HashMap<i32, Entry>;

/// A child's table, left at its parent's fork for when its lines come.
enum Born {
    Copy(Table),
    Shared(usize),
}

/// The descriptor tables of a trace's processes.
#[derive(Default)]
pub struct Ends {
    tables: Vec<Table>,
    of_pid: HashMap<u32, usize>,
    born: HashMap<u32, Born>,
    /// How many channels were made under each name.
    made: HashMap<String, u32>,
    /// Whether the trace made a pipe or socket pair, or forked: whether pairing
    /// without `-yy` had anything to go on.
    pub followed: bool,
}

/// What a descriptor's channel is: its key, and whether the key is the same
/// from every end (a pipe, a socket pair, a path) rather than one end's own.
pub struct Key {
    pub name: String,
    pub both_ends: bool,
    /// A path opened by name (a file unless two processes use it).
    pub path: bool,
}

impl Ends {
    /// The table of `pid`, made when it is first seen: from its parent's fork,
    /// else (its lines came before the fork returned in the parent) from the one
    /// process whose fork is under way, else empty.
    fn table(&mut self, pid: u32, forking: &[u32]) -> usize {
        if let Some(&t) = self.of_pid.get(&pid) {
            return t;
        }
        let t = match self.born.remove(&pid) {
            Some(Born::Shared(t)) => t,
            Some(Born::Copy(table)) => {
                self.tables.push(table);
                self.tables.len() - 1
            }
            None => {
                let parent = match forking {
                    [p] if *p != pid => self.of_pid.get(p).copied(),
                    _ => None,
                };
                let table = parent.map(|p| self.tables[p].clone()).unwrap_or_default();
                self.tables.push(table);
                self.tables.len() - 1
            }
        };
        self.of_pid.insert(pid, t);
        t
    }

    /// Whether `pid` was seen.
    pub fn knows(&self, pid: u32) -> bool {
        self.of_pid.contains_key(&pid)
    }

    /// Note that `pid` is in the trace (`forking`: the pids whose fork is under way).
    pub fn meet(&mut self, pid: u32, forking: &[u32]) {
        self.table(pid, forking);
    }

    /// What a descriptor call did in `pid`.
    pub fn apply(&mut self, pid: u32, op: &FdOp) {
        let t = self.table(pid, &[]);
        let table = &mut self.tables[t];
        match op {
            FdOp::Pipe { r, w, cloexec }
            | FdOp::SocketPair {
                a: r,
                b: w,
                cloexec,
            } => {
                self.followed = true;
                let kind = if matches!(op, FdOp::Pipe { .. }) {
                    "pipe"
                } else {
                    "socketpair"
                };
                // A process that makes its pipes on the same two numbers (and
                // moves them away) makes `pipe[10:3,4]`, then `pipe[10:3,4]#2`.
                let mut name = format!("{kind}[{pid}:{r},{w}]");
                let n = self.made.entry(name.clone()).or_default();
                *n += 1;
                if *n > 1 {
                    name = format!("{name}#{n}");
                }
                let obj = Obj::Channel(name.into());
                for fd in [*r, *w] {
                    table.insert(
                        fd,
                        Entry {
                            obj: obj.clone(),
                            cloexec: *cloexec,
                        },
                    );
                }
            }
            FdOp::Dup { old, new, cloexec } => {
                if old != new {
                    match table.get(old).cloned() {
                        Some(mut e) => {
                            e.cloexec = *cloexec;
                            table.insert(*new, e);
                        }
                        None => {
                            table.remove(new);
                        }
                    }
                }
            }
            FdOp::CloseOnExec { fd, on } => {
                if let Some(e) = table.get_mut(fd) {
                    e.cloexec = *on;
                }
            }
            FdOp::Close(fd) => {
                table.remove(fd);
            }
            FdOp::CloseRange { lo, hi, cloexec } => {
                if *cloexec {
                    for (_, e) in table.iter_mut().filter(|(fd, _)| (*lo..=*hi).contains(*fd)) {
                        e.cloexec = true;
                    }
                } else {
                    table.retain(|fd, _| !(*lo..=*hi).contains(fd));
                }
            }
            FdOp::Fork { child, shared } => {
                self.followed = true;
                if !self.of_pid.contains_key(child) {
                    let born = if *shared {
                        Born::Shared(t)
                    } else {
                        Born::Copy(table.clone())
                    };
                    self.born.insert(*child, born);
                }
            }
            FdOp::Exec => table.retain(|_, e| !e.cloexec),
            FdOp::Open { fd, path, cloexec } => {
                table.insert(
                    *fd,
                    Entry {
                        obj: Obj::Path(path.as_str().into()),
                        cloexec: *cloexec,
                    },
                );
            }
            FdOp::Other(fd) => {
                table.insert(
                    *fd,
                    Entry {
                        obj: Obj::Other,
                        cloexec: false,
                    },
                );
            }
        }
    }

    /// The channel descriptor `fd` of `pid` is, where the trace made it known.
    pub fn key(&mut self, pid: u32, fd: i32) -> Option<Key> {
        let t = self.table(pid, &[]);
        match &self.tables[t].get(&fd)?.obj {
            Obj::Channel(n) => Some(Key {
                name: n.to_string(),
                both_ends: true,
                path: false,
            }),
            Obj::Path(p) => Some(Key {
                name: p.to_string(),
                both_ends: true,
                path: true,
            }),
            Obj::Other => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(e: &mut Ends, pid: u32, fd: i32) -> Option<String> {
        e.key(pid, fd).map(|k| k.name)
    }

    #[test]
    fn a_coprocess_on_its_standard_input_and_output() {
        let mut e = Ends::default();
        // The shell makes two pipes, forks; the child moves them onto 0 and 1,
        // closes the originals and runs a program.
        e.apply(
            10,
            &FdOp::Pipe {
                r: 3,
                w: 4,
                cloexec: false,
            },
        );
        e.apply(
            10,
            &FdOp::Pipe {
                r: 5,
                w: 6,
                cloexec: true,
            },
        );
        e.apply(
            10,
            &FdOp::Fork {
                child: 11,
                shared: false,
            },
        );
        e.apply(
            11,
            &FdOp::Dup {
                old: 3,
                new: 0,
                cloexec: false,
            },
        );
        e.apply(
            11,
            &FdOp::Dup {
                old: 6,
                new: 1,
                cloexec: false,
            },
        );
        for fd in [3, 4, 5] {
            e.apply(11, &FdOp::Close(fd));
        }
        e.apply(11, &FdOp::Exec);
        assert_eq!(name(&mut e, 11, 0).as_deref(), Some("pipe[10:3,4]"));
        assert_eq!(name(&mut e, 11, 1).as_deref(), Some("pipe[10:5,6]"));
        // 6 was close-on-exec: gone after execve, not the copy on 1.
        assert_eq!(name(&mut e, 11, 6), None);
        assert_eq!(name(&mut e, 10, 4).as_deref(), Some("pipe[10:3,4]"));
        assert!(e.followed);
        // The same numbers again, once 3 and 4 were moved away: another pipe.
        e.apply(
            10,
            &FdOp::Dup {
                old: 3,
                new: 63,
                cloexec: false,
            },
        );
        e.apply(
            10,
            &FdOp::Pipe {
                r: 3,
                w: 4,
                cloexec: false,
            },
        );
        assert_eq!(name(&mut e, 10, 63).as_deref(), Some("pipe[10:3,4]"));
        assert_eq!(name(&mut e, 10, 3).as_deref(), Some("pipe[10:3,4]#2"));
    }

    #[test]
    fn a_child_seen_before_its_fork_returned_takes_the_forking_table() {
        let mut e = Ends::default();
        e.apply(
            20,
            &FdOp::SocketPair {
                a: 3,
                b: 4,
                cloexec: false,
            },
        );
        // The child's first line comes while the parent's clone is unfinished.
        e.meet(21, &[20]);
        e.apply(
            20,
            &FdOp::Fork {
                child: 21,
                shared: false,
            },
        );
        e.apply(20, &FdOp::Close(4));
        assert_eq!(name(&mut e, 21, 4).as_deref(), Some("socketpair[20:3,4]"));
        assert_eq!(name(&mut e, 20, 4), None);
        // A thread shares its table.
        e.apply(
            20,
            &FdOp::Fork {
                child: 22,
                shared: true,
            },
        );
        e.apply(
            20,
            &FdOp::Open {
                fd: 7,
                path: "/tmp/f".into(),
                cloexec: false,
            },
        );
        let k = e.key(22, 7).unwrap();
        assert!(k.path && k.name == "/tmp/f");
        e.apply(20, &FdOp::Other(7));
        assert!(e.key(22, 7).is_none());
        e.apply(
            20,
            &FdOp::CloseRange {
                lo: 3,
                hi: i32::MAX,
                cloexec: false,
            },
        );
        assert_eq!(name(&mut e, 20, 3), None);
    }
}
