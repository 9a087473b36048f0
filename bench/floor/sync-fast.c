/* The floors of request/release: one thread taking and giving back an uncontended
 * primitive N times, timed once around the loop, as `ipcperf sync` times it.
 * Prints ns per cycle for: an empty loop, the atomic pair (a compare-exchange and a
 * swap on one word: two atomic read-modify-writes), a futex lock's fast path (the
 * same two, with the syscall paths that never run here), a POSIX semaphore in
 * shared memory (sem_wait/sem_post) and a process-shared robust pthread mutex.
 *
 *   cc -O2 -pthread -o sync-fast bench/floor/sync-fast.c && ./sync-fast CYCLES CPU
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static _Atomic unsigned *word;

static inline void futex_lock(void) {
    unsigned z = 0;
    if (atomic_compare_exchange_strong_explicit(word, &z, 1, memory_order_acquire, memory_order_relaxed)) return;
    while (atomic_exchange_explicit(word, 2, memory_order_acquire) != 0)
        syscall(SYS_futex, word, FUTEX_WAIT, 2, NULL, NULL, 0);
}
static inline void futex_unlock(void) {
    if (atomic_exchange_explicit(word, 0, memory_order_release) == 2)
        syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: sync-fast CYCLES CPU\n"); return 2; }
    long n = atol(argv[1]);
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(atoi(argv[2]), &s);
    sched_setaffinity(0, sizeof s, &s);
    char *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    word = (_Atomic unsigned *)mem;
    sem_t *sem = (sem_t *)(mem + 64);
    sem_init(sem, 1, 1);
    pthread_mutex_t *mx = (pthread_mutex_t *)(mem + 256);
    pthread_mutexattr_t at;
    pthread_mutexattr_init(&at);
    pthread_mutexattr_setpshared(&at, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&at, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(mx, &at);
    _Atomic unsigned pair = 0;
    long long t;
    double empty, atomic_pair, futex, semr, mutex;
    for (int round = 0; round < 2; round++) { /* the first round warms up */
        t = now();
        for (long i = 0; i < n; i++) __asm__ volatile("" ::: "memory");
        empty = (double)(now() - t) / n;
        t = now();
        for (long i = 0; i < n; i++) {
            unsigned z = 0;
            atomic_compare_exchange_strong_explicit(&pair, &z, 1, memory_order_acquire, memory_order_relaxed);
            atomic_exchange_explicit(&pair, 0, memory_order_release);
        }
        atomic_pair = (double)(now() - t) / n;
        t = now();
        for (long i = 0; i < n; i++) { futex_lock(); futex_unlock(); }
        futex = (double)(now() - t) / n;
        t = now();
        for (long i = 0; i < n; i++) { sem_wait(sem); sem_post(sem); }
        semr = (double)(now() - t) / n;
        t = now();
        for (long i = 0; i < n; i++) { pthread_mutex_lock(mx); pthread_mutex_unlock(mx); }
        mutex = (double)(now() - t) / n;
    }
    printf("empty %.2f\natomic-pair %.2f\nfutex %.2f\nposix-sem %.2f\nmutex %.2f\n",
           empty, atomic_pair, futex, semr, mutex);
    return 0;
}
