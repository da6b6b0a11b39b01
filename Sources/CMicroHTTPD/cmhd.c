#include "cmhd_internal.h"
#include <microhttpd.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cmhd_version(void) { return MHD_get_version(); }

/// Per-request state kept by libmicrohttpd between access-handler calls.
typedef struct req_state {
    char *buf;
    size_t len, cap;
    int64_t limit;
    long route;                      // stored by the limit callback (the application's matched route)
    int too_large;
    int responded;                   // a response was queued
    struct MHD_Response *pending;    // built early (body over limit) or by an offloaded job, not yet queued
    int pending_status;
    int dispatched;                  // handed to the application's dispatcher (connection suspended)
    int finished;                    // the dispatched job has finished and set `pending`
} req_state;

struct cmhd_job {
    daemon_box *box;
    struct MHD_Connection *conn;
    req_state *st;                   // lives until the completion callback, which cannot come while suspended
    cmhd_request req;
    char *method, *url, *authorization, *query;
    char client[64];                 // the peer's address as text (cmhd_request.client_address)
};

static const char *kEmpty = "";

/// Adds "Name: value\n" lines to a response (a line without ':' is skipped). Modifies `lines` in place.
static void add_headers(struct MHD_Response *r, char *lines) {
    for (char *line = lines; line != NULL && *line != '\0';) {
        char *end = strchr(line, '\n');
        if (end != NULL) *end = '\0';
        char *colon = strchr(line, ':');
        if (colon != NULL) {
            *colon = '\0';
            char *value = colon + 1;
            while (*value == ' ') value++;
            MHD_add_response_header(r, line, value);
        }
        line = end != NULL ? end + 1 : NULL;
    }
}

/// Turns the handler's answer into an MHD_Response (not yet queued); takes ownership of its buffers.
static struct MHD_Response *make_response(cmhd_response resp, int too_large, int *status_out) {
    struct MHD_Response *r;
    if (resp.body != NULL && resp.body_len > 0) {
        r = MHD_create_response_from_buffer(resp.body_len, resp.body, MHD_RESPMEM_MUST_FREE);
        if (r == NULL) free(resp.body);
    } else {
        free(resp.body);
        r = MHD_create_response_from_buffer(0, (void *)kEmpty, MHD_RESPMEM_PERSISTENT);
    }
    if (r != NULL) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                resp.content_type != NULL ? resp.content_type
                                : resp.content_kind == 1 ? "text/plain; version=0.0.4; charset=utf-8" : "application/json");
        if (resp.request_id != NULL) MHD_add_response_header(r, "X-Request-Id", resp.request_id);
        if (too_large) MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
        add_headers(r, resp.headers);
    }
    free(resp.request_id);
    free(resp.content_type);
    free(resp.headers);
    *status_out = resp.status;
    return r;
}

static char *query_lines(struct MHD_Connection *conn);
static char *dup_or_null(const char *s) { return s == NULL ? NULL : strdup(s); }

/// Writes the connection's peer IP address as text into `out` ("" when unknown).
static void client_address(struct MHD_Connection *conn, char *out, size_t n) {
    out[0] = '\0';
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return;
    const struct sockaddr *sa = info->client_addr;
    if (sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)n);
    } else if (sa->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, (socklen_t)n);
    }
}

/// Calls the Swift handler on this (pool) thread and turns its answer into an MHD_Response (not yet queued).
static struct MHD_Response *build_response(daemon_box *box, struct MHD_Connection *conn, const char *url,
                                           const char *method, req_state *st, int *status_out) {
    char client[64];
    client_address(conn, client, sizeof client);
    cmhd_request req = {
        .method = method, .url = url,
        .body = st->too_large ? NULL : st->buf,
        .body_len = st->too_large ? 0 : st->len,
        .too_large = st->too_large,
        .connection = conn,
        .authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
        .route = st->route,
        .client_address = client,
    };
    char *query = query_lines(conn);
    req.query = query;
    cmhd_response resp = { .status = 500, .body = NULL, .body_len = 0, .content_kind = 0, .request_id = NULL };
    box->config.handler(box->config.ctx, &req, &resp);
    free(query);
    return make_response(resp, st->too_large, status_out);
}


/// A growing buffer for the query lines.
typedef struct { char *buf; size_t len, cap; int failed; } qbuf;

