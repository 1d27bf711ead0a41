/* mtmp_xfer: bulk sender/receiver for the mptcp-dualband capture kit.
 *
 * One program, two roles (server listens, client connects), either of which
 * sends or receives:
 *
 *   mtmp_xfer server --port P --conns N [--mptcp] (--send|--recv) [sender options]
 *   mtmp_xfer client --addr A[,B] --port P [--mptcp] (--send|--recv) [sender options]
 *
 * --cc NAME sets the congestion control of every socket (TCP_CONGESTION).
 * --wait-ms MS: the sender waits this long after connecting before it sends
 * (MPTCP: the path manager's ADD_ADDR and MP_JOIN then complete before the
 * bottleneck queue fills; without it the ADD_ADDR can be dropped at the
 * shaper and is only retransmitted after net.mptcp.add_addr_timeout).
 *
 * Sender options: --duration S (seconds of sending), --rate MBPS (application
 * demand, token-bucket paced; 0 = backlogged), --ratio PCT (fixed-ratio
 * striping: PCT % of the bytes go to the first connection ("a"), the rest to
 * the second ("b"), chunk by chunk, always to the connection furthest below
 * its share; with blocking writes a slow path stalls the stream, as in the
 * FixedRatio scheduler of Saha et al., MobiCom'19), --chunk BYTES.
 *
 * With --mptcp there is one IPPROTO_MPTCP (262) socket and the kernel's
 * scheduler splits it over the subflows (the kit reads per-path bytes from
 * the interface counters). Without it, the client opens one plain TCP
 * connection per address (path a, path b) and the server accepts --conns.
 *
 * Prints one JSON object on stdout: per-connection bytes with local and peer
 * addresses, monotonic times of the first and last byte, and the process's
 * own CPU time (getrusage RUSAGE_SELF: user and system microseconds), which is
 * precise where tick-sampled /proc/stat is not.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#define MAXC 2

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what) {
    fprintf(stderr, "mtmp_xfer: %s: %s\n", what, strerror(errno));
    exit(1);
}

struct conn {
    int fd;
    char local[64], peer[64];
    uint64_t bytes;
    int eof;
};

static void addr_str(struct sockaddr_in *sa, char *out, size_t n) {
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof ip);
    snprintf(out, n, "%s:%u", ip, ntohs(sa->sin_port));
}

static void fill_names(struct conn *c) {
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    if (getsockname(c->fd, (struct sockaddr *)&sa, &len) == 0) addr_str(&sa, c->local, sizeof c->local);
    len = sizeof sa;
    if (getpeername(c->fd, (struct sockaddr *)&sa, &len) == 0) addr_str(&sa, c->peer, sizeof c->peer);
}

static int write_all(int fd, const char *buf, size_t n) {
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, buf + off, n - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        off += (size_t)w;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: mtmp_xfer server|client [options] (see the source)\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int is_server = strcmp(argv[1], "server") == 0;
    if (!is_server && strcmp(argv[1], "client") != 0) {
        fprintf(stderr, "mtmp_xfer: role must be server or client, found %s\n", argv[1]);
        return 2;
    }
    const char *addrs = NULL, *cc = NULL;
    int port = 5301, nconns = 1, mptcp = 0, send_mode = -1;
    double duration = 2.0, rate_mbps = 0.0, ratio = 100.0, wait_ms = 0.0;
    size_t chunk = 65536;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--mptcp")) mptcp = 1;
        else if (!strcmp(a, "--send")) send_mode = 1;
        else if (!strcmp(a, "--recv")) send_mode = 0;
        else if (v && !strcmp(a, "--addr")) { addrs = v; i++; }
        else if (v && !strcmp(a, "--port")) { port = atoi(v); i++; }
        else if (v && !strcmp(a, "--conns")) { nconns = atoi(v); i++; }
        else if (v && !strcmp(a, "--duration")) { duration = atof(v); i++; }
        else if (v && !strcmp(a, "--rate")) { rate_mbps = atof(v); i++; }
        else if (v && !strcmp(a, "--ratio")) { ratio = atof(v); i++; }
        else if (v && !strcmp(a, "--chunk")) { chunk = (size_t)atol(v); i++; }
        else if (v && !strcmp(a, "--cc")) { cc = v; i++; }
        else if (v && !strcmp(a, "--wait-ms")) { wait_ms = atof(v); i++; }
        else { fprintf(stderr, "mtmp_xfer: unknown or incomplete option %s\n", a); return 2; }
    }
    if (send_mode < 0 || nconns < 1 || nconns > MAXC || ratio < 0 || ratio > 100 || chunk == 0) {
        fprintf(stderr, "mtmp_xfer: need --send or --recv, 1 or 2 connections, a ratio in [0, 100]\n");
        return 2;
    }
    int proto = mptcp ? IPPROTO_MPTCP : IPPROTO_TCP;
    struct conn c[MAXC];
    memset(c, 0, sizeof c);
    int n = 0, ls = -1;
    if (is_server) {
        ls = socket(AF_INET, SOCK_STREAM, proto);
        if (ls < 0) die("socket");
        int one = 1;
        setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (cc && setsockopt(ls, IPPROTO_TCP, TCP_CONGESTION, cc, strlen(cc)) < 0) die("TCP_CONGESTION");
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = INADDR_ANY};
        if (bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0) die("bind");
        if (listen(ls, 8) < 0) die("listen");
        printf("{\"listening\": %d}\n", port);  /* the kit waits for this line */
        fflush(stdout);
        for (n = 0; n < nconns; n++) {
            c[n].fd = accept(ls, NULL, NULL);
            if (c[n].fd < 0) die("accept");
            fill_names(&c[n]);
        }
        /* Path "a" is the connection on the lower local address (10.93 < 10.94). */
        if (n == 2 && strcmp(c[0].local, c[1].local) > 0) {
            struct conn t = c[0]; c[0] = c[1]; c[1] = t;
        }
        /* The listener stays open until the end: Linux MPTCP accepts a
         * subflow's MP_JOIN SYN through the listening socket, and answers it
         * with a reset once the listener is closed. */
    } else {
        if (!addrs) { fprintf(stderr, "mtmp_xfer: client needs --addr\n"); return 2; }
        char buf[256];
        snprintf(buf, sizeof buf, "%s", addrs);
        for (char *tok = strtok(buf, ","); tok && n < MAXC; tok = strtok(NULL, ",")) {
            int fd = socket(AF_INET, SOCK_STREAM, proto);
            if (fd < 0) die("socket");
            if (cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, strlen(cc)) < 0) die("TCP_CONGESTION");
            struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
            if (inet_pton(AF_INET, tok, &sa.sin_addr) != 1) { fprintf(stderr, "mtmp_xfer: bad address %s\n", tok); return 2; }
            if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) die("connect");
            c[n].fd = fd;
            fill_names(&c[n]);
            n++;
        }
    }
    char *buf = malloc(chunk);
    if (!buf) die("malloc");
    memset(buf, 'm', chunk);
    if (send_mode && wait_ms > 0) {  /* let the MPTCP path manager add subflows before the queues fill */
        struct timespec ts = {.tv_sec = (time_t)(wait_ms / 1000), .tv_nsec = (long)((wait_ms - 1000 * (time_t)(wait_ms / 1000)) * 1e6)};
        nanosleep(&ts, NULL);
    }
    int64_t t0 = now_ns(), first = 0, last = 0;
    if (send_mode) {
        int64_t end = t0 + (int64_t)(duration * 1e9);
        double share_a = n == 2 ? ratio / 100.0 : 1.0;
        uint64_t total = 0;
        for (;;) {
            int64_t t = now_ns();
            if (t >= end) break;
            if (rate_mbps > 0) {  /* token bucket: never ahead of rate * elapsed */
                double allowed = rate_mbps * 1e6 / 8.0 * (double)(t - t0) / 1e9;
                if ((double)total > allowed) {
                    double ahead_s = ((double)total - allowed) * 8.0 / (rate_mbps * 1e6);
                    struct timespec ts = {.tv_sec = (time_t)ahead_s, .tv_nsec = (long)((ahead_s - (time_t)ahead_s) * 1e9)};
                    nanosleep(&ts, NULL);
                    continue;
                }
            }
            int k = 0;
            if (n == 2) {  /* the connection furthest below its share of the bytes */
                double after = (double)(total + chunk);
                double need_a = share_a * after - (double)c[0].bytes;
                double need_b = (1.0 - share_a) * after - (double)c[1].bytes;
                k = need_a >= need_b ? 0 : 1;
                if (share_a <= 0.0) k = 1;
                if (share_a >= 1.0) k = 0;
            }
            if (write_all(c[k].fd, buf, chunk) < 0) die("write");
            if (!first) first = now_ns();
            c[k].bytes += chunk;
            total += chunk;
        }
        last = now_ns();
        for (int i = 0; i < n; i++) shutdown(c[i].fd, SHUT_WR);
        /* wait for the receiver to close, so the data has been delivered */
        for (int i = 0; i < n; i++) {
            while (read(c[i].fd, buf, chunk) > 0) {}
        }
    } else {
        struct pollfd p[MAXC];
        int open = n;
        while (open > 0) {
            for (int i = 0; i < n; i++) { p[i].fd = c[i].eof ? -1 : c[i].fd; p[i].events = POLLIN; }
            if (poll(p, n, 60000) <= 0) die("poll (no data for 60 s)");
            for (int i = 0; i < n; i++) {
                if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                ssize_t r = read(c[i].fd, buf, chunk);
                if (r < 0) { if (errno == EINTR) continue; die("read"); }
                if (r == 0) { c[i].eof = 1; open--; continue; }
                int64_t t = now_ns();
                if (!first) first = t;
                last = t;
                c[i].bytes += (uint64_t)r;
            }
        }
    }
    for (int i = 0; i < n; i++) close(c[i].fd);
    if (ls >= 0) close(ls);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"tool\": \"mtmp_xfer\", \"role\": \"%s\", \"mode\": \"%s\", \"mptcp\": %s, \"ratio_a_pct\": %.6g, "
           "\"rate_mbps\": %.6g, \"duration_s\": %.6g, \"chunk\": %zu, \"start_ns\": %lld, \"first_byte_ns\": %lld, "
           "\"last_byte_ns\": %lld, \"end_ns\": %lld, \"utime_us\": %lld, \"stime_us\": %lld, \"conns\": [",
           is_server ? "server" : "client", send_mode ? "send" : "recv", mptcp ? "true" : "false", ratio,
           rate_mbps, duration, chunk, (long long)t0, (long long)first, (long long)last, (long long)now_ns(),
           (long long)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec,
           (long long)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec);
    for (int i = 0; i < n; i++)
        printf("%s{\"local\": \"%s\", \"peer\": \"%s\", \"bytes\": %llu}", i ? ", " : "", c[i].local, c[i].peer,
               (unsigned long long)c[i].bytes);
    printf("]}\n");
    free(buf);
    return 0;
}
