#include "cmhd.h"
#include <microhttpd.h>
#include <arpa/inet.h>
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

typedef struct daemon_box {
    struct MHD_Daemon *daemon;
    long active;                     // requests between their first callback and their completion (atomic)
    long jobs;                       // offloaded jobs dispatched and not yet finished (atomic)
    cmhd_config config;              // copied; strings owned by the caller for the daemon's life
} daemon_box;

struct cmhd_job {
    daemon_box *box;
    struct MHD_Connection *conn;
    req_state *st;                   // lives until the completion callback, which cannot come while suspended
    cmhd_request req;
    char *method, *url, *authorization;
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

/// Calls the Swift handler on this (pool) thread and turns its answer into an MHD_Response (not yet queued).
static struct MHD_Response *build_response(daemon_box *box, struct MHD_Connection *conn, const char *url,
                                           const char *method, req_state *st, int *status_out) {
    cmhd_request req = {
        .method = method, .url = url,
        .body = st->too_large ? NULL : st->buf,
        .body_len = st->too_large ? 0 : st->len,
        .too_large = st->too_large,
        .connection = conn,
        .authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
        .route = st->route,
    };
    cmhd_response resp = { .status = 500, .body = NULL, .body_len = 0, .content_kind = 0, .request_id = NULL };
    box->config.handler(box->config.ctx, &req, &resp);
    return make_response(resp, st->too_large, status_out);
}

static char *dup_or_null(const char *s) { return s == NULL ? NULL : strdup(s); }

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
    if (job->method == NULL || job->url == NULL) {
        free(job->method); free(job->url); free(job->authorization); free(job);
        return MHD_NO;
    }
    job->req = (cmhd_request){
        .method = job->method, .url = job->url,
        .body = st->buf, .body_len = st->len, .too_large = 0,
        .connection = NULL, .authorization = job->authorization, .route = st->route,
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
    free(job->method); free(job->url); free(job->authorization); free(job);
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
    (void)conn; (void)toe;
    daemon_box *box = (daemon_box *)cls;
    req_state *st = (req_state *)*con_cls;
    if (st == NULL) return;
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
    struct MHD_Daemon *d;
    if (tls) {
        d = MHD_start_daemon(flags, config->port, NULL, NULL, access_cb, box,
                             MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                             MHD_OPTION_THREAD_POOL_SIZE, threads,
                             MHD_OPTION_CONNECTION_TIMEOUT, timeout,
                             MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
                             MHD_OPTION_NOTIFY_COMPLETED, completed_cb, box,
                             MHD_OPTION_HTTPS_MEM_CERT, config->tls_cert_pem,
                             MHD_OPTION_HTTPS_MEM_KEY, config->tls_key_pem,
                             MHD_OPTION_END);
    } else {
        d = MHD_start_daemon(flags, config->port, NULL, NULL, access_cb, box,
                             MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                             MHD_OPTION_THREAD_POOL_SIZE, threads,
                             MHD_OPTION_CONNECTION_TIMEOUT, timeout,
                             MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
                             MHD_OPTION_NOTIFY_COMPLETED, completed_cb, box,
                             MHD_OPTION_END);
    }
    if (d == NULL) {
        snprintf(error, error_len, "MHD_start_daemon failed on %s:%u (port in use, bad TLS material, or no permission)",
                 config->address ? config->address : "127.0.0.1", (unsigned)config->port);
        free(box);
        return NULL;
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
    MHD_stop_daemon(box->daemon);
    free(box);
}

const char *cmhd_header(void *connection, const char *name) {
    return MHD_lookup_connection_value((struct MHD_Connection *)connection, MHD_HEADER_KIND, name);
}

const char *cmhd_query(void *connection, const char *name) {
    return MHD_lookup_connection_value((struct MHD_Connection *)connection, MHD_GET_ARGUMENT_KIND, name);
}
