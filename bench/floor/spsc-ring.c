/*
 * A minimal single-producer single-consumer byte ring in C, spin-waiting, two
 * threads on CPUs 0 and 1: a floor for `ipcperf run shm --wake spin --mode threads`.
 * It also times memcpy of one block in one thread on CPU 0, and prints both
 * figures and their ratio, measured in one run:
 *
 *   spsc-ring BLOCKS [BS [CAPACITY]]    (defaults: 64 KiB blocks, 1 MiB ring)
 *
 * Same protocol as ipcperf's ring: head and tail only grow, each on its own
 * 128-byte line, acquire/release; the producer copies a block in (at most two
 * pieces at the wrap), the consumer copies it out into its own buffer.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *ring;
static unsigned long cap, bs;
static long blocks;
static _Alignas(128) _Atomic unsigned long head;
static _Alignas(128) _Atomic unsigned long tail;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *consumer(void *arg)
{
    (void)arg;
    pin(1);
    char *dst = aligned_alloc(4096, bs);
    unsigned long t = 0, total = (unsigned long)blocks * bs;
    while (t < total) {
        unsigned long h;
        while ((h = atomic_load_explicit(&head, memory_order_acquire)) == t)
            __builtin_ia32_pause();
        unsigned long at = t & (cap - 1), n = h - t;
        if (n > cap - at)
            n = cap - at;
        if (n > bs)
            n = bs;
        memcpy(dst, ring + at, n);
        t += n;
        atomic_store_explicit(&tail, t, memory_order_release);
    }
    free(dst);
    return NULL;
}

int main(int argc, char **argv)
{
    blocks = argc > 1 ? atol(argv[1]) : 100000;
    bs = argc > 2 ? strtoul(argv[2], NULL, 0) : 65536;
    cap = argc > 3 ? strtoul(argv[3], NULL, 0) : 1 << 20;
    if (blocks <= 0 || bs == 0 || cap < bs || (cap & (cap - 1))) {
        fprintf(stderr, "usage: spsc-ring BLOCKS [BS [CAPACITY, a power of two >= BS]]\n");
        return 2;
    }
    char *src = aligned_alloc(4096, bs), *dst = aligned_alloc(4096, bs);
    ring = aligned_alloc(4096, cap);
    memset(src, 1, bs);
    memset(dst, 0, bs);
    memset(ring, 0, cap);

    pin(0);
    double t0 = now();
    for (long i = 0; i < blocks; i++) {
        memcpy(dst, src, bs);
        __asm__ volatile("" : : "r"(dst) : "memory");
    }
    double copy = (double)blocks * bs / (now() - t0);

    pthread_t th;
    pthread_create(&th, NULL, consumer, NULL);
    t0 = now();
    unsigned long h = 0;
    for (long i = 0; i < blocks; i++)
        for (unsigned long off = 0; off < bs;) {
            unsigned long t;
            while (cap - (h - (t = atomic_load_explicit(&tail, memory_order_acquire))) == 0)
                __builtin_ia32_pause();
            unsigned long at = h & (cap - 1), n = bs - off, free_ = cap - (h - t);
            if (n > free_)
                n = free_;
            if (n > cap - at)
                n = cap - at;
            memcpy(ring + at, src + off, n);
            h += n;
            off += n;
            atomic_store_explicit(&head, h, memory_order_release);
        }
    pthread_join(th, NULL);
    double rg = (double)blocks * bs / (now() - t0);
    printf("memcpy %.0f ring %.0f ratio %.3f\n", copy, rg, rg / copy);
    return 0;
}
