/*
 * A round trip between two processes pinned to two CPUs (or one), each side
 * waiting as `ipcperf latency MECH --wait WAIT` waits, in C: the floor under
 * each of ipcperf's waits (bench/wait-floor.sh).
 *
 *   wait-rtt MECH WAIT CPU_A CPU_B COUNT [SIZE]
 *       MECH  pipe (two pipes), unix (a stream socketpair), tcp (loopback,
 *             127.0.0.1, Nagle left on as ipcperf leaves it), udp (two
 *             datagram sockets on 127.0.0.1, each connected to the other:
 *             a message is one datagram, an 8-byte sequence number then the
 *             SIZE bytes, in writev(2) and readv(2), as ipcperf sends it to
 *             count lost, doubled and reordered datagrams)
 *       WAIT  block  blocking read and write
 *             poll   non-blocking; poll(2) for input, then read (an event
 *                    loop's order); a write that would block polls for room
 *             epoll  as poll, in epoll_wait(2) on a level-triggered instance
 *                    per direction made before the loop
 *             busy   non-blocking; read and write retried at once
 *             try-poll, try-epoll  the read first, the wait (poll or
 *                    epoll) only when it would block, then the read again
 *                    (libpq and pgbench, a PostgreSQL backend)
 *   prints the median round trip in ns
 *
 * The server's own work between a request and its answer (a real server's
 * parse and plan; bench/validate/server-work.sh): WORK_NS=N spins N ns on
 * the clock, TOUCH=B first writes a byte in every 64 of a B-byte buffer of
 * its own (evicting the transport's code and data from the caches, as a
 * server's work does). Both 0 (none) unless set.
 *
 * SERIES=N (unset: 1) splits the timed round trips after the warm-up into N
 * series of equal length on the one connection, as `ipcperf latency -r N`
 * times its series, and prints each series' median, one a line
 * (bench/wait-spread.sh judges their spread).
 *
 * SIZE-byte messages (64 unless given), each read until the whole message
 * came (a datagram comes whole); a wait that finds nothing in 5 s (a lost
 * datagram) ends the program with status 3; each round trip timed with clock_gettime(CLOCK_MONOTONIC) into an
 * array allocated before the loop; the first tenth is a warm-up, left out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { BLOCK, POLL, EPOLL, BUSY, TRYPOLL, TRYEPOLL };
static int mode;

static long long now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof s, &s) != 0) {
        perror("sched_setaffinity");
        exit(1);
    }
}

static int cmp(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* One end: its descriptor and, for epoll, an instance per direction; a
 * datagram end's sequence numbers (sent, last received). */
struct end {
    int fd, ep_in, ep_out, dgram;
    unsigned long long seq, got;
};

static void ready(struct end *e, int out)
{
    if (mode == EPOLL || mode == TRYEPOLL) {
        struct epoll_event ev;
        if (epoll_wait(out ? e->ep_out : e->ep_in, &ev, 1, 5000) != 1) {
            exit(3);
        }
    } else {
        struct pollfd p = {e->fd, out ? POLLOUT : POLLIN, 0};
        if (poll(&p, 1, 5000) != 1) {
            exit(3);
        }
    }
}

static void put(struct end *e, const char *buf, int n)
{
    int done = 0;
    while (done < n) {
        int r;
        if (e->dgram) {
            /* header and message in one datagram */
            struct iovec v[2] = {{&e->seq, 8}, {(void *)buf, n}};
            r = writev(e->fd, v, 2);
            if (r == n + 8) {
                e->seq++;
                return;
            }
        } else {
            r = write(e->fd, buf + done, n - done);
        }
        if (r > 0) {
            done += r;
        } else if (r < 0 && errno == EAGAIN) {
            if (mode != BUSY) {
                ready(e, 1);
            }
        } else {
            exit(2);
        }
    }
}

/* Returns 0 when the other side has closed. */
static int get(struct end *e, char *buf, int n)
{
    int done = 0;
    while (done < n) {
        if (mode == POLL || mode == EPOLL) {
            ready(e, 0);
        }
        int r;
        if (e->dgram) {
            unsigned long long hdr;
            struct iovec v[2] = {{&hdr, 8}, {buf, n}};
            r = readv(e->fd, v, 2);
            if (r == n + 8) {
                e->got = hdr; /* what ipcperf notes to count losses */
                return 1;
            }
            if (r > 0) {
                exit(2); /* a datagram of another size */
            }
        } else {
            r = read(e->fd, buf + done, n - done);
        }
        if (r > 0) {
            done += r;
        } else if (r == 0) {
            return 0;
        } else if (errno != EAGAIN || mode == BLOCK) {
            /* BLOCK: EAGAIN is SO_RCVTIMEO's 5 s (udp): nothing came */
            exit(errno == EAGAIN ? 3 : 2);
        } else if (mode == TRYPOLL || mode == TRYEPOLL) {
            ready(e, 0); /* nothing yet: now wait, then read again */
        }
    }
    return 1;
}

static int dgram;

static void make_end(struct end *e, int fd)
{
    e->fd = fd;
    e->dgram = dgram;
    e->seq = e->got = 0;
    e->ep_in = e->ep_out = -1;
    if (mode != BLOCK) {
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    if (mode == EPOLL || mode == TRYEPOLL) {
        struct epoll_event in = {.events = EPOLLIN}, out = {.events = EPOLLOUT};
        e->ep_in = epoll_create1(0);
        e->ep_out = epoll_create1(0);
        if (epoll_ctl(e->ep_in, EPOLL_CTL_ADD, fd, &in) || epoll_ctl(e->ep_out, EPOLL_CTL_ADD, fd, &out)) {
            perror("epoll_ctl");
            exit(1);
        }
    }
}

/* A connected TCP pair over 127.0.0.1. */
static void tcp_pair(int sv[2])
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) || listen(l, 1) ||
        getsockname(l, (struct sockaddr *)&a, &len)) {
        perror("listen");
        exit(1);
    }
    sv[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(sv[0], (struct sockaddr *)&a, sizeof a)) {
        perror("connect");
        exit(1);
    }
    sv[1] = accept(l, NULL, NULL);
    close(l);
}

