/*
 * The floor of a shared-memory round trip between two pinned processes: a
 * cache-line ping-pong carrying a payload, spin-waiting, with nothing else.
 * A floor for `ipcperf latency shm --wake spin --mode processes --pin A,B`.
 *
 *   shm-rtt SIZE [COUNT [CPU_A [CPU_B]]]     (defaults: 100000 round trips, CPUs 0, 1)
 *
 * Per direction, one slot in a shared anonymous mapping: a sequence word, then the
 * payload, laid out two ways, each timed: `inline`, the payload right after the
 * word in the same cache line (one line moves for a small message), and `apart`,
 * the words on lines of their own and the payloads page-aligned elsewhere (the
 * spinning reader does not pull the line the writer is filling, and copies run
 * aligned); and each again with the slot moving on through 1 MiB
 * from one message to the next, as a ring's bytes do (`-ring`). The floor is the
 * fastest of the four. Side A fills its buffer
 * (every byte, as ipcperf's `touch` does), reads the clock, copies the buffer into
 * the slot, publishes the sequence number, spins until B's answer carries it, copies
 * the answer out, reads the clock and sums the answer (every byte read). Side B
 * waits for each message, copies it out, sums it, copies it into its own slot and
 * publishes. Prints the median and the 99th percentile round trip in ns of each
 * layout and the best median, clock cost included (ipcperf subtracts its tare:
 * add it back to compare):
 *
 *   inline p50 N p99 N apart p50 N p99 N inline-ring p50 N ... best N
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + t.tv_nsec;
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

/* Read every byte as ipcperf does: a sum over 8-byte words, then the rest. */
static uint64_t sum(const unsigned char *b, size_t n)
{
    uint64_t s = 0, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, b + i, 8);
        s += w;
    }
    for (; i < n; i++)
        s += b[i];
    return s;
}

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

struct result {
    uint64_t p50, p99;
};

/* One layout. `inline`: each slot is the sequence word, then the payload (8 bytes
 * in). `apart`: the words in their own lines, the payloads page-aligned in an area
 * of their own. With `rotate`, message i uses the i-th of the slots that fill
 * 1 MiB (as a ring's bytes move on), so a writer seldom writes a line the reader
 * has just read; without it, one slot per direction. */
static struct result run(size_t size, long count, int cpu_a, int cpu_b, int apart,
                         int rotate)
{
    size_t dlen = apart ? (size + 63) & ~(size_t)63 : (8 + size + 63) & ~(size_t)63;
    size_t nslots = rotate && dlen < (1u << 20) ? (1u << 20) / dlen : 1;
    size_t seq_area = apart ? (nslots * 64 + 4095) & ~(size_t)4095 : 0;
    size_t dir_len = (seq_area + nslots * dlen + 4095) & ~(size_t)4095;
    unsigned char *mem = mmap(NULL, 2 * dir_len, PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
#define SEQ(base, i)                                                                   \
    ((_Atomic uint64_t *)((base) + (apart ? ((i) % nslots) * 64 : ((i) % nslots) * dlen)))
#define DATA(base, i) ((base) + seq_area + ((i) % nslots) * dlen + (apart ? 0 : 8))
    unsigned char *abm = mem, *bam = mem + dir_len;
    size_t blen = (size + 4095) & ~(size_t)4095;
    unsigned char *buf = aligned_alloc(4096, blen), *rbuf = aligned_alloc(4096, blen);
    uint64_t *samples = malloc(sizeof *samples * count);
    volatile uint64_t sink = 0;
    long warm = count / 10 + 1000;

    pid_t b = fork();
    if (b == 0) {
        pin(cpu_b);
        for (uint64_t i = 1; i <= (uint64_t)(warm + count); i++) {
            while (atomic_load_explicit(SEQ(abm, i), memory_order_acquire) != i)
                __builtin_ia32_pause();
            memcpy(buf, DATA(abm, i), size);
            sink += sum(buf, size);
            memcpy(DATA(bam, i), buf, size);
            atomic_store_explicit(SEQ(bam, i), i, memory_order_release);
        }
        _exit(0);
    }
    pin(cpu_a);
    for (uint64_t i = 1; i <= (uint64_t)(warm + count); i++) {
        memset(buf, (int)i, size);
        uint64_t t0 = now_ns();
        memcpy(DATA(abm, i), buf, size);
        atomic_store_explicit(SEQ(abm, i), i, memory_order_release);
        while (atomic_load_explicit(SEQ(bam, i), memory_order_acquire) != i)
            __builtin_ia32_pause();
        memcpy(rbuf, DATA(bam, i), size);
        uint64_t t1 = now_ns();
        sink += sum(rbuf, size);
        if (i > (uint64_t)warm)
            samples[i - warm - 1] = t1 - t0;
    }
    waitpid(b, NULL, 0);
    qsort(samples, count, sizeof *samples, cmp);
    struct result r = {samples[count / 2], samples[count * 99 / 100]};
    free(samples);
    free(buf);
    free(rbuf);
    munmap(mem, 2 * dir_len);
    return r;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: shm-rtt SIZE [COUNT [CPU_A [CPU_B]]]\n");
        return 2;
    }
    size_t size = strtoul(argv[1], NULL, 0);
    long count = argc > 2 ? atol(argv[2]) : 100000;
    int cpu_a = argc > 3 ? atoi(argv[3]) : 0, cpu_b = argc > 4 ? atoi(argv[4]) : 1;
    if (size == 0 || count <= 0) {
        fprintf(stderr, "shm-rtt: SIZE and COUNT must be positive\n");
        return 2;
    }
    static const char *names[] = {"inline", "apart", "inline-ring", "apart-ring"};
    uint64_t best = UINT64_MAX;
    for (int k = 0; k < 4; k++) {
        struct result r = run(size, count, cpu_a, cpu_b, k % 2, k / 2);
        printf("%s p50 %llu p99 %llu ", names[k], (unsigned long long)r.p50,
               (unsigned long long)r.p99);
        if (r.p50 < best)
            best = r.p50;
    }
    printf("best %llu\n", (unsigned long long)best);
    return 0;
}
