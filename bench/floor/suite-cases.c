/*
 * The default suite's pipe, memcpy and null cases as bare C loops: the floor beside
 * `ipcperf run` in bench/verdicts/floor.sh, which asks whether a case's
 * run-to-run spread (what limits compare's verdicts, issue 55) is ipcperf's or
 * the machine's.
 *
 *   suite-cases pipe BS BLOCKS SERIES WCPU RCPU
 *       a writer process pinned to WCPU writes BLOCKS blocks of BS bytes (each
 *       filled with its block number, as ipcperf's `touch`) into a pipe; a
 *       reader process pinned to RCPU reads them and sums every 8-byte word.
 *       A series runs from the writer's first write to the reader's last byte
 *       (the reader answers on a second pipe); SERIES series in one pair of
 *       processes, as ipcperf's processes mode does.
 *   suite-cases memcpy BS BLOCKS SERIES CPU
 *       one thread pinned to CPU copies a BS-byte block into another BLOCKS
 *       times per series (the source filled once, the copy summed once).
 *   suite-cases null BS BLOCKS SERIES CPU
 *       one thread pinned to CPU fills a BS-byte block and writes it to
 *       /dev/null, BLOCKS times per series (ipcperf's `null`: a writer's ceiling).
 *   a last word, same (the default), rebuf or fresh: every series in the same
 *       processes and buffers; in the same processes, each in new buffers; or
 *       each in new processes (and a new pipe) with new buffers
 *       (bench/verdicts/fresh.sh: which of them a case's run-to-run spread
 *       follows).
 *
 * Prints each series' bytes per second on one line, space-separated.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void full(int fd, char *buf, long n, int writing)
{
    long done = 0;
    while (done < n) {
        long r = writing ? write(fd, buf + done, n - done) : read(fd, buf + done, n - done);
        if (r <= 0) {
            perror(writing ? "write" : "read");
            exit(1);
        }
        done += r;
    }
}

static uint64_t sum(const char *buf, long n)
{
    uint64_t s = 0, w;
    for (long i = 0; i + 8 <= n; i += 8) {
        memcpy(&w, buf + i, 8);
        s += w;
    }
    return s;
}

static char *block(long bs)
{
    char *b = aligned_alloc(4096, ((bs + 4095) / 4096) * 4096);
    if (!b) {
        perror("aligned_alloc");
        exit(1);
    }
    memset(b, 1, bs);
    return b;
}

/* One writer and one reader process over a new pipe, NSERIES series; with
 * REBUF, each series in buffers of its own (earlier ones kept, so that their
 * pages are not handed back). Rates into RATE. */
