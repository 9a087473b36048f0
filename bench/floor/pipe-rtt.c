/*
 * A pipe round trip between two processes pinned to two CPUs, in C: the floor
 * under `ipcperf latency pipe --pin A,B`, and, run under `perf record` with the
 * scheduler's and the system calls' tracepoints, what tracing those events
 * costs a round trip whatever the program (bench/explain-floor.sh).
 *
 *   pipe-rtt CPU_A CPU_B COUNT [SIZE [median|mean]]
 *                                  prints the median (or the mean) round trip in ns
 *
 * SIZE-byte messages (64 unless given; perf bench sched pipe sends 4) over two
 * pipes; each round trip timed with clock_gettime(CLOCK_MONOTONIC) into an
 * array allocated before the loop; the first tenth is a warm-up and left out.
 */
#define _GNU_SOURCE
#include <sched.h>
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
    if (argc < 4 || argc > 6) {
        fprintf(stderr, "usage: pipe-rtt CPU_A CPU_B COUNT [SIZE [median|mean]]\n");
        return 2;
    }
    int a = atoi(argv[1]), b = atoi(argv[2]);
    long n = atol(argv[3]);
    int size = argc > 4 ? atoi(argv[4]) : 64;
    int mean = argc > 5 && strcmp(argv[5], "mean") == 0;
    int there[2], back[2];
    static char buf[4096];
    if (n < 10 || n > 100000000 || size < 1 || size > (int)sizeof buf || pipe(there) ||
        pipe(back)) {
        return 2;
    }
    pid_t child = fork();
    if (child == 0) {
        pin(b);
        close(there[1]);
        close(back[0]);
        for (;;) {
            full(there[0], buf, size, 0);
            full(back[1], buf, size, 1);
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
        full(there[1], buf, size, 1);
        full(back[0], buf, size, 0);
        t[i] = now() - s;
    }
    close(there[1]);
    waitpid(child, NULL, 0);
    long skip = n / 10;
    if (mean) {
        long long sum = 0;
        for (long i = skip; i < n; i++) {
            sum += t[i];
        }
        printf("%.1f\n", (double)sum / (n - skip));
        return 0;
    }
    qsort(t + skip, n - skip, sizeof *t, cmp);
    printf("%lld\n", t[skip + (n - skip) / 2]);
    return 0;
}
