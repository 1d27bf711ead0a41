/* stnet: constant-bit-rate data path for the stack-trim capture kit.
 *
 * Zhu et al. (HotNets'16, §4) compare two-copy and one-copy data moves:
 *   sender    read() from a file + send() to a socket    ("copy")
 *             sendfile() from the file to the socket      ("onecopy")
 *             send() from a memory buffer                 ("mem", the peer)
 *   receiver  recv() from a socket + write() to a file    ("copy")
 *             splice() socket -> pipe -> file              ("onecopy")
 *             recv() into a buffer that is discarded      ("mem", the peer)
 * over TCP or UDP (datagrams of --size bytes), paced in user space at a
 * constant bit rate by an absolute-deadline timer loop (clock_nanosleep):
 * after t seconds the sender has offered rate * t bits (rate 0 = as fast as
 * it can). Files live in tmpfs and wrap at --file-bytes so the page cache,
 * not a disk, is the "file system" (no writeback noise).
 *
 * Usage:
 *   stnet send --proto tcp|udp --mode copy|onecopy|mem --dst IP --port P
 *              --rate-bps R --duration S --size B --file PATH --file-bytes N
 *   stnet recv --proto tcp|udp --mode copy|onecopy|mem --bind IP --port P
 *              --size B --file PATH --file-bytes N --idle-ms MS
 * Each prints one JSON object on stdout at exit: bytes moved, calls, the
 * data phase's wall time, and getrusage(RUSAGE_SELF) user/system seconds.
 * The receiver ends when the TCP peer closes, or (UDP) after --idle-ms without
 * data once data has started, or at a 'FIN' datagram (an empty datagram).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what) {
    fprintf(stderr, "stnet: %s: %s\n", what, strerror(errno));
    exit(1);
}
static void usage(const char *msg) {
    fprintf(stderr, "stnet: %s\n", msg);
    exit(2);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct opts {
    const char *role, *proto, *mode, *host, *file;
    int port, size, idle_ms;
    double rate_bps, duration;
    long long file_bytes;
};

/* CPU time of the data phase: getrusage at its start (u0, s0) and end. */
static double u0, s0, u1, s1;

static void report(const struct opts *o, long long bytes, long long calls, long long short_calls,
                   double t0, double t1, long long errors) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"role\": \"%s\", \"proto\": \"%s\", \"mode\": \"%s\", \"size\": %d, "
           "\"rate_bps\": %.0f, \"bytes\": %lld, \"calls\": %lld, \"short_calls\": %lld, "
           "\"errors\": %lld, \"elapsed_s\": %.6f, \"phase_utime_s\": %.6f, \"phase_stime_s\": %.6f, "
           "\"utime_s\": %.6f, \"stime_s\": %.6f}\n",
           o->role, o->proto, o->mode, o->size, o->rate_bps, bytes, calls, short_calls, errors,
           t1 > t0 ? t1 - t0 : 0.0, u1 - u0, s1 - s0,
           ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
    fflush(stdout);
}

/* The source file (made by the kit, in tmpfs): at least file_bytes long. */
static int open_source(const struct opts *o) {
    int fd = open(o->file, O_RDONLY);
    if (fd < 0) die("open source file");
    struct stat st;
    if (fstat(fd, &st) < 0) die("stat source file");
    if (st.st_size < o->file_bytes) usage("source file shorter than --file-bytes");
    return fd;
}

static double cpu_s(int which_user) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    struct timeval tv = which_user ? ru.ru_utime : ru.ru_stime;
    return tv.tv_sec + tv.tv_usec / 1e6;
}

static void sleep_until(double t_abs_mono) {
    struct timespec ts;
    ts.tv_sec = (time_t)t_abs_mono;
    ts.tv_nsec = (long)((t_abs_mono - ts.tv_sec) * 1e9);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
}

