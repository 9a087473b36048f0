/* Two processes in conversation over two one-way channels, and the shapes
 * that are not one conversation. conv MODE [N [GAP_US]]:
 *   pipes      requests on one pipe, each answered on a second
 *   fifos DIR  the same over two FIFOs made in DIR
 *   socks      two socket pairs, each used one way
 *   coproc     the child moves its pipes onto 0 and 1 and runs `conv answer`
 *   pipelined  three requests sent before their three answers are read
 *   streams    both write all their messages before reading any
 *   chain      three processes: parent -> child -> grandchild
 * Requests are 100 B, answers 300 B; N of them (25), GAP_US apart (0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#define Q 100
#define A 300
static char q[Q], a[A];
static void all(int fd, char *b, size_t n, int rd) {
    size_t d = 0;
    while (d < n) {
        ssize_t r = rd ? read(fd, b + d, n - d) : write(fd, b + d, n - d);
        if (r <= 0) _exit(3);
        d += (size_t)r;
    }
}
static void serve(int in, int out, int n) {
    for (int i = 0; i < n; i++) { all(in, q, Q, 1); all(out, a, A, 0); }
}
static int finish(pid_t pid) {
    int st;
    if (waitpid(pid, &st, 0) < 0) return 5;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 4;
}
int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "pipes";
    int fifo = strcmp(mode, "fifos") == 0;
    int n = argc > (2 + fifo) ? atoi(argv[2 + fifo]) : 25;
    int gap = argc > (3 + fifo) ? atoi(argv[3 + fifo]) : 0;
    memset(q, 'q', Q);
    memset(a, 'a', A);
    if (strcmp(mode, "answer") == 0) {
        for (;;) {
            size_t d = 0;
            while (d < Q) { ssize_t r = read(0, q + d, Q - d); if (r <= 0) return 0; d += (size_t)r; }
            all(1, a, A, 0);
        }
    }
    int up[2], down[2];
    if (strcmp(mode, "socks") == 0) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, up) || socketpair(AF_UNIX, SOCK_STREAM, 0, down)) return 1;
    } else if (fifo) {
        char u[4096], w[4096];
        snprintf(u, sizeof u, "%s/up", argv[2]);
        snprintf(w, sizeof w, "%s/down", argv[2]);
        if (mkfifo(u, 0600) || mkfifo(w, 0600)) return 1;
        pid_t pid = fork();
        if (pid == 0) {
            int in = open(u, O_RDONLY), out = open(w, O_WRONLY);
            if (in < 0 || out < 0) _exit(1);
            serve(in, out, n);
            _exit(0);
        }
        int out = open(u, O_WRONLY), in = open(w, O_RDONLY);
        if (in < 0 || out < 0) return 1;
        for (int i = 0; i < n; i++) { if (gap) usleep(gap); all(out, q, Q, 0); all(in, a, A, 1); }
        close(out);
        return finish(pid);
    } else if (pipe(up) || pipe(down)) {
        return 1;
    }
    if (strcmp(mode, "chain") == 0) {
        pid_t p1 = fork();
        if (p1 == 0) {
            pid_t p2 = fork();
            if (p2 == 0) { for (int i = 0; i < n; i++) all(down[0], a, A, 1); _exit(0); }
            for (int i = 0; i < n; i++) { all(up[0], q, Q, 1); all(down[1], a, A, 0); }
            _exit(finish(p2));
        }
        for (int i = 0; i < n; i++) { if (gap) usleep(gap); all(up[1], q, Q, 0); }
        return finish(p1);
    }
    /* The parent writes on up[1] and reads down[0]; the child the other ends. */
    int pw = up[1], pr = down[0], cr = up[0], cw = down[1];
    if (strcmp(mode, "socks") == 0) { pw = up[0]; cr = up[1]; pr = down[0]; cw = down[1]; }
    pid_t pid = fork();
    if (pid == 0) {
        if (strcmp(mode, "coproc") == 0) {
            if (dup2(cr, 0) < 0 || dup2(cw, 1) < 0) _exit(1);
            close(up[0]); close(up[1]); close(down[0]); close(down[1]);
            execl(argv[0], argv[0], "answer", (char *)0);
            _exit(1);
        }
        close(pw); close(pr);
        if (strcmp(mode, "streams") == 0) {
            for (int i = 0; i < n; i++) all(cw, a, A, 0);
            for (int i = 0; i < n; i++) all(cr, q, Q, 1);
        } else {
            serve(cr, cw, n);
        }
        _exit(0);
    }
    close(cr); close(cw);
    if (strcmp(mode, "streams") == 0) {
        for (int i = 0; i < n; i++) all(pw, q, Q, 0);
        for (int i = 0; i < n; i++) all(pr, a, A, 1);
    } else if (strcmp(mode, "pipelined") == 0) {
        for (int i = 0; i < n; i += 3) {
            int m = n - i < 3 ? n - i : 3;
            for (int k = 0; k < m; k++) all(pw, q, Q, 0);
            for (int k = 0; k < m; k++) all(pr, a, A, 1);
        }
    } else {
        for (int i = 0; i < n; i++) { if (gap) usleep(gap); all(pw, q, Q, 0); all(pr, a, A, 1); }
    }
    close(pw);
    return finish(pid);
}
