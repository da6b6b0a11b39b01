// The connection guard of cmhd: the per-address connection cap, the slow-client deadlines
// (header deadline, minimum body rate) and the reaper thread that enforces them, with their
// counters. The request path is cmhd.c.
#include "cmhd_internal.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static addr_key addr_key_of(const struct sockaddr *sa) {
    addr_key k;
    memset(&k, 0, sizeof k);
    if (sa == NULL) return k;
    if (sa->sa_family == AF_INET) {
        memcpy(k.bytes, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        k.len = 4;
    } else if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a)) { memcpy(k.bytes, a->s6_addr + 12, 4); k.len = 4; }
        else { memcpy(k.bytes, a->s6_addr, 16); k.len = 16; }
    }
    return k;
}

static int addr_key_equal(const addr_key *a, const addr_key *b) {
    return a->len != 0 && a->len == b->len && memcmp(a->bytes, b->bytes, (size_t)a->len) == 0;
}

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

conn_state *cmhd_conn_state_of(struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci != NULL ? (conn_state *)ci->socket_context : NULL;
}

/// Moves the connection to `phase` (under the lock).
void cmhd_set_phase(daemon_box *box, struct MHD_Connection *conn, int phase) {
    conn_state *cs = cmhd_conn_state_of(conn);
    if (cs == NULL) return;
    pthread_mutex_lock(&box->conns_lock);
    cs->phase = phase;
    cs->phase_start_ms = now_ms();
    cs->body_bytes = 0;
    pthread_mutex_unlock(&box->conns_lock);
}

/// Counts body bytes; returns 0 when the body is slower than the minimum rate (the caller closes).
int cmhd_body_progress(daemon_box *box, struct MHD_Connection *conn, size_t n) {
    conn_state *cs = cmhd_conn_state_of(conn);
    if (cs == NULL) return 1;
    int ok = 1;
    pthread_mutex_lock(&box->conns_lock);
    cs->body_bytes += n;
    unsigned int rate = box->config.min_body_bytes_per_second;
    if (rate > 0) {
        uint64_t grace = (box->config.header_deadline_seconds > 0 ? box->config.header_deadline_seconds : 1) * 1000u;
        uint64_t elapsed = now_ms() - cs->phase_start_ms;
        if (elapsed > grace && cs->body_bytes * 1000u < (uint64_t)rate * (elapsed - grace)) ok = 0;
    }
    if (!ok) box->closed_body++;
    pthread_mutex_unlock(&box->conns_lock);
    return ok;
}

void cmhd_notify_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                                 enum MHD_ConnectionNotificationCode code) {
    daemon_box *box = (daemon_box *)cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        conn_state *cs = (conn_state *)calloc(1, sizeof *cs);
        if (cs == NULL) return;
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        cs->fd = ci != NULL ? ci->connect_fd : -1;
        const union MHD_ConnectionInfo *ai = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        cs->addr = addr_key_of(ai != NULL ? ai->client_addr : NULL);
        cs->phase = PHASE_HEADER;
        cs->phase_start_ms = now_ms();
        pthread_mutex_lock(&box->conns_lock);
        cs->next = box->conns;
        if (box->conns != NULL) box->conns->prev = cs;
        box->conns = cs;
        box->open++;
        pthread_mutex_unlock(&box->conns_lock);
        *socket_context = cs;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        // libmicrohttpd notifies before it closes the socket: once this returns, the reaper can no
        // longer touch the descriptor (it shuts sockets down only under the same lock).
        conn_state *cs = (conn_state *)*socket_context;
        if (cs == NULL) return;
        pthread_mutex_lock(&box->conns_lock);
        if (cs->prev != NULL) cs->prev->next = cs->next; else box->conns = cs->next;
        if (cs->next != NULL) cs->next->prev = cs->prev;
        box->open--;
        pthread_mutex_unlock(&box->conns_lock);
        free(cs);
        *socket_context = NULL;
    }
}