static int do_send(const struct opts *o) {
    int tcp = strcmp(o->proto, "tcp") == 0;
    int fd = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
    if (fd < 0) die("socket");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(o->port)};
    if (inet_pton(AF_INET, o->host, &a.sin_addr) != 1) usage("bad --dst");
    int tries = 0;
    while (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        if (!tcp || ++tries > 200) die("connect");
        usleep(10000); /* the receiver may not be listening yet */
    }
    int file = -1;
    char *buf = malloc(o->size);
    if (!buf) die("malloc");
    memset(buf, 'x', o->size);
    if (strcmp(o->mode, "mem") != 0) file = open_source(o);
    off_t off = 0;
    long long bytes = 0, calls = 0, shorts = 0, errors = 0;
    u0 = cpu_s(1); s0 = cpu_s(0);
    double t0 = now_s(), end = t0 + o->duration;
    for (;;) {
        double t = now_s();
        if (t >= end) break;
        if (o->rate_bps > 0) {
            /* Offered so far must not exceed rate * elapsed: else sleep until
             * the moment the next chunk is due (or the end). */
            double due = t0 + (bytes + o->size) * 8.0 / o->rate_bps;
            if (due > t) {
                sleep_until(due < end ? due : end);
                continue;
            }
        }
        if (off + o->size > o->file_bytes) off = 0;
        ssize_t n;
        if (strcmp(o->mode, "onecopy") == 0) {
            n = sendfile(fd, file, &off, o->size); /* advances off */
        } else {
            if (strcmp(o->mode, "copy") == 0) {
                ssize_t r = pread(file, buf, o->size, off);
                if (r != o->size) die("pread");
                off += r;
            }
            n = send(fd, buf, o->size, 0);
        }
        calls++;
        if (n < 0) {
            if (!tcp && (errno == ECONNREFUSED || errno == ENOBUFS || errno == EAGAIN)) { errors++; continue; }
            die("send");
        }
        if (n != o->size) shorts++;
        bytes += n;
    }
    double t1 = now_s();
    u1 = cpu_s(1); s1 = cpu_s(0);
    if (!tcp) { /* tell the receiver we are done: empty datagrams */
        for (int i = 0; i < 5; i++) { send(fd, buf, 0, 0); usleep(2000); }
    } else {
        shutdown(fd, SHUT_WR);
        char c;
        while (recv(fd, &c, 1, 0) > 0) {} /* wait for the receiver to finish */
    }
    close(fd);
    report(o, bytes, calls, shorts, t0, t1, errors);
    return 0;
}