static int one_pair(long bs, long blocks, int nseries, int wcpu, int rcpu, int rebuf, double *rate)
{
    int data[2], back[2];
    if (pipe(data) != 0 || pipe(back) != 0) {
        perror("pipe");
        return 1;
    }
    char ack = 0;
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        pin(rcpu);
        close(data[1]);
        close(back[0]);
        char *buf = block(bs);
        volatile uint64_t sink = 0;
        for (int s = 0; s < nseries; s++) {
            if (rebuf && s > 0) {
                buf = block(bs);
            }
            full(back[1], &ack, 1, 1); /* ready */
            for (long i = 0; i < blocks; i++) {
                full(data[0], buf, bs, 0);
                sink += sum(buf, bs);
            }
            full(back[1], &ack, 1, 1); /* all read */
        }
        (void)sink;
        _exit(0);
    }
    close(data[0]);
    close(back[1]);
    pin(wcpu);
    char *buf = block(bs);
    for (int s = 0; s < nseries; s++) {
        if (rebuf && s > 0) {
            buf = block(bs);
        }
        full(back[0], &ack, 1, 0);
        long long t0 = now();
        for (long i = 0; i < blocks; i++) {
            memset(buf, (int)(i & 0xff), bs);
            full(data[1], buf, bs, 1);
        }
        full(back[0], &ack, 1, 0);
        rate[s] = (double)bs * blocks * 1e9 / (double)(now() - t0);
    }
    close(data[1]);
    close(back[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

/* MODE: "same" (one pair, one pair of buffers, every series), "rebuf" (one
 * pair, new buffers each series) or "fresh" (a new pipe, pair and buffers each
 * series). */
static int pipe_case(long bs, long blocks, int series, int wcpu, int rcpu, const char *mode)
{
    double *rate = calloc(series, sizeof *rate);
    int bad = 0;
    if (strcmp(mode, "fresh") == 0) {
        for (int s = 0; s < series && !bad; s++) {
            bad = one_pair(bs, blocks, 1, wcpu, rcpu, 0, rate + s);
        }
    } else {
        bad = one_pair(bs, blocks, series, wcpu, rcpu, strcmp(mode, "rebuf") == 0, rate);
    }
    for (int s = 0; s < series; s++) {
        printf("%s%.0f", s ? " " : "", rate[s]);
    }
    printf("\n");
    return bad;
}

static double copy_series(long bs, long blocks, char *src, char *dst, int s)
{
    volatile uint64_t sink = 0;
    memset(src, s & 0xff, bs);
    long long t0 = now();
    for (long i = 0; i < blocks; i++) {
        memcpy(dst, src, bs);
        __asm__ volatile("" : : "r"(dst) : "memory");
    }
    sink += sum(dst, bs);
    (void)sink;
    return (double)bs * blocks * 1e9 / (double)(now() - t0);
}

/* One series in a new process ("fresh"): what it needs, and its rate back by
 * a pipe. */
struct series_args {
    long bs, blocks;
    int s;
};

static int in_new_process(double (*f)(const struct series_args *), const struct series_args *a,
                          double *rate)
{
    int p[2];
    if (pipe(p) != 0) {
        perror("pipe");
        return 1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        double r = f(a);
        full(p[1], (char *)&r, sizeof r, 1);
        _exit(0);
    }
    full(p[0], (char *)rate, sizeof *rate, 0);
    waitpid(pid, NULL, 0);
    close(p[0]);
    close(p[1]);
    return 0;
}

static double copy_fresh(const struct series_args *a)
{
    return copy_series(a->bs, a->blocks, block(a->bs), block(a->bs), a->s);
}

/* MODE as for pipe_case; "fresh" copies each series in a new process. */
static int memcpy_case(long bs, long blocks, int series, int cpu, const char *mode)
{
    pin(cpu);
    char *src = block(bs), *dst = block(bs);
    for (int s = 0; s < series; s++) {
        double rate;
        if (strcmp(mode, "fresh") == 0) {
            struct series_args a = {bs, blocks, s};
            if (in_new_process(copy_fresh, &a, &rate) != 0) {
                return 1;
            }
        } else {
            if (strcmp(mode, "rebuf") == 0 && s > 0) {
                src = block(bs);
                dst = block(bs);
            }
            rate = copy_series(bs, blocks, src, dst, s);
        }
        printf("%s%.0f", s ? " " : "", rate);
    }
    printf("\n");
    return 0;
}

/* The writer alone into /dev/null, each block filled first ("fresh": each
 * series in a new process). */
static double null_series(long bs, long blocks)
{
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0) {
        perror("/dev/null");
        exit(1);
    }
    char *buf = block(bs);
    long long t0 = now();
    for (long i = 0; i < blocks; i++) {
        memset(buf, (int)(i & 0xff), bs);
        full(fd, buf, bs, 1);
    }
    double rate = (double)bs * blocks * 1e9 / (double)(now() - t0);
    close(fd);
    return rate;
}

static double null_fresh(const struct series_args *a)
{
    return null_series(a->bs, a->blocks);
}

static int null_case(long bs, long blocks, int series, int cpu, const char *mode)
{
    pin(cpu);
    for (int s = 0; s < series; s++) {
        double rate;
        if (strcmp(mode, "fresh") == 0) {
            struct series_args a = {bs, blocks, s};
            if (in_new_process(null_fresh, &a, &rate) != 0) {
                return 1;
            }
        } else {
            rate = null_series(bs, blocks);
        }
        printf("%s%.0f", s ? " " : "", rate);
    }
    printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
    if ((argc == 7 || argc == 8) && strcmp(argv[1], "pipe") == 0) {
        return pipe_case(atol(argv[2]), atol(argv[3]), atoi(argv[4]), atoi(argv[5]),
                         atoi(argv[6]), argc == 8 ? argv[7] : "same");
    }
    if ((argc == 6 || argc == 7) && strcmp(argv[1], "null") == 0) {
        return null_case(atol(argv[2]), atol(argv[3]), atoi(argv[4]), atoi(argv[5]),
                         argc == 7 ? argv[6] : "same");
    }
    if ((argc == 6 || argc == 7) && strcmp(argv[1], "memcpy") == 0) {
        return memcpy_case(atol(argv[2]), atol(argv[3]), atoi(argv[4]), atoi(argv[5]),
                           argc == 7 ? argv[6] : "same");
    }
    fprintf(stderr,
            "usage: suite-cases pipe BS BLOCKS SERIES WCPU RCPU [same|rebuf|fresh]\n"
            "       suite-cases memcpy BS BLOCKS SERIES CPU [same|rebuf|fresh]\n"
            "       suite-cases null BS BLOCKS SERIES CPU [same|fresh]\n");
    return 2;
}
