/*
 * A minimal TCP stream in C: a floor for `ipcperf run tcp --peer`, and the two
 * ways a reader can wait for its data, side by side.
 *
 *   tcp-stream recv ADDR PORT [select|fill]
 *                                        listen, take one connection, read it to
 *                                        its end in reads of 128 KiB; print the
 *                                        bytes per second from the first byte to
 *                                        the last. "select": wait in select()
 *                                        before each read; "fill": each read asks
 *                                        only for the rest of the 128 KiB block
 *                                        it is filling (iperf3's server and
 *                                        ipcperf's TCP reader); otherwise each
 *                                        blocking read asks for 128 KiB
 *   tcp-stream send ADDR PORT SECONDS    connect, write 128 KiB blocks (a buffer
 *                                        written once, then not touched: iperf3's
 *                                        and ipcperf --no-touch's) for SECONDS
 *
 * No options are set on either socket: the kernel's defaults (autotuned
 * buffers, Nagle on), as iperf3 and ipcperf leave them. Pin each side with
 * taskset. The receiver prints one line: bytes seconds bytes_per_second.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (128 * 1024)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc < 5 && !(argc == 4 && strcmp(argv[1], "recv") == 0)) {
        fprintf(stderr, "usage: tcp-stream recv ADDR PORT [select|fill] | send ADDR PORT SECONDS\n");
        return 2;
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[3]))};
    if (inet_pton(AF_INET, argv[2], &a.sin_addr) != 1) {
        fprintf(stderr, "tcp-stream: '%s' is not an IPv4 address\n", argv[2]);
        return 2;
    }
    char *buf = aligned_alloc(4096, BLOCK);
    if (!buf)
        die("aligned_alloc");
    memset(buf, 0x5a, BLOCK); /* real pages, not the zero page */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0)
        die("socket");
    if (strcmp(argv[1], "send") == 0) {
        double secs = atof(argv[4]);
        if (connect(s, (struct sockaddr *)&a, sizeof a))
            die("connect");
        double end = now() + secs;
        /* The clock once per 64 blocks (8 MiB): not per write. */
        for (;;) {
            for (int i = 0; i < 64; i++) {
                size_t off = 0;
                while (off < BLOCK) {
                    ssize_t n = write(s, buf + off, BLOCK - off);
                    if (n <= 0)
                        die("write");
                    off += n;
                }
            }
            if (now() >= end)
                break;
        }
        close(s);
        return 0;
    }
    int sel = argc > 4 && strcmp(argv[4], "select") == 0;
    int fill = argc > 4 && strcmp(argv[4], "fill") == 0;
    size_t at = 0; /* where in the block a filling read lands */
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 1))
        die("bind/listen");
    int c = accept(s, NULL, NULL);
    if (c < 0)
        die("accept");
    unsigned long long total = 0;
    double first = 0, last = 0;
    for (;;) {
        if (sel) {
            fd_set r;
            FD_ZERO(&r);
            FD_SET(c, &r);
            if (select(c + 1, &r, NULL, NULL, NULL) < 0)
                die("select");
        }
        ssize_t n = fill ? read(c, buf + at, BLOCK - at) : read(c, buf, BLOCK);
        if (n < 0)
            die("read");
        if (n == 0)
            break;
        if (fill)
            at = (at + n) % BLOCK;
        /* The clock starts once the first read is in: its bytes are not counted. */
        if (first == 0)
            first = now();
        else
            total += n;
    }
    /* End of file comes right behind the last byte. */
    last = now();
    printf("%llu %.6f %.0f\n", total, last - first, last > first ? total / (last - first) : 0.0);
    return 0;
}
