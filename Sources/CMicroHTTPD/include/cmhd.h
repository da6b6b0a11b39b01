// CMicroHTTPD — C wrappers over libmicrohttpd for what Swift cannot call directly (variadic
// MHD_start_daemon, option lists, constants that do not import). See INTEROP-NOTES.md.
//
// The wrapper owns libmicrohttpd's access-handler state machine: it accumulates each request body
// from the `upload_data` calls, enforces a per-request byte limit as bytes arrive, and calls ONE
// Swift-side handler per complete request with the method, URL and whole body. The handler fills a
// `cmhd_response` (status, content type, malloc'ed body that the wrapper hands to libmicrohttpd to
// free). Bodies over the limit are answered 413 without buffering the excess.
//
// Routes that may take long (a password hash, a face match, a document read) must not run on
// libmicrohttpd's pool threads: each pool thread serves many connections, so a slow handler there
// holds up every other request on that thread (libmicrohttpd manual, "Flow control"). For those the
// `offload` callback answers 1; the wrapper then suspends the connection
// (MHD_suspend_connection, daemon started with MHD_ALLOW_SUSPEND_RESUME) and passes a job to
// `dispatch`, which runs the handler on a thread of the application's own and hands the answer back
// with cmhd_job_finish; that resumes the connection and the answer is sent from the pool thread.
#ifndef CMHD_H
#define CMHD_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/// The libmicrohttpd version string, e.g. "0.9.75". Never NULL.
const char *cmhd_version(void);

/// One complete HTTP request as the wrapper hands it to the handler.
typedef struct cmhd_request {
    const char *method;        ///< "GET", "POST", …
    const char *url;           ///< path without the query string
    const char *body;          ///< request body (may be NULL when body_len == 0)
    size_t body_len;           ///< bytes in body
    int too_large;             ///< 1 when the body exceeded the limit (body is then empty)
    void *connection;          ///< opaque; pass to cmhd_header / cmhd_query — only while the handler runs
                               ///< on the pool thread (NULL for an offloaded request)
    const char *authorization; ///< the Authorization header, or NULL
    long route;                ///< what the limit callback stored in `*route` for this request (the matched route)
    const char *query;         ///< the query-string arguments as "key=value" lines ('\n'-separated; key and
                               ///< value decoded, then '%', '=' and '\n' re-escaped as %25 %3D %0A), or NULL when none
    const char *client_address; ///< the peer's IP address as text ("127.0.0.1", "::1"), or "" when unknown;
                               ///< valid while the handler runs (the per-client limits key on it)
    const char *content_type;  ///< the Content-Type header, or NULL (the JSON routes refuse another media type: 415)
} cmhd_request;

/// The handler's answer. `body` must be allocated with malloc (or be NULL); the wrapper frees it.
typedef struct cmhd_response {
    int status;                ///< HTTP status code
    char *body;                ///< malloc'ed bytes, ownership passes to the wrapper
    size_t body_len;
    int content_kind;          ///< 0 = application/json, 1 = Prometheus text (text/plain; version=0.0.4)
    char *request_id;          ///< malloc'ed NUL-terminated X-Request-Id value, or NULL (wrapper frees)
    char *content_type;        ///< malloc'ed Content-Type overriding content_kind, or NULL (wrapper frees)
    char *headers;             ///< malloc'ed extra headers, "Name: value" lines ended by '\n', or NULL (wrapper frees)
} cmhd_response;

/// Returns the body limit in bytes for a request, decided from its method and path before any body byte is read.
/// It may store a value in `*route` (initially -1: e.g. the index of the route it matched); the wrapper hands
/// it to `offload` and in `cmhd_request.route`, so the application matches each request's route once.
typedef int64_t (*cmhd_limit_fn)(void *ctx, const char *method, const char *url, long *route);
/// Handles one complete request (or an over-limit one, with too_large = 1).
typedef void (*cmhd_handler_fn)(void *ctx, const cmhd_request *request, cmhd_response *response);

