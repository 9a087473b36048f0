/*
 * The tightest pipe loop there is: a floor for `ipcperf run pipe --no-touch`.
 *
 *   tight-pipe write N BS   write N blocks of BS bytes (never touched) to stdout
 *   tight-pipe read BS      read stdin to end of file in BS reads; print bytes/s
 *                           (from the reader's start to end of file, like dd)
 *
 * bench/compare-peers.sh builds it with cc and runs it beside ipcperf and dd|dd,
 * pinned alike. If ipcperf matches this, ipcperf adds no cost of its own; if
 * dd|dd beats both, the difference is in how the loops pace each other, not in
 * what they pay per block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "write") == 0 && argc == 4) {
        long n = atol(argv[2]), bs = atol(argv[3]);
        char *buf = aligned_alloc(4096, bs);
        if (!buf || n <= 0 || bs <= 0)
            return 2;
        for (long i = 0; i < n; i++)
            for (long done = 0; done < bs;) {
                ssize_t w = write(1, buf + done, bs - done);
                if (w <= 0)
                    return 1;
                done += w;
            }
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "read") == 0) {
        long bs = atol(argv[2]);
        char *buf = aligned_alloc(4096, bs);
        if (!buf || bs <= 0)
            return 2;
        long long total = 0;
        double start = now();
        for (;;) {
            ssize_t r = read(0, buf, bs);
            if (r < 0)
                return 1;
            if (r == 0)
                break;
            total += r;
        }
        printf("%.0f\n", total / (now() - start));
        return 0;
    }
    fprintf(stderr, "usage: tight-pipe write N BS | tight-pipe read BS\n");
    return 2;
}