/// The per-address cap (libmicrohttpd's accept policy callback, called for each accepted socket
/// before its connection starts): refuses a client address that holds `per_ip_connection_limit`
/// connections already, counting the refusal. The connections are those in the notify list, so
/// nothing is counted twice or leaked whatever becomes of an admitted socket; accepts on other
/// pool threads at the same instant may each be admitted (at most `threads` − 1 over the cap).
/// O(open connections) per accept. (libmicrohttpd's own MHD_OPTION_PER_IP_CONNECTION_LIMIT
/// refuses without telling the application, so its refusals could not be counted.)
enum MHD_Result cmhd_accept_policy(void *cls, const struct sockaddr *addr, socklen_t addrlen) {
    (void)addrlen;
    daemon_box *box = (daemon_box *)cls;
    unsigned int limit = box->config.per_ip_connection_limit;
    if (limit == 0) return MHD_YES;
    addr_key k = addr_key_of(addr);
    if (k.len == 0) return MHD_YES;
    unsigned int held = 0;
    pthread_mutex_lock(&box->conns_lock);
    for (conn_state *cs = box->conns; cs != NULL && held < limit; cs = cs->next) {
        if (addr_key_equal(&cs->addr, &k)) held++;
    }
    int refuse = held >= limit;
    if (refuse) box->refused_per_address++;
    pthread_mutex_unlock(&box->conns_lock);
    return refuse ? MHD_NO : MHD_YES;
}

/// Every 200 ms: shuts down the sockets of connections whose header missed its deadline or whose
/// body has gone silent below the minimum rate; libmicrohttpd then sees the connection end and
/// closes it on its own thread.
void *cmhd_reaper_main(void *arg) {
    daemon_box *box = (daemon_box *)arg;
    while (!__atomic_load_n(&box->stopping, __ATOMIC_SEQ_CST)) {
        usleep(200000);
        uint64_t now = now_ms();
        uint64_t deadline = (uint64_t)box->config.header_deadline_seconds * 1000u;
        unsigned int rate = box->config.min_body_bytes_per_second;
        uint64_t grace = (box->config.header_deadline_seconds > 0 ? box->config.header_deadline_seconds : 1) * 1000u;
        uint64_t keep_alive_ms = (uint64_t)(box->config.connection_timeout_seconds > 0 ? box->config.connection_timeout_seconds : 30) * 1000u;
        pthread_mutex_lock(&box->conns_lock);
        for (conn_state *cs = box->conns; cs != NULL; cs = cs->next) {
            if (cs->shut || cs->fd < 0) continue;
            uint64_t elapsed = now - cs->phase_start_ms;
            int close_it = 0;
            // A kept-alive connection may idle between requests up to the inactivity timeout (a
            // client that keeps its connection for the next request); a fresh one gets the deadline.
            uint64_t header_deadline = cs->kept_alive && deadline < keep_alive_ms ? keep_alive_ms : deadline;
            if (cs->phase == PHASE_HEADER && deadline > 0 && elapsed > header_deadline) {
                close_it = 1;
                box->closed_header++;
            } else if (cs->phase == PHASE_BODY && rate > 0 && elapsed > grace &&
                       cs->body_bytes * 1000u < (uint64_t)rate * (elapsed - grace)) {
                close_it = 1;
                box->closed_body++;
            }
            if (close_it) {
                shutdown(cs->fd, SHUT_RDWR);
                cs->shut = 1;
            }
        }
        pthread_mutex_unlock(&box->conns_lock);
    }
    return NULL;
}

long cmhd_connections_open(void *daemon) {
    daemon_box *box = (daemon_box *)daemon;
    pthread_mutex_lock(&box->conns_lock);
    long n = box->open;
    pthread_mutex_unlock(&box->conns_lock);
    return n;
}

long cmhd_refused_per_address(void *daemon) {
    daemon_box *box = (daemon_box *)daemon;
    pthread_mutex_lock(&box->conns_lock);
    long n = box->refused_per_address;
    pthread_mutex_unlock(&box->conns_lock);
    return n;
}

long cmhd_slow_closed(void *daemon, int which) {
    daemon_box *box = (daemon_box *)daemon;
    pthread_mutex_lock(&box->conns_lock);
    long n = which == 0 ? box->closed_header : box->closed_body;
    pthread_mutex_unlock(&box->conns_lock);
    return n;
}