/// Makes room for `n` more bytes and a NUL; sets `failed` when memory is short.
static int qgrow(qbuf *q, size_t n) {
    if (q->failed) return 0;
    if (q->len + n + 1 <= q->cap) return 1;
    size_t cap = q->cap == 0 ? 256 : q->cap;
    while (q->len + n + 1 > cap) cap *= 2;
    char *b = (char *)realloc(q->buf, cap);
    if (b == NULL) { q->failed = 1; return 0; }
    q->buf = b;
    q->cap = cap;
    return 1;
}

/// Appends `s` with '%', '=' and '\n' escaped (so a line splits at its first '=').
static void qput(qbuf *q, const char *s) {
    for (; s != NULL && *s != '\0'; s++) {
        const char *esc = *s == '%' ? "%25" : *s == '=' ? "%3D" : *s == '\n' ? "%0A" : NULL;
        if (!qgrow(q, 3)) return;
        if (esc) { memcpy(q->buf + q->len, esc, 3); q->len += 3; } else { q->buf[q->len++] = *s; }
    }
}

static void qchar(qbuf *q, char c) { if (qgrow(q, 1)) q->buf[q->len++] = c; }

static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    qbuf *q = (qbuf *)cls;
    if (q->len > 8192) return MHD_NO;           // a query string this long is not ours: stop reading it
    qput(q, key);
    qchar(q, '=');
    qput(q, value);
    qchar(q, '\n');
    return q->failed ? MHD_NO : MHD_YES;
}

/// The request's query arguments as "key=value\n" lines (malloc'ed), or NULL when there are none.
static char *query_lines(struct MHD_Connection *conn) {
    qbuf q = { NULL, 0, 0, 0 };
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, query_arg, &q);
    if (q.failed || q.len == 0) { free(q.buf); return NULL; }
    q.buf[q.len] = '\0';
    return q.buf;
}

/// Suspends the connection and hands the request to the application's dispatcher. The connection
/// comes back through cmhd_job_finish → MHD_resume_connection → access_cb, which queues st->pending.
static enum MHD_Result offload(daemon_box *box, struct MHD_Connection *conn, const char *url, const char *method,
                               req_state *st) {
    cmhd_job *job = (cmhd_job *)calloc(1, sizeof *job);
    if (job == NULL) return MHD_NO;
    job->box = box;
    job->conn = conn;
    job->st = st;
    job->method = strdup(method);
    job->url = strdup(url);
    job->authorization = dup_or_null(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION));
    job->query = query_lines(conn);
    client_address(conn, job->client, sizeof job->client);
    if (job->method == NULL || job->url == NULL) {
        free(job->method); free(job->url); free(job->authorization); free(job->query); free(job);
        return MHD_NO;
    }
    job->req = (cmhd_request){
        .method = job->method, .url = job->url,
        .body = st->buf, .body_len = st->len, .too_large = 0,
        .connection = NULL, .authorization = job->authorization, .route = st->route, .query = job->query,
        .client_address = job->client,
    };
    st->dispatched = 1;
    __atomic_add_fetch(&box->jobs, 1, __ATOMIC_SEQ_CST);
    // Suspend before dispatching, so a job that finishes at once still finds the connection suspended.
    MHD_suspend_connection(conn);
    box->config.dispatch(box->config.ctx, job);
    return MHD_YES;
}

const cmhd_request *cmhd_job_request(cmhd_job *job) { return &job->req; }

void cmhd_job_finish(cmhd_job *job, cmhd_response *response) {
    int status = 500;
    cmhd_response resp = *response;
    response->body = NULL;
    response->request_id = NULL;
    response->content_type = NULL;
    response->headers = NULL;
    struct MHD_Response *r = make_response(resp, 0, &status);
    req_state *st = job->st;
    st->pending = r;                 // NULL (out of memory) makes access_cb close the connection
    st->pending_status = status;
    st->finished = 1;
    daemon_box *box = job->box;
    struct MHD_Connection *conn = job->conn;
    free(job->method); free(job->url); free(job->authorization); free(job->query); free(job);
    MHD_resume_connection(conn);     // orders the writes above before the pool thread's next look
    __atomic_sub_fetch(&box->jobs, 1, __ATOMIC_SEQ_CST);
}

long cmhd_jobs_outstanding(void *daemon) {
    daemon_box *box = (daemon_box *)daemon;
    return __atomic_load_n(&box->jobs, __ATOMIC_SEQ_CST);
}