/* Two datagram sockets on 127.0.0.1, each connected to the other; a blocking
 * read gives up after 5 s (a lost datagram must not hang the floor). */
static void udp_pair(int sv[2])
{
    struct sockaddr_in a[2];
    struct timeval five = {.tv_sec = 5};
    for (int i = 0; i < 2; i++) {
        socklen_t len = sizeof a[i];
        memset(&a[i], 0, sizeof a[i]);
        a[i].sin_family = AF_INET;
        a[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sv[i] = socket(AF_INET, SOCK_DGRAM, 0);
        if (sv[i] < 0 || bind(sv[i], (struct sockaddr *)&a[i], sizeof a[i]) ||
            getsockname(sv[i], (struct sockaddr *)&a[i], &len) ||
            setsockopt(sv[i], SOL_SOCKET, SO_RCVTIMEO, &five, sizeof five)) {
            perror("udp");
            exit(1);
        }
    }
    if (connect(sv[0], (struct sockaddr *)&a[1], sizeof a[1]) ||
        connect(sv[1], (struct sockaddr *)&a[0], sizeof a[0])) {
        perror("connect");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc < 6 || argc > 7) {
        fprintf(stderr, "usage: wait-rtt pipe|unix|tcp|udp block|poll|epoll|busy|try-poll|try-epoll CPU_A CPU_B COUNT [SIZE]\n");
        return 2;
    }
    const char *mech = argv[1], *w = argv[2];
    mode = !strcmp(w, "block") ? BLOCK : !strcmp(w, "poll") ? POLL : !strcmp(w, "epoll") ? EPOLL
         : !strcmp(w, "busy") ? BUSY : !strcmp(w, "try-poll") ? TRYPOLL
         : !strcmp(w, "try-epoll") ? TRYEPOLL : -1;
    int a = atoi(argv[3]), b = atoi(argv[4]);
    long n = atol(argv[5]);
    int size = argc > 6 ? atoi(argv[6]) : 64;
    static char buf[65536];
    if (mode < 0 || n < 10 || n > 100000000 || size < 1 || size > (int)sizeof buf) {
        return 2;
    }
    /* client tx/rx, server rx/tx */
    int c_tx, c_rx, s_rx, s_tx;
    if (!strcmp(mech, "pipe")) {
        int there[2], back[2];
        if (pipe(there) || pipe(back)) {
            return 1;
        }
        c_tx = there[1], s_rx = there[0], s_tx = back[1], c_rx = back[0];
    } else if (!strcmp(mech, "unix") || !strcmp(mech, "tcp") || !strcmp(mech, "udp")) {
        int sv[2];
        if (!strcmp(mech, "unix")) {
            if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
                return 1;
            }
        } else if (!strcmp(mech, "tcp")) {
            tcp_pair(sv);
        } else {
            if (size > 65507 - 8) {
                return 2;
            }
            udp_pair(sv);
            dgram = 1;
        }
        c_tx = c_rx = sv[0];
        s_rx = s_tx = sv[1];
    } else {
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    pid_t child = fork();
    if (child == 0) {
        pin(b);
        if (c_tx != s_rx) {
            close(c_tx);
            close(c_rx);
        } else {
            close(c_tx);
        }
        struct end rx, tx;
        make_end(&rx, s_rx);
        if (s_tx == s_rx) {
            tx = rx;
        } else {
            make_end(&tx, s_tx);
        }
        /* Every message answered; a datagram socket is never closed under it. */
        long work_ns = getenv("WORK_NS") ? atol(getenv("WORK_NS")) : 0;
        long touch = getenv("TOUCH") ? atol(getenv("TOUCH")) : 0;
        volatile char *mem = touch > 0 ? calloc(1, touch) : NULL;
        for (long i = 0; i < n && get(&rx, buf, size); i++) {
            for (long k = 0; mem && k < touch; k += 64) {
                mem[k]++;
            }
            for (long long t0 = work_ns > 0 ? now() : 0; work_ns > 0 && now() - t0 < work_ns;) {
            }
            put(&tx, buf, size);
        }
        return 0;
    }
    pin(a);
    if (c_tx != s_rx) {
        close(s_rx);
        close(s_tx);
    } else {
        close(s_rx);
    }
    struct end rx, tx;
    make_end(&tx, c_tx);
    if (c_rx == c_tx) {
        rx = tx;
    } else {
        make_end(&rx, c_rx);
    }
    long long *t = malloc(sizeof *t * n);
    if (!t) {
        return 1;
    }
    memset(buf, 'x', size);
    for (long i = 0; i < n; i++) {
        long long t0 = now();
        put(&tx, buf, size);
        if (!get(&rx, buf, size)) {
            return 2;
        }
        t[i] = now() - t0;
    }
    close(c_tx);
    if (c_rx != c_tx) {
        close(c_rx);
    }
    waitpid(child, NULL, 0);
    long skip = n / 10;
    long series = getenv("SERIES") ? atol(getenv("SERIES")) : 1;
    if (series < 1 || series > (n - skip) / 10) {
        series = 1;
    }
    long len = (n - skip) / series;
    for (long k = 0; k < series; k++) {
        long long *s = t + skip + k * len;
        qsort(s, len, sizeof *s, cmp);
        printf("%lld\n", s[len / 2]);
    }
    return 0;
}