/// One offloaded request: its connection is suspended until cmhd_job_finish is called, exactly once.
typedef struct cmhd_job cmhd_job;
/// 1 when the complete request whose limit callback stored `route` should be handled off the pool thread (via `dispatch`).
typedef int (*cmhd_offload_fn)(void *ctx, long route);
/// Takes an offloaded request and returns at once; the application calls cmhd_job_finish(job, …)
/// later, from any thread (calling it before returning is allowed too).
typedef void (*cmhd_dispatch_fn)(void *ctx, cmhd_job *job);

/// Daemon settings. `address` is an IPv4 dotted quad ("127.0.0.1", "0.0.0.0"). `port` 0 picks a free
/// port (read it back with cmhd_bound_port). `threads` is the size of the internal thread pool (epoll).
/// `tls_cert_pem` / `tls_key_pem` (PEM text, both or neither) switch on HTTPS.
typedef struct cmhd_config {
    const char *address;
    uint16_t port;
    unsigned int threads;
    unsigned int connection_timeout_seconds;
    const char *tls_cert_pem;
    const char *tls_key_pem;
    cmhd_limit_fn limit;
    cmhd_handler_fn handler;
    cmhd_offload_fn offload;   ///< NULL: every request is handled on the pool thread
    cmhd_dispatch_fn dispatch; ///< required when offload is set
    void *ctx;
    /// Slow clients (0 = off each). A connection whose first request header is not complete this
    /// many seconds after it opened is closed; a kept-alive one, whose next header is not complete
    /// max(this, connection_timeout_seconds) after its previous response was sent (the wrapper's own
    /// accounting: a notify-connection callback and a reaper thread that shuts the socket down).
    unsigned int header_deadline_seconds;
    /// A body that arrives slower than this many bytes per second, measured after a grace of
    /// `header_deadline_seconds` (at least 1 s) from its header, is cut off.
    unsigned int min_body_bytes_per_second;
    /// Connections one client IP address may hold (the wrapper's accept policy, which counts its
    /// refusals: cmhd_refused_per_address); 0 = no limit.
    unsigned int per_ip_connection_limit;
    /// Connections the daemon holds at once (MHD_OPTION_CONNECTION_LIMIT); 0 = libmicrohttpd's default.
    unsigned int connection_limit;
} cmhd_config;

/// Starts a daemon (internal polling thread, thread pool, epoll). Returns NULL on failure and writes
/// a reason into `error` (size `error_len`).
void *cmhd_start(const cmhd_config *config, char *error, size_t error_len);
/// The port the daemon listens on (useful after port 0).
uint16_t cmhd_bound_port(void *daemon);
/// Requests received and not yet completed (response fully sent or connection gone).
long cmhd_active_requests(void *daemon);
/// Stops accepting new connections; requests in flight continue.
void cmhd_quiesce(void *daemon);
/// Stops the daemon and joins its threads. Waits first for every offloaded job to be finished
/// (handlers always return), so no job outlives the daemon.
void cmhd_stop(void *daemon);
/// The request of an offloaded job (valid until cmhd_job_finish).
const cmhd_request *cmhd_job_request(cmhd_job *job);
/// Hands the answer of an offloaded job back (any thread), frees the job and resumes its connection.
/// `response->body` and `request_id` pass to the wrapper as for the synchronous handler.
void cmhd_job_finish(cmhd_job *job, cmhd_response *response);
/// Offloaded jobs dispatched and not yet finished.
long cmhd_jobs_outstanding(void *daemon);
/// Connections open now.
long cmhd_connections_open(void *daemon);
/// Connections refused because their address held per_ip_connection_limit connections, since start.
long cmhd_refused_per_address(void *daemon);
/// Connections closed because their header missed the deadline (`which` 0) or their body was
/// slower than the minimum rate (`which` 1), since start.
long cmhd_slow_closed(void *daemon, int which);
/// The value of a request header (case-insensitive name), or NULL.
const char *cmhd_header(void *connection, const char *name);
/// The value of a query-string argument, or NULL.
const char *cmhd_query(void *connection, const char *name);

#ifdef __cplusplus
}
#endif
#endif