static enum MHD_Result queue(struct MHD_Connection *conn, req_state *st, struct MHD_Response *r, int status) {
    enum MHD_Result ok = MHD_queue_response(conn, (unsigned int)status, r);
    if (ok == MHD_YES) {
        st->responded = 1;
        MHD_destroy_response(r);
        if (st->pending == r) st->pending = NULL;
    }
    return ok;
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version, const char *upload_data, size_t *upload_data_size,
                                 void **con_cls) {
    (void)version;
    daemon_box *box = (daemon_box *)cls;
    req_state *st = (req_state *)*con_cls;
    if (st == NULL) {
        // First call: headers are in, no body byte read yet.
        st = (req_state *)calloc(1, sizeof *st);
        if (st == NULL) return MHD_NO;
        *con_cls = st;
        __atomic_add_fetch(&box->active, 1, __ATOMIC_SEQ_CST);
        cmhd_set_phase(box, conn, PHASE_BODY);
        st->route = -1;
        st->limit = box->config.limit(box->config.ctx, method, url, &st->route);
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl != NULL) {
            char *end = NULL;
            long long n = strtoll(cl, &end, 10);
            if (end != cl && n > st->limit) {
                st->too_large = 1;
                int status = 413;
                struct MHD_Response *r = build_response(box, conn, url, method, st, &status);
                if (r == NULL) return MHD_NO;
                if (queue(conn, st, r, status) == MHD_YES) return MHD_YES;
                st->pending = r;
                st->pending_status = status;
            }
        }
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (!cmhd_body_progress(box, conn, n)) return MHD_NO;   // slower than the minimum body rate: closed
        if (st->responded || st->too_large) {
            // Discard the excess; answer as soon as libmicrohttpd lets us.
            if (!st->responded && st->pending != NULL) queue(conn, st, st->pending, st->pending_status);
            return MHD_YES;
        }
        if ((int64_t)(st->len + n) > st->limit) {
            st->too_large = 1;
            free(st->buf);
            st->buf = NULL;
            st->len = st->cap = 0;
            int status = 413;
            struct MHD_Response *r = build_response(box, conn, url, method, st, &status);
            if (r == NULL) return MHD_NO;
            if (queue(conn, st, r, status) != MHD_YES) {
                st->pending = r;
                st->pending_status = status;
            }
            return MHD_YES;
        }
        if (st->len + n > st->cap) {
            size_t cap = st->cap ? st->cap : 1024;
            while (cap < st->len + n) cap *= 2;
            if ((int64_t)cap > st->limit) cap = (size_t)st->limit;
            char *nb = (char *)realloc(st->buf, cap);
            if (nb == NULL) return MHD_NO;
            st->buf = nb;
            st->cap = cap;
        }
        memcpy(st->buf + st->len, upload_data, n);
        st->len += n;
        return MHD_YES;
    }
    // Final call: the whole request is in (or, for an offloaded request, its job has finished).
    if (!st->dispatched) cmhd_set_phase(box, conn, PHASE_HANDLING);
    if (st->responded) return MHD_YES;
    if (st->pending != NULL) return queue(conn, st, st->pending, st->pending_status);
    if (st->dispatched) return st->finished ? MHD_NO : MHD_YES;   // finished without a response: out of memory
    if (box->config.offload != NULL && box->config.offload(box->config.ctx, st->route))
        return offload(box, conn, url, method, st);
    int status = 500;
    struct MHD_Response *r = build_response(box, conn, url, method, st, &status);
    if (r == NULL) return MHD_NO;
    enum MHD_Result ok = queue(conn, st, r, status);
    if (ok != MHD_YES) MHD_destroy_response(r);
    return ok;
}

static void completed_cb(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe) {
    (void)toe;
    daemon_box *box = (daemon_box *)cls;
    req_state *st = (req_state *)*con_cls;
    if (st == NULL) return;
    cmhd_set_phase(box, conn, PHASE_HEADER);   // a kept-alive connection now waits for its next header
    conn_state *cs = cmhd_conn_state_of(conn);
    if (cs != NULL) {
        pthread_mutex_lock(&box->conns_lock);
        cs->kept_alive = 1;
        pthread_mutex_unlock(&box->conns_lock);
    }
    __atomic_sub_fetch(&box->active, 1, __ATOMIC_SEQ_CST);
    if (st->pending != NULL) MHD_destroy_response(st->pending);
    free(st->buf);
    free(st);
    *con_cls = NULL;
}

