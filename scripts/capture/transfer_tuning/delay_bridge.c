/* delay_bridge: user-space delay line, an L2 bridge between two interfaces
 * that holds every frame for a fixed one-way delay before forwarding it.
 * C rewrite of delay_bridge.py (same arguments, behaviour and counters): the
 * Python loop saturated near 35 of a configured 40 Mbit/s.
 *
 * The kernel here has no netem, so the round-trip time is emulated in user
 * space: the kit runs this program in a middle namespace whose two veth ends
 * carry no addresses; it reads every frame (AF_PACKET, ETH_P_ALL) arriving on
 * one interface and writes it out of the other --delay-ms later, in both
 * directions, so RTT = 2 x delay plus the (sub-millisecond) host latency.
 * Frames wait in a FIFO per direction; beyond --queue-frames waiting frames a
 * new frame is dropped (a tail-drop router queue). Offloads must be off on the
 * veths (frames <= MTU, checksums filled in); the kit does that.
 *
 * Prints "ready" once both sockets are bound, and the counters as one JSON
 * object on SIGTERM/SIGINT:
 *   {"forwarded": [a, b], "dropped": [a, b], "send_errors": [a, b], "max_queue": [a, b]}
 * (index = the interface the frame was, or would have been, sent out of).
 *
 *   delay_bridge IF_A IF_B --delay-ms 25 [--queue-frames 20000]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int64_t due_ns;
    uint32_t len;
    unsigned char *data;
} frame_t;

typedef struct { /* ring buffer of frames waiting to go out of one interface */
    frame_t *slots;
    long cap, head, count;
} queue_t;

static volatile sig_atomic_t running = 1;
static void stop(int sig) { (void)sig; running = 0; }

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int open_sock(const char *name) {
    int s = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
    if (s < 0) { perror("socket"); exit(2); }
    int buf = 8 << 20;
    setsockopt(s, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    setsockopt(s, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    struct sockaddr_ll sll = {0};
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_ALL);
    sll.sll_ifindex = (int)if_nametoindex(name);
    if (sll.sll_ifindex == 0) { fprintf(stderr, "delay_bridge: no interface %s\n", name); exit(2); }
    if (bind(s, (struct sockaddr *)&sll, sizeof sll) < 0) { perror("bind"); exit(2); }
    return s;
}

static void usage(void) {
    fprintf(stderr, "usage: delay_bridge IF_A IF_B --delay-ms MS [--queue-frames N]\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *ifs[2] = {NULL, NULL};
    double delay_ms = -1;
    long queue_frames = 20000;
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--delay-ms") && i + 1 < argc) delay_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--queue-frames") && i + 1 < argc) queue_frames = atol(argv[++i]);
        else if (argv[i][0] != '-' && npos < 2) ifs[npos++] = argv[i];
        else usage();
    }
    if (npos != 2 || delay_ms < 0 || queue_frames < 1) usage();
    int64_t delay_ns = (int64_t)(delay_ms * 1e6);
    int socks[2] = {open_sock(ifs[0]), open_sock(ifs[1])};
    queue_t q[2];
    for (int i = 0; i < 2; i++) {
        q[i].slots = calloc((size_t)queue_frames, sizeof(frame_t));
        if (!q[i].slots) { perror("calloc"); return 2; }
        q[i].cap = queue_frames; q[i].head = q[i].count = 0;
    }
    long forwarded[2] = {0}, dropped[2] = {0}, send_errors[2] = {0}, max_queue[2] = {0};
    struct sigaction sa = {0};
    sa.sa_handler = stop; /* no SA_RESTART: ppoll returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    static unsigned char buf[65536];
    printf("ready\n");
    fflush(stdout);
    struct pollfd pfd[2] = {{socks[0], POLLIN, 0}, {socks[1], POLLIN, 0}};
    while (running) {
        int64_t now = now_ns(), due = -1;
        for (int i = 0; i < 2; i++)
            if (q[i].count) {
                int64_t d = q[i].slots[q[i].head].due_ns;
                if (due < 0 || d < due) due = d;
            }
        /* ns-precision timeout: poll()'s 1 ms granularity would add delay */
        int64_t wait = due < 0 ? 200000000LL : (due > now ? due - now : 0);
        struct timespec ts = {wait / 1000000000LL, wait % 1000000000LL};
        int n = ppoll(pfd, 2, &ts, NULL);
        if (n < 0) {
            if (errno == EINTR) continue;
            perror("ppoll");
            break;
        }
        for (int i = 0; n > 0 && i < 2; i++) {
            if (!(pfd[i].revents & POLLIN)) continue;
            int out = 1 - i;
            queue_t *o = &q[out];
            for (;;) {
                struct sockaddr_ll from;
                socklen_t flen = sizeof from;
                ssize_t len = recvfrom(socks[i], buf, sizeof buf, 0, (struct sockaddr *)&from, &flen);
                if (len < 0) break; /* EAGAIN: drained */
                if (from.sll_pkttype == PACKET_OUTGOING) continue; /* our own sends */
                if (o->count >= o->cap) { dropped[out]++; continue; }
                unsigned char *copy = malloc((size_t)len);
                if (!copy) { dropped[out]++; continue; }
                memcpy(copy, buf, (size_t)len);
                frame_t *f = &o->slots[(o->head + o->count) % o->cap];
                f->due_ns = now_ns() + delay_ns;
                f->len = (uint32_t)len;
                f->data = copy;
                o->count++;
            }
            if (o->count > max_queue[out]) max_queue[out] = o->count;
        }
        now = now_ns();
        for (int i = 0; i < 2; i++) {
            while (q[i].count && q[i].slots[q[i].head].due_ns <= now) {
                frame_t *f = &q[i].slots[q[i].head];
                if (send(socks[i], f->data, f->len, 0) == (ssize_t)f->len) forwarded[i]++;
                else send_errors[i]++;
                free(f->data);
                q[i].head = (q[i].head + 1) % q[i].cap;
                q[i].count--;
            }
        }
    }
    printf("{\"forwarded\": [%ld, %ld], \"dropped\": [%ld, %ld], \"send_errors\": [%ld, %ld], "
           "\"max_queue\": [%ld, %ld]}\n", forwarded[0], forwarded[1], dropped[0], dropped[1],
           send_errors[0], send_errors[1], max_queue[0], max_queue[1]);
    fflush(stdout);
    return 0;
}
