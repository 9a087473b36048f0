/*
 * A pipe round trip between two processes pinned to two CPUs, in C: the floor
 * under `ipcperf latency pipe --pin A,B`, and, run under `perf record` with the
 * scheduler's and the system calls' tracepoints, what tracing those events
 * costs a round trip whatever the program (bench/explain-floor.sh).
 *
 *   pipe-rtt CPU_A CPU_B COUNT     prints the median round trip in ns
 *
 * 64-byte messages over two pipes; each round trip timed with
 * clock_gettime(CLOCK_MONOTONIC) into an array allocated before the loop; the
 * first tenth is a warm-up and left out.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
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

static void full(int fd, char *buf, int n, int writing)
{
    int done = 0;
    while (done < n) {
        int r = writing ? write(fd, buf + done, n - done) : read(fd, buf + done, n - done);
        if (r <= 0) {
            exit(writing ? 2 : 0);
        }
        done += r;
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: pipe-rtt CPU_A CPU_B COUNT\n");
        return 2;
    }
    int a = atoi(argv[1]), b = atoi(argv[2]);
    long n = atol(argv[3]);
    int there[2], back[2];
    char buf[64] = {0};
    if (n < 10 || n > 100000000 || pipe(there) || pipe(back)) {
        return 2;
    }
    pid_t child = fork();
    if (child == 0) {
        pin(b);
        close(there[1]);
        close(back[0]);
        for (;;) {
            full(there[0], buf, sizeof buf, 0);
            full(back[1], buf, sizeof buf, 1);
        }
    }
    pin(a);
    close(there[0]);
    close(back[1]);
    long long *t = malloc(n * sizeof *t);
    if (t == NULL) {
        perror("malloc");
        return 1;
    }
    for (long i = 0; i < n; i++) {
        long long s = now();
        full(there[1], buf, sizeof buf, 1);
        full(back[0], buf, sizeof buf, 0);
        t[i] = now() - s;
    }
    close(there[1]);
    waitpid(child, NULL, 0);
    long skip = n / 10;
    qsort(t + skip, n - skip, sizeof *t, cmp);
    printf("%lld\n", t[skip + (n - skip) / 2]);
    return 0;
}