void *cmhd_start(const cmhd_config *config, char *error, size_t error_len) {
    if (config == NULL || config->handler == NULL || config->limit == NULL) {
        snprintf(error, error_len, "handler and limit callbacks are required");
        return NULL;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(config->port);
    if (inet_pton(AF_INET, config->address ? config->address : "127.0.0.1", &addr.sin_addr) != 1) {
        snprintf(error, error_len, "not an IPv4 address: %s", config->address ? config->address : "(null)");
        return NULL;
    }
    int tls = (config->tls_cert_pem != NULL && config->tls_key_pem != NULL);
    if ((config->tls_cert_pem != NULL) != (config->tls_key_pem != NULL)) {
        snprintf(error, error_len, "TLS needs both a certificate and a key");
        return NULL;
    }
    if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        snprintf(error, error_len, "this libmicrohttpd was built without TLS");
        return NULL;
    }
    daemon_box *box = (daemon_box *)calloc(1, sizeof *box);
    if (box == NULL) {
        snprintf(error, error_len, "out of memory");
        return NULL;
    }
    box->config = *config;
    if (config->offload != NULL && config->dispatch == NULL) {
        snprintf(error, error_len, "an offload callback needs a dispatch callback");
        return NULL;
    }
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME;
    if (tls) flags |= MHD_USE_TLS;
    unsigned int threads = config->threads > 0 ? config->threads : 1;
    unsigned int timeout = config->connection_timeout_seconds > 0 ? config->connection_timeout_seconds : 30;
    pthread_mutex_init(&box->conns_lock, NULL);
    // The options shared by both modes, then the optional limits (MHD_OPTION_ARRAY ends at MHD_OPTION_END).
    struct MHD_OptionItem ops[16];
    int n = 0;
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, &addr };
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)threads, NULL };
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)timeout, NULL };
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024, NULL };
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed_cb, box };
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)cmhd_notify_connection, box };
    // The per-address cap is the accept policy callback's (cmhd_accept_policy), so its refusals are counted.
    if (config->connection_limit > 0)
        ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, (intptr_t)config->connection_limit, NULL };
    if (tls) {
        ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)config->tls_cert_pem };
        ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)config->tls_key_pem };
    }
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
    struct MHD_Daemon *d = MHD_start_daemon(flags, config->port, cmhd_accept_policy, box, access_cb, box,
                                            MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
    if (d == NULL) {
        snprintf(error, error_len, "MHD_start_daemon failed on %s:%u (port in use, bad TLS material, or no permission)",
                 config->address ? config->address : "127.0.0.1", (unsigned)config->port);
        pthread_mutex_destroy(&box->conns_lock);
        free(box);
        return NULL;
    }
    if (config->header_deadline_seconds > 0 || config->min_body_bytes_per_second > 0) {
        if (pthread_create(&box->reaper, NULL, cmhd_reaper_main, box) == 0) box->reaper_running = 1;
    }
    box->daemon = d;
    return box;
}

uint16_t cmhd_bound_port(void *daemon) {
    daemon_box *box = (daemon_box *)daemon;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(box->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

long cmhd_active_requests(void *daemon) {
    daemon_box *box = (daemon_box *)daemon;
    return __atomic_load_n(&box->active, __ATOMIC_SEQ_CST);
}

void cmhd_quiesce(void *daemon) {
    daemon_box *box = (daemon_box *)daemon;
    MHD_socket s = MHD_quiesce_daemon(box->daemon);
    if (s != MHD_INVALID_SOCKET) close(s);
}

void cmhd_stop(void *daemon) {
    daemon_box *box = (daemon_box *)daemon;
    // A suspended connection must not outlive the daemon: wait for the jobs (handlers always return).
    while (__atomic_load_n(&box->jobs, __ATOMIC_SEQ_CST) > 0) usleep(5000);
    __atomic_store_n(&box->stopping, 1, __ATOMIC_SEQ_CST);
    if (box->reaper_running) pthread_join(box->reaper, NULL);
    MHD_stop_daemon(box->daemon);
    pthread_mutex_destroy(&box->conns_lock);
    free(box);
}

const char *cmhd_header(void *connection, const char *name) {
    return MHD_lookup_connection_value((struct MHD_Connection *)connection, MHD_HEADER_KIND, name);
}

const char *cmhd_query(void *connection, const char *name) {
    return MHD_lookup_connection_value((struct MHD_Connection *)connection, MHD_GET_ARGUMENT_KIND, name);
}
