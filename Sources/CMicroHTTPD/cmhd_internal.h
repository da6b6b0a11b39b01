// cmhd's private header: what the request path (cmhd.c) and the connection guard (cmhd_guard.c)
// share. Not part of the module's interface (include/cmhd.h).
#ifndef CMHD_INTERNAL_H
#define CMHD_INTERNAL_H

#include "cmhd.h"
#include <microhttpd.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/// A client's IP address as compared by the per-address cap: the 4 bytes of IPv4 (an IPv4-mapped
/// IPv6 address counts as that IPv4 address) or the 16 of IPv6; len 0 for other families.
typedef struct addr_key {
    unsigned char bytes[16];
    int len;
} addr_key;

/// Per-connection accounting for the slow-client deadlines and the per-address cap
/// (MHD_OPTION_NOTIFY_CONNECTION).
enum { PHASE_HEADER = 0, PHASE_BODY = 1, PHASE_HANDLING = 2 };
typedef struct conn_state {
    struct conn_state *prev, *next;
    int fd;
    addr_key addr;                   // the client's address (per-address cap)
    int phase;                       // PHASE_*: what the connection is waiting for from the client
    uint64_t phase_start_ms;         // when the phase began (monotonic)
    uint64_t body_bytes;             // body bytes received in PHASE_BODY
    int kept_alive;                  // a response was sent: PHASE_HEADER is the wait for the next request
    int shut;                        // the reaper shut the socket down
} conn_state;

typedef struct daemon_box {
    struct MHD_Daemon *daemon;
    long active;                     // requests between their first callback and their completion (atomic)
    long jobs;                       // offloaded jobs dispatched and not yet finished (atomic)
    cmhd_config config;              // copied; strings owned by the caller for the daemon's life
    pthread_mutex_t conns_lock;      // guards the list below and every conn_state in it
    conn_state *conns;
    long open;
    long closed_header, closed_body;
    long refused_per_address;        // connections refused by the per-address cap
    pthread_t reaper;
    int reaper_running;
    int stopping;                    // atomic: the reaper ends
} daemon_box;

/// The connection's guard state (libmicrohttpd's socket context), or NULL.
conn_state *cmhd_conn_state_of(struct MHD_Connection *conn);

/// Moves the connection to `phase` (PHASE_*), restarting its clock (under the box's lock).
void cmhd_set_phase(daemon_box *box, struct MHD_Connection *conn, int phase);

/// Counts `n` body bytes; returns 0 when the body is slower than the minimum rate (the caller
/// closes the connection).
int cmhd_body_progress(daemon_box *box, struct MHD_Connection *conn, size_t n);

/// MHD_OPTION_NOTIFY_CONNECTION: a connection's guard state from its start to its close.
void cmhd_notify_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                            enum MHD_ConnectionNotificationCode code);

/// libmicrohttpd's accept policy: the per-address connection cap, refusals counted.
enum MHD_Result cmhd_accept_policy(void *cls, const struct sockaddr *addr, socklen_t addrlen);

/// The slow-client reaper thread (pthread start routine; `arg` is the daemon_box).
void *cmhd_reaper_main(void *arg);

#endif
