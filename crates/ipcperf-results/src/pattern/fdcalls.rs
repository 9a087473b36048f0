//! The calls that make, copy, move and drop descriptors, as strace writes them
//! (`pipe2([3, 4], O_CLOEXEC) = 0`, `dup2(3, 0) = 0`, `clone(...) = 124`): read
//! into [`FdOp`]s, which [`super::ends`] follows to pair the ends of a pipe or
//! socket pair in a trace without `-yy`.

/// A call that makes, copies, moves or drops descriptors, or a process: what
/// pairs the two ends of a pipe or socket pair in a trace without `-yy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FdOp {
    /// `pipe`/`pipe2`: its read end and write end.
    Pipe {
        r: i32,
        w: i32,
        cloexec: bool,
    },
    /// `socketpair`: its two ends.
    SocketPair {
        a: i32,
        b: i32,
        cloexec: bool,
    },
    /// `dup`/`dup2`/`dup3`/`fcntl(F_DUPFD)`: `new` is now what `old` is.
    Dup {
        old: i32,
        new: i32,
        cloexec: bool,
    },
    /// `fcntl(F_SETFD)`.
    CloseOnExec {
        fd: i32,
        on: bool,
    },
    Close(i32),
    /// `close_range(lo, hi, flags)`: closed, or marked close-on-exec.
    CloseRange {
        lo: i32,
        hi: i32,
        cloexec: bool,
    },
    /// `fork`/`vfork`/`clone`/`clone3` returned `child` in the parent;
    /// `shared` with CLONE_FILES (a thread: one descriptor table).
    Fork {
        child: u32,
        shared: bool,
    },
    /// `execve` succeeded: the close-on-exec descriptors are gone.
    Exec,
    /// `open`/`openat`/`creat`: a path (a file, or a FIFO by its name).
    Open {
        fd: i32,
        path: String,
        cloexec: bool,
    },
    /// Any other call that returned a descriptor (a socket, an eventfd, ...).
    Other(i32),
}

/// The calls that return a new descriptor we do not follow.
pub(super) fn other_fd(name: &str) -> bool {
    matches!(
        name,
        "socket"
            | "accept"
            | "accept4"
            | "eventfd"
            | "eventfd2"
            | "memfd_create"
            | "epoll_create"
            | "epoll_create1"
            | "timerfd_create"
            | "signalfd"
            | "signalfd4"
            | "inotify_init"
            | "inotify_init1"
            | "pidfd_open"
            | "userfaultfd"
            | "perf_event_open"
            | "io_uring_setup"
    )
}

/// Whether a call is one [`FdOp`] reads (kept when it is `<unfinished ...>`).
pub(super) fn fd_call(name: &str) -> bool {
    matches!(
        name,
        "pipe"
            | "pipe2"
            | "socketpair"
            | "dup"
            | "dup2"
            | "dup3"
            | "fcntl"
            | "fcntl64"
            | "close"
            | "close_range"
            | "fork"
            | "vfork"
            | "clone"
            | "clone3"
            | "execve"
            | "execveat"
            | "open"
            | "openat"
            | "openat2"
            | "creat"
    ) || other_fd(name)
}

/// The leading whole number of `s` (after blanks): `3<pipe:[1]>` is 3.
pub(super) fn lead_num(s: &str) -> Option<i64> {
    let s = s.trim_start();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let v: i64 = s[..end].parse().ok()?;
    Some(if neg { -v } else { v })
}

/// The arguments of a call (what is between its parentheses), split at the
/// top-level commas: strings, brackets and braces kept whole.
fn split_args(args: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut escaped, mut start) = (0i32, false, false, 0);
    for (i, c) in args.char_indices() {
        if quoted {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => quoted = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            '[' | '{' | '(' => depth += 1,
            ']' | '}' => depth -= 1,
            ')' if depth == 0 => {
                out.push(args[start..i].trim());
                return out;
            }
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(args[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(args[start..].trim());
    out
}

/// The two descriptors of `[3, 4]` (or `[3<pipe:[1]>, 4<pipe:[1]>]`).
fn fd_pair(arg: &str) -> Option<(i32, i32)> {
    let inner = arg.trim().strip_prefix('[')?;
    let (x, y) = inner.split_once(',')?;
    Some((lead_num(x)? as i32, lead_num(y)? as i32))
}

/// The first string argument, unescaped as far as a path needs.
fn first_string(args: &str) -> Option<String> {
    let start = args.find('"')? + 1;
    let mut out = String::new();
    let mut esc = false;
    for c in args[start..].chars() {
        match (esc, c) {
            (true, c) => {
                out.push(c);
                esc = false;
            }
            (false, '\\') => esc = true,
            (false, '"') => return Some(out),
            (false, c) => out.push(c),
        }
    }
    None
}

/// What a descriptor call did, from its arguments and its result.
pub(super) fn fd_op(name: &str, args: &str, ret: i64) -> Option<FdOp> {
    let a = split_args(args);
    let arg = |i: usize| a.get(i).and_then(|s| lead_num(s)).map(|v| v as i32);
    Some(match name {
        "pipe" | "pipe2" => {
            let (r, w) = fd_pair(a.first()?)?;
            FdOp::Pipe {
                r,
                w,
                cloexec: a.get(1).is_some_and(|f| f.contains("O_CLOEXEC")),
            }
        }
        "socketpair" => {
            let (x, y) = fd_pair(a.get(3)?)?;
            FdOp::SocketPair {
                a: x,
                b: y,
                cloexec: a.get(1).is_some_and(|f| f.contains("SOCK_CLOEXEC")),
            }
        }
        "dup" => FdOp::Dup {
            old: arg(0)?,
            new: ret as i32,
            cloexec: false,
        },
        "dup2" | "dup3" => FdOp::Dup {
            old: arg(0)?,
            new: ret as i32,
            cloexec: a.get(2).is_some_and(|f| f.contains("O_CLOEXEC")),
        },
        "fcntl" | "fcntl64" => {
            let cmd = a.get(1)?;
            if cmd.starts_with("F_DUPFD") {
                FdOp::Dup {
                    old: arg(0)?,
                    new: ret as i32,
                    cloexec: *cmd == "F_DUPFD_CLOEXEC",
                }
            } else if *cmd == "F_SETFD" {
                FdOp::CloseOnExec {
                    fd: arg(0)?,
                    on: a.get(2).is_some_and(|f| f.contains("FD_CLOEXEC")),
                }
            } else {
                return None;
            }
        }
        "close" => FdOp::Close(arg(0)?),
        "close_range" => {
            let hi = a
                .get(1)
                .and_then(|s| lead_num(s))
                .unwrap_or(i64::from(i32::MAX));
            FdOp::CloseRange {
                lo: arg(0)?,
                hi: hi.min(i64::from(i32::MAX)) as i32,
                cloexec: a.get(2).is_some_and(|f| f.contains("CLOSE_RANGE_CLOEXEC")),
            }
        }
        "fork" | "vfork" | "clone" | "clone3" => FdOp::Fork {
            child: u32::try_from(ret).ok().filter(|&c| c > 0)?,
            shared: args.contains("CLONE_FILES"),
        },
        "execve" | "execveat" => FdOp::Exec,
        "open" | "openat" | "openat2" | "creat" => FdOp::Open {
            fd: ret as i32,
            path: first_string(args)?,
            cloexec: args.contains("O_CLOEXEC"),
        },
        _ if other_fd(name) => FdOp::Other(ret as i32),
        _ => return None,
    })
}