static int do_recv(const struct opts *o) {
    int tcp = strcmp(o->proto, "tcp") == 0;
    int ls = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
    if (ls < 0) die("socket");
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (!tcp) {
        int rcv = 8 << 20; /* room for bursts; capped by net.core.rmem_max */
        setsockopt(ls, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(o->port)};
    if (inet_pton(AF_INET, o->host, &a.sin_addr) != 1) usage("bad --bind");
    if (bind(ls, (struct sockaddr *)&a, sizeof a) < 0) die("bind");
    int fd = ls;
    if (tcp) {
        if (listen(ls, 1) < 0) die("listen");
        printf("{\"ready\": true}\n");
        fflush(stdout);
        fd = accept(ls, NULL, NULL);
        if (fd < 0) die("accept");
    } else {
        printf("{\"ready\": true}\n");
        fflush(stdout);
    }
    int file = -1, pipefd[2] = {-1, -1};
    if (strcmp(o->mode, "mem") != 0) {
        file = open(o->file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (file < 0) die("open sink file");
    }
    if (strcmp(o->mode, "onecopy") == 0) {
        if (pipe(pipefd) < 0) die("pipe");
        fcntl(pipefd[1], F_SETPIPE_SZ, 1 << 20);
    }
    int bufsz = o->size > 65536 ? o->size : 65536;
    char *buf = malloc(bufsz);
    if (!buf) die("malloc");
    long long bytes = 0, calls = 0, shorts = 0, errors = 0;
    loff_t woff = 0;
    double t0 = 0, t1 = 0;
    for (;;) {
        if (!tcp && bytes > 0) { /* UDP: stop after idle_ms without data */
            struct pollfd p = {.fd = fd, .events = POLLIN};
            int r = poll(&p, 1, o->idle_ms);
            if (r == 0) break;
            if (r < 0 && errno != EINTR) die("poll");
        }
        ssize_t n;
        int chunk = tcp ? bufsz : o->size + 1;
        if (woff + chunk > o->file_bytes) woff = 0;
        if (strcmp(o->mode, "onecopy") == 0) {
            n = splice(fd, NULL, pipefd[1], NULL, chunk, SPLICE_F_MOVE);
            if (n > 0) {
                ssize_t left = n;
                while (left > 0) {
                    ssize_t w = splice(pipefd[0], NULL, file, &woff, left, SPLICE_F_MOVE);
                    if (w <= 0) die("splice pipe->file");
                    left -= w;
                }
            }
        } else {
            n = recv(fd, buf, chunk, 0);
            if (n > 0 && file >= 0) {
                if (pwrite(file, buf, n, woff) != n) die("pwrite");
                woff += n;
            }
        }
        calls++;
        if (n < 0) {
            if (errno == EINTR) continue;
            die(strcmp(o->mode, "onecopy") == 0 ? "splice socket->pipe" : "recv");
        }
        if (n == 0) {
            if (tcp) break;
            if (bytes > 0) break; /* the sender's empty datagram */
            continue;
        }
        if (bytes == 0) { t0 = now_s(); u0 = cpu_s(1); s0 = cpu_s(0); }
        t1 = now_s();
        bytes += n;
        if (!tcp && n != o->size) shorts++;
    }
    u1 = cpu_s(1); s1 = cpu_s(0); /* includes the final idle wait (no CPU) */
    report(o, bytes, calls, shorts, t0, t1, errors);
    if (tcp) close(fd);
    return 0;
}

int main(int argc, char **argv) {
    struct opts o = {.proto = "tcp", .mode = "copy", .host = "127.0.0.1", .file = NULL, .port = 5301,
                     .size = 16384, .idle_ms = 300, .rate_bps = 0, .duration = 1.0, .file_bytes = 64 << 20};
    if (argc < 2) usage("usage: stnet send|recv [options]");
    o.role = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *k = argv[i];
        if (i + 1 >= argc) usage("option without a value");
        const char *v = argv[++i];
        if (!strcmp(k, "--proto")) o.proto = v;
        else if (!strcmp(k, "--mode")) o.mode = v;
        else if (!strcmp(k, "--dst") || !strcmp(k, "--bind")) o.host = v;
        else if (!strcmp(k, "--port")) o.port = atoi(v);
        else if (!strcmp(k, "--size")) o.size = atoi(v);
        else if (!strcmp(k, "--rate-bps")) o.rate_bps = atof(v);
        else if (!strcmp(k, "--duration")) o.duration = atof(v);
        else if (!strcmp(k, "--file")) o.file = v;
        else if (!strcmp(k, "--file-bytes")) o.file_bytes = atoll(v);
        else if (!strcmp(k, "--idle-ms")) o.idle_ms = atoi(v);
        else usage("unknown option");
    }
    if (strcmp(o.proto, "tcp") && strcmp(o.proto, "udp")) usage("--proto must be tcp or udp");
    if (strcmp(o.mode, "copy") && strcmp(o.mode, "onecopy") && strcmp(o.mode, "mem")) usage("--mode must be copy, onecopy or mem");
    if (o.size <= 0 || o.size > (1 << 20)) usage("--size must be in 1..1048576");
    if (strcmp(o.mode, "mem") && !o.file) usage("--file is required unless --mode mem");
    if (o.file_bytes < o.size * 2LL) usage("--file-bytes must be at least twice --size");
    if (!strcmp(o.role, "send")) return do_send(&o);
    if (!strcmp(o.role, "recv")) return do_recv(&o);
    usage("role must be send or recv");
    return 2;
}
