/* The floor of set/clear through a SysV semaphore set, in lmbench's lat_sem form:
 * two semaphores, each side one semop a turn that takes its own and gives the
 * other's together, untimed (plain semop). Prints ns per cycle: one token to the
 * other process and back (lat_sem itself prints half of that, per semop).
 *
 *   cc -O2 -o lat-sem bench/floor/lat-sem.c && ./lat-sem CYCLES CPU_A CPU_B
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof s, &s) != 0) { perror("sched_setaffinity"); exit(1); }
}

static long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: lat-sem CYCLES CPU_A CPU_B\n"); return 2; }
    long n = atol(argv[1]);
    int a = atoi(argv[2]), b = atoi(argv[3]);
    int id = semget(IPC_PRIVATE, 2, IPC_CREAT | IPC_EXCL | 0600);
    if (id < 0) { perror("semget"); return 1; }
    semctl(id, 0, SETVAL, 0);
    semctl(id, 1, SETVAL, 0);
    pid_t child = fork();
    if (child == 0) {
        pin(b);
        struct sembuf first = {1, 1, 0};
        if (semop(id, &first, 1) < 0) _exit(1);
        struct sembuf op[2] = {{0, -1, 0}, {1, 1, 0}};
        for (;;) if (semop(id, op, 2) < 0) _exit(0);
    }
    pin(a);
    struct sembuf op[2] = {{1, -1, 0}, {0, 1, 0}};
    /* A warm-up of a tenth, then the timed cycles. */
    for (long i = 0; i < n / 10; i++) if (semop(id, op, 2) < 0) { perror("semop"); break; }
    long long t0 = now();
    for (long i = 0; i < n; i++) if (semop(id, op, 2) < 0) { perror("semop"); break; }
    long long t1 = now();
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    semctl(id, 0, IPC_RMID);
    printf("%.1f\n", (double)(t1 - t0) / n);
    return 0;
}
