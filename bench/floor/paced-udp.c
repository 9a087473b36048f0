/*
 * The floor of paced UDP round trips over loopback between two pinned processes:
 * a floor for `ipcperf latency udp --rate R --pin A,B [--busy-poll]`.
 *
 *   paced-udp RATE COUNT SIZE spin|sleep|thread [CPU_A [CPU_B]]   (CPUs default 0, 1)
 *
 * B (a child process on CPU_B) answers every datagram with the same bytes, in a
 * blocking recv/send loop. A (on CPU_A) sends round trip i when it is due, at
 * start + i / RATE, and times it from that due time to the whole answer's
 * arrival (a late send counts: no coordinated omission), the clock read around
 * each, as ipcperf does. `spin`: A spins to each due time and polls a
 * non-blocking socket for the answer (ipcperf --busy-poll); `sleep`: A sleeps
 * until 30 us before each due time (its timer slack at 1 ns, as ipcperf sets
 * it), spins the rest, and blocks in recv for the answer (ipcperf's default);
 * `thread`: sockperf under-load's design, a sender thread spinning to each due
 * time and a receiving thread on the same CPU blocked in recv (each answer
 * wakes it on a CPU the sender keeps busy). Prints the median and the 99th
 * percentile in us:
 *
 *   p50 N p99 N
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof s, &s) != 0) {
        perror("sched_setaffinity");
        exit(1);
    }
}

/* `thread` mode: the receiving thread notes when each answer arrived. */
struct receiver {
    int fd;
    size_t size;
    uint64_t n;
    uint64_t *arrived;
    int failed;
};

static void *receive_all(void *p) {
    struct receiver *r = p;
    char *got = malloc(r->size);
    for (uint64_t i = 0; got && i < r->n; i++) {
        if (recv(r->fd, got, r->size, 0) != (ssize_t)r->size) {
            r->failed = 1;
            break;
        }
        r->arrived[i] = now_ns();
    }
    free(got);
    return 0;
}

static int cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: paced-udp RATE COUNT SIZE spin|sleep [CPU_A [CPU_B]]\n");
        return 2;
    }
    uint64_t rate = strtoull(argv[1], 0, 10), n = strtoull(argv[2], 0, 10);
    size_t size = strtoull(argv[3], 0, 10);
    int spin = strcmp(argv[4], "spin") == 0, threaded = strcmp(argv[4], "thread") == 0;
    spin |= threaded;
    int cpu_a = argc > 5 ? atoi(argv[5]) : 0, cpu_b = argc > 6 ? atoi(argv[6]) : 1;
    if (!rate || !n || !size || size > 65000) return 2;
    uint64_t interval = 1000000000u / rate;

    int sa = socket(AF_INET, SOCK_DGRAM, 0), sb = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct sockaddr_in b = a;
    socklen_t len = sizeof a;
    if (bind(sa, (void *)&a, sizeof a) || bind(sb, (void *)&b, sizeof b) ||
        getsockname(sa, (void *)&a, &len) || getsockname(sb, (void *)&b, &len) ||
        connect(sa, (void *)&b, sizeof b) || connect(sb, (void *)&a, sizeof a)) {
        perror("socket set-up");
        return 1;
    }
    char *buf = malloc(size), *got = malloc(size);
    uint64_t *samples = malloc(n * sizeof *samples);
    if (!buf || !got || !samples) return 1;
    memset(buf, 0x5a, size);

    pid_t child = fork();
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        pin(cpu_b);
        for (;;) {
            ssize_t r = recv(sb, got, size, 0);
            if (r <= 0) _exit(0);
            if (send(sb, got, (size_t)r, 0) != r) _exit(1);
        }
    }
    pin(cpu_a);
    /* A sleeping sender asks for its timers to fire on time, as ipcperf's does
     * (the default slack of 50 us would make every sleep end late). */
    if (!spin && !threaded) prctl(PR_SET_TIMERSLACK, 1UL);
    struct timeval tv = {.tv_sec = 2};
    setsockopt(sa, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    /* A warm-up second's worth (at most 1000), untimed. */
    for (int i = 0; i < 1000 && (uint64_t)i < rate; i++) {
        if (send(sa, buf, size, 0) != (ssize_t)size || recv(sa, got, size, 0) != (ssize_t)size) {
            perror("warm-up");
            return 1;
        }
    }
    uint64_t start = now_ns() + interval;
    if (threaded) {
        struct receiver rc = {sa, size, n, samples, 0};
        pthread_t t;
        if (pthread_create(&t, 0, receive_all, &rc)) return 1;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t due = start + i * interval;
            while (now_ns() < due) {
            }
            if (send(sa, buf, size, 0) != (ssize_t)size) {
                perror("send");
                return 1;
            }
        }
        pthread_join(t, 0);
        if (rc.failed) {
            fprintf(stderr, "an answer did not come\n");
            return 1;
        }
        for (uint64_t i = 0; i < n; i++) samples[i] -= start + i * interval;
    }
    for (uint64_t i = 0; !threaded && i < n; i++) {
        uint64_t due = start + i * interval, t = now_ns();
        while (t < due) {
            if (!spin && due - t > 30000) {
                struct timespec d = {.tv_sec = (due - 30000) / 1000000000u,
                                     .tv_nsec = (due - 30000) % 1000000000u};
                clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, 0);
            }
            t = now_ns();
        }
        if (send(sa, buf, size, 0) != (ssize_t)size) {
            perror("send");
            return 1;
        }
        ssize_t r;
        if (spin) {
            uint64_t give_up = now_ns() + 2000000000u;
            while ((r = recv(sa, got, size, MSG_DONTWAIT)) < 0 && errno == EAGAIN) {
                if (now_ns() > give_up) break;
            }
        } else {
            r = recv(sa, got, size, 0);
        }
        uint64_t end = now_ns();
        if (r != (ssize_t)size) {
            fprintf(stderr, "round trip %llu: no answer\n", (unsigned long long)i);
            return 1;
        }
        samples[i] = end - due;
    }
    kill(child, SIGKILL);
    waitpid(child, 0, 0);
    qsort(samples, n, sizeof *samples, cmp);
    printf("p50 %.1f p99 %.1f\n", samples[n / 2] / 1e3, samples[n * 99 / 100] / 1e3);
    return 0;
}
