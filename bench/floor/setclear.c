/* The floors of set/clear: a token to another process and back through each
 * primitive, untimed waits, the same calls `ipcperf sync --untimed` makes, timed
 * once around N cycles. Prints ns per cycle.
 *
 *   cc -O2 -pthread -o setclear bench/floor/setclear.c
 *   ./setclear PRIMITIVE CYCLES CPU_A CPU_B
 *   PRIMITIVE: sysv-sem (give with one semop, take with another), posix-sem (two
 *   sem_t in shared memory), futex (a flag word each way: set and FUTEX_WAKE; swap
 *   and FUTEX_WAIT), eventfd (EFD_SEMAPHORE: write; poll, then read), pipe (a byte
 *   each way over two pipes).
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    sched_setaffinity(0, sizeof s, &s);
}
static long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int kind, semid, efd[2], p_ab[2], p_ba[2];
static sem_t *sems;
static _Atomic uint32_t *flags;

/* Give the token to side `to` (0 = A, 1 = B). */
static void give(int to) {
    switch (kind) {
    case 0: { struct sembuf b = {(unsigned short)to, 1, 0}; semop(semid, &b, 1); break; }
    case 1: sem_post(&sems[to]); break;
    case 2:
        atomic_store_explicit(&flags[to * 16], 1, memory_order_release);
        syscall(SYS_futex, &flags[to * 16], FUTEX_WAKE, 1, NULL, NULL, 0);
        break;
    case 3: { uint64_t one = 1; if (write(efd[to], &one, 8) != 8) _exit(1); break; }
    case 4: { char c = 0; if (write(to ? p_ab[1] : p_ba[1], &c, 1) != 1) _exit(1); break; }
    }
}
/* Wait for a token as side `me`. */
static void take(int me) {
    switch (kind) {
    case 0: { struct sembuf b = {(unsigned short)me, -1, 0}; if (semop(semid, &b, 1) < 0) _exit(0); break; }
    case 1: while (sem_wait(&sems[me]) != 0) {} break;
    case 2:
        while (atomic_exchange_explicit(&flags[me * 16], 0, memory_order_acquire) != 1)
            syscall(SYS_futex, &flags[me * 16], FUTEX_WAIT, 0, NULL, NULL, 0);
        break;
    case 3: {
        struct pollfd p = {efd[me], POLLIN, 0};
        uint64_t v;
        for (;;) { poll(&p, 1, -1); if (read(efd[me], &v, 8) == 8) break; }
        break;
    }
    case 4: { char c; if (read(me ? p_ab[0] : p_ba[0], &c, 1) != 1) _exit(0); break; }
    }
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: setclear PRIMITIVE CYCLES CPU_A CPU_B\n"); return 2; }
    const char *names[] = {"sysv-sem", "posix-sem", "futex", "eventfd", "pipe"};
    kind = -1;
    for (int i = 0; i < 5; i++) if (!strcmp(argv[1], names[i])) kind = i;
    if (kind < 0) { fprintf(stderr, "unknown primitive %s\n", argv[1]); return 2; }
    long n = atol(argv[2]);
    char *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    sems = (sem_t *)mem;
    flags = (_Atomic uint32_t *)(mem + 1024);
    switch (kind) {
    case 0: semid = semget(IPC_PRIVATE, 2, IPC_CREAT | 0600); semctl(semid, 0, SETVAL, 0); semctl(semid, 1, SETVAL, 0); break;
    case 1: sem_init(&sems[0], 1, 0); sem_init(&sems[1], 1, 0); break;
    case 3: efd[0] = eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK); efd[1] = eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK); break;
    case 4: if (pipe(p_ab) || pipe(p_ba)) return 1; break;
    }
    pid_t child = fork();
    if (child == 0) {
        pin(atoi(argv[4]));
        for (;;) { take(1); give(0); }
    }
    pin(atoi(argv[3]));
    for (long i = 0; i < n / 10; i++) { give(1); take(0); }
    long long t0 = now();
    for (long i = 0; i < n; i++) { give(1); take(0); }
    long long t1 = now();
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    if (kind == 0) semctl(semid, 0, IPC_RMID);
    printf("%.1f\n", (double)(t1 - t0) / n);
    return 0;
}
