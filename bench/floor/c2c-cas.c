/* The floor of `ipcperf topology --measure`: a cache-line ping-pong between two
 * pinned threads (core-to-core-latency's compare-and-swap method), the flag
 * alone on a 128-byte-aligned line allocated by the ping thread after it is
 * pinned. Prints the median one-way latency (half a round trip) over SAMPLES
 * samples of ROUNDS round trips, after one warm-up sample.
 *   cc -O2 -pthread -o c2c-cas c2c-cas.c && ./c2c-cas PING PONG [ROUNDS SAMPLES] */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int ping_cpu, pong_cpu, rounds = 1000, samples = 200;
static _Atomic(_Atomic int *) line_ptr;
static atomic_int done;

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (pthread_setaffinity_np(pthread_self(), sizeof s, &s)) { perror("pin"); exit(1); }
}
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
static void *pong(void *arg) {
    (void)arg;
    pin(pong_cpu);
    _Atomic int *f;
    while (!(f = atomic_load(&line_ptr))) {}
    for (;;) {
        int want = 0;
        unsigned tries = 0;
        while (!atomic_compare_exchange_strong_explicit(f, &want, 1, memory_order_relaxed, memory_order_relaxed)) {
            /* The end is looked at every 65,536 failed tries, as ipcperf does. */
            if ((++tries & 0xffff) == 0 && atomic_load_explicit(&done, memory_order_relaxed)) return 0;
            want = 0;
        }
    }
}
static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s PING PONG [ROUNDS SAMPLES]\n", argv[0]); return 2; }
    ping_cpu = atoi(argv[1]); pong_cpu = atoi(argv[2]);
    if (argc > 4) { rounds = atoi(argv[3]); samples = atoi(argv[4]); }
    pthread_t t;
    pthread_create(&t, 0, pong, 0);
    pin(ping_cpu);
    _Atomic int *f = aligned_alloc(128, 128);
    atomic_store(f, 0);
    atomic_store(&line_ptr, f);
    double *v = malloc(sizeof(double) * (samples + 1));
    for (int s = 0; s <= samples; s++) {
        double t0 = now();
        for (int i = 0; i < rounds; i++) {
            int want = 1;
            while (!atomic_compare_exchange_strong_explicit(f, &want, 0, memory_order_relaxed, memory_order_relaxed)) want = 1;
        }
        v[s] = (now() - t0) / rounds / 2.0;
    }
    atomic_store(&done, 1);
    pthread_join(t, 0);
    qsort(v + 1, samples, sizeof(double), cmp);
    printf("%d,%d,%.2f\n", ping_cpu, pong_cpu, v[1 + samples / 2]);
    return 0;
}
