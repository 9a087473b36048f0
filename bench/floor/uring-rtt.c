/*
 * A round trip between two processes pinned to two CPUs (or one), each read and
 * write an io_uring submission waited for as a completion, in C with liburing:
 * the floor under `ipcperf latency MECH --wait uring` (the uring-pipe,
 * uring-unix and uring-tcp mechanisms), timed beside it by bench/wait-floor.sh.
 *
 *   uring-rtt MECH CPU_A CPU_B COUNT [SIZE]
 *       MECH  pipe (two pipes), unix (a stream socketpair), tcp (loopback)
 *   prints the median round trip in ns
 *
 * As ipcperf's ends: a ring of 8 entries per end (single issuer and deferred
 * task work where the kernel has them), the end's descriptor registered,
 * each call one read or write at offset -1 submitted and waited for with a
 * 5 s timeout (io_uring_submit_and_wait_timeout), a short one resubmitted for
 * the rest. Each round trip timed with clock_gettime(CLOCK_MONOTONIC) into an
 * array allocated before the loop; the first tenth is a warm-up, left out.
 * Build: cc -O2 -o uring-rtt uring-rtt.c -luring
 */
#define _GNU_SOURCE
#include <liburing.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

struct end {
    struct io_uring ring;
};

static void make_end(struct end *e, int fd)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    if (io_uring_queue_init_params(8, &e->ring, &p) < 0 && io_uring_queue_init(8, &e->ring, 0) < 0) {
        perror("io_uring_queue_init");
        exit(1);
    }
    if (io_uring_register_files(&e->ring, &fd, 1) < 0) {
        perror("io_uring_register_files");
        exit(1);
    }
}

/* One read or write of up to n bytes; returns what the completion says. */
static int once(struct end *e, char *buf, int n, int writing)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&e->ring);
    if (writing) {
        io_uring_prep_write(sqe, 0, buf, n, (__u64)-1);
    } else {
        io_uring_prep_read(sqe, 0, buf, n, (__u64)-1);
    }
    sqe->flags |= IOSQE_FIXED_FILE;
    struct __kernel_timespec ts = {.tv_sec = 5};
    struct io_uring_cqe *cqe;
    if (io_uring_submit_and_wait_timeout(&e->ring, &cqe, 1, &ts, NULL) < 0) {
        exit(3);
    }
    int r = cqe->res;
    io_uring_cqe_seen(&e->ring, cqe);
    return r;
}

static int full(struct end *e, char *buf, int n, int writing)
{
    int done = 0;
    while (done < n) {
        int r = once(e, buf + done, n - done, writing);
        if (r <= 0) {
            return 0;
        }
        done += r;
    }
    return 1;
}

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

int main(int argc, char **argv)
{
    if (argc < 5 || argc > 6) {
        fprintf(stderr, "usage: uring-rtt pipe|unix|tcp CPU_A CPU_B COUNT [SIZE]\n");
        return 2;
    }
    const char *mech = argv[1];
    int a = atoi(argv[2]), b = atoi(argv[3]);
    long n = atol(argv[4]);
    int size = argc > 5 ? atoi(argv[5]) : 64;
    static char buf[65536];
    if (n < 10 || n > 100000000 || size < 1 || size > (int)sizeof buf) {
        return 2;
    }
    int c_tx, c_rx, s_rx, s_tx, two;
    if (!strcmp(mech, "pipe")) {
        int there[2], back[2];
        if (pipe(there) || pipe(back)) {
            return 1;
        }
        c_tx = there[1], s_rx = there[0], s_tx = back[1], c_rx = back[0];
        two = 1;
    } else if (!strcmp(mech, "unix") || !strcmp(mech, "tcp")) {
        int sv[2];
        if (!strcmp(mech, "unix")) {
            if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
                return 1;
            }
        } else {
            tcp_pair(sv);
        }
        c_tx = c_rx = sv[0];
        s_rx = s_tx = sv[1];
        two = 0;
    } else {
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    pid_t child = fork();
    if (child == 0) {
        pin(b);
        close(c_tx);
        if (two) {
            close(c_rx);
        }
        struct end rx, tx;
        make_end(&rx, s_rx);
        if (two) {
            make_end(&tx, s_tx);
        }
        while (full(&rx, buf, size, 0)) {
            if (!full(two ? &tx : &rx, buf, size, 1)) {
                return 2;
            }
        }
        return 0;
    }
    pin(a);
    close(s_rx);
    if (two) {
        close(s_tx);
    }
    struct end tx, rx;
    make_end(&tx, c_tx);
    if (two) {
        make_end(&rx, c_rx);
    }
    long long *t = malloc(sizeof *t * n);
    if (!t) {
        return 1;
    }
    memset(buf, 'x', size);
    for (long i = 0; i < n; i++) {
        long long t0 = now();
        if (!full(&tx, buf, size, 1) || !full(two ? &rx : &tx, buf, size, 0)) {
            return 2;
        }
        t[i] = now() - t0;
    }
    io_uring_queue_exit(&tx.ring);
    if (two) {
        io_uring_queue_exit(&rx.ring);
    }
    close(c_tx);
    if (two) {
        close(c_rx);
    }
    waitpid(child, NULL, 0);
    long skip = n / 10;
    qsort(t + skip, n - skip, sizeof *t, cmp);
    printf("%lld\n", t[skip + (n - skip) / 2]);
    return 0;
}
