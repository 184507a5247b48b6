/*
 * The layers under the SSM sweep (include/hp/ssm.h), private to
 * src/collect/ssm/ and the tests that judge them. Bottom up: the WebSocket
 * codec (hp_ws_*), the agent message codec (hp_ssm_msg_*), the
 * reliable-stream bookkeeping (hp_ssm_rx_*, hp_ssm_tx_*), one session over
 * a byte transport (hp_ssm_session_run), the session-manager-plugin run,
 * one node end to end (hp_ssm_probe_node), and the rate limiter and worker
 * pool the sweep runs on.
 */
#ifndef HP_SSM_INT_H
#define HP_SSM_INT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "hp/aws.h"
#include "hp/buf.h"
#include "hp/ssm.h"
#include "hp/sys.h"

/* ------------------------------------------------------------ WebSocket */

enum hp_ws_op {
	HP_WS_CONT = 0,
	HP_WS_TEXT = 1,
	HP_WS_BINARY = 2,
	HP_WS_CLOSE = 8,
	HP_WS_PING = 9,
	HP_WS_PONG = 10
};

/* One decoded frame; payload points into the parsed buffer, unmasked. */
struct hp_ws_frame {
	int fin;
	int opcode;
	const uint8_t *payload;
	size_t len;
};

/*
 * Decode one frame from a server at buf[0..n). Returns the number of bytes
 * the frame spans, 0 when more bytes are needed, -1 on a protocol error
 * (*why says which). A masked frame is unmasked in place (servers must not
 * mask, so it is also an error). Payloads over max_payload are errors.
 */
long hp_ws_parse(uint8_t *buf, size_t n, size_t max_payload, struct hp_ws_frame *f,
		 const char **why);
/* Append one client frame, payload masked with mask, to out. */
void hp_ws_encode(struct hp_buf *out, int opcode, int fin, const void *p, size_t n,
		  const uint8_t mask[4]);
/* Sec-WebSocket-Accept for a Sec-WebSocket-Key (RFC 6455 4.2.2). */
void hp_ws_accept_for(const char *key, char out[29]);
/* The HTTP/1.1 upgrade request for path (path and query, verbatim). */
void hp_ws_request(struct hp_buf *out, const char *host, const char *path, const char *key);
/*
 * Check an upgrade reply head (status line and headers, up to the blank
 * line): 101, Upgrade: websocket, Connection: upgrade and the right
 * Sec-WebSocket-Accept. Returns 0, or -1 with why filled.
 */
int hp_ws_check_reply(const char *head, const char *key, char *why, size_t whyn);

/* Joins continuation frames into whole messages, under a size cap. */
struct hp_ws_asm {
	int active;            /* inside a fragmented message */
	int opcode;            /* its opcode (TEXT or BINARY) */
	struct hp_buf msg;     /* the message so far (capped) */
};

enum hp_ws_feed {
	HP_WS_MORE,            /* data frame absorbed; message not complete */
	HP_WS_MESSAGE,         /* asm->msg holds a complete message of asm->opcode */
	HP_WS_CONTROL,         /* a control frame: the caller handles f itself */
	HP_WS_BAD              /* protocol error (*why) */
};

/* An empty assembler for messages of at most max_message bytes; release frees it. */
void hp_ws_asm_init(struct hp_ws_asm *a, size_t max_message);
void hp_ws_asm_release(struct hp_ws_asm *a);
/* Feed one frame; after HP_WS_MESSAGE the caller consumes asm->msg before the next feed. */
enum hp_ws_feed hp_ws_asm_feed(struct hp_ws_asm *a, const struct hp_ws_frame *f, const char **why);

/* The byte transport under the WebSocket is a struct hp_stream (include/hp/sys.h). */

/* A WebSocket client connection over an hp_stream. */
struct hp_ws {
	struct hp_stream *io;
	struct hp_sys *sys;        /* clock and mask keys */
	struct hp_buf in;          /* received bytes not yet decoded (capped) */
	struct hp_ws_asm asm_;
	size_t max_frame;
	int closed;                /* a close frame was received or sent */
	unsigned pings;            /* pings answered */
};

/* Default caps: frames and messages of the data channel. */
#define HP_WS_MAX_FRAME ((size_t)1 << 20)
#define HP_WS_MAX_MESSAGE ((size_t)2 << 20)

/* A connection over an open transport (not owned: the caller closes it); release frees buffers. */
void hp_ws_init(struct hp_ws *ws, struct hp_stream *io, struct hp_sys *sys);
void hp_ws_release(struct hp_ws *ws);
/* HTTP upgrade on an open transport. 0, or -1 with why filled. */
int hp_ws_handshake(struct hp_ws *ws, const char *host, const char *path, int64_t deadline,
		    char *why, size_t whyn);
/* Send one whole message (or control frame) as a single masked frame. */
int hp_ws_send(struct hp_ws *ws, int opcode, const void *p, size_t n, int64_t deadline);
/*
 * Next data message (pings answered, pongs ignored). Returns 1 with
 * *opcode and msg filled, 0 when the deadline passed, -1 when the
 * connection closed or broke (why filled; a close frame is answered).
 */
int hp_ws_next(struct hp_ws *ws, int64_t deadline, int *opcode, struct hp_buf *msg, char *why,
	       size_t whyn);

/* ---------------------------------------------------- agent messages */

#define HP_SSM_HEADER_LEN 116u
#define HP_SSM_PAYLOAD_OFFSET 120u

/* Payload types. */
enum {
	HP_SSM_PT_OUTPUT = 1,
	HP_SSM_PT_ERROR = 2,
	HP_SSM_PT_SIZE = 3,
	HP_SSM_PT_PARAMETER = 4,
	HP_SSM_PT_HANDSHAKE_REQUEST = 5,
	HP_SSM_PT_HANDSHAKE_RESPONSE = 6,
	HP_SSM_PT_HANDSHAKE_COMPLETE = 7,
	HP_SSM_PT_ENC_CHALLENGE_REQUEST = 8,
	HP_SSM_PT_ENC_CHALLENGE_RESPONSE = 9,
	HP_SSM_PT_FLAG = 10,
	HP_SSM_PT_STDERR = 11,
	HP_SSM_PT_EXIT_CODE = 12
};

struct hp_ssm_msg {
	char type[33];             /* "output_stream_data", spaces and NULs stripped */
	uint32_t schema;
	uint64_t created_ms;
	int64_t seq;
	uint64_t flags;
	uint8_t id[16];            /* UUID in its usual byte order (halves un-swapped) */
	uint32_t payload_type;
	const uint8_t *payload;    /* points into the decoded buffer */
	size_t payload_len;
};

/*
 * Decode and validate one message: header length, type, CreatedDate, a
 * payload length equal to the bytes present, and the SHA-256 digest (not
 * checked for start/pause_publication). Returns 0, or -1 with *why set.
 */
int hp_ssm_msg_decode(const uint8_t *buf, size_t n, struct hp_ssm_msg *m, const char **why);
/* Append one encoded message (digest computed here) to out. */
void hp_ssm_msg_encode(struct hp_buf *out, const char *type, uint64_t created_ms, int64_t seq,
		       uint64_t flags, const uint8_t id[16], uint32_t payload_type, const void *p,
		       size_t n);
/* Lowercase hyphenated form of a UUID. */
void hp_ssm_uuid_format(const uint8_t id[16], char out[37]);
/* A fresh version-4 UUID from sys->random. */
void hp_ssm_uuid_new(struct hp_sys *sys, uint8_t id[16]);
/* The acknowledge payload (JSON) for message m, appended to out. */
void hp_ssm_ack_payload(struct hp_buf *out, const struct hp_ssm_msg *m);
/* Sequence number acknowledged by an acknowledge payload; -1 when malformed. */
int hp_ssm_ack_parse(const uint8_t *p, size_t n, int64_t *seq);

/* ---------------------------------------------------- reliable stream */

/* One message held back until the ones before it arrive. */
struct hp_ssm_held {
	int64_t seq;
	uint32_t payload_type;
	uint8_t *data;
	size_t len;
};

/* Receiving side: in-order delivery, bounded reordering, de-duplication. */
struct hp_ssm_rx {
	int64_t expected;
	struct hp_ssm_held *held;
	size_t nheld, held_alloc, max_held;
	size_t held_bytes, max_bytes;
};

enum hp_ssm_rx_verdict {
	HP_RX_DELIVER,     /* seq is the next one: process it now (then drain with hp_ssm_rx_pop) */
	HP_RX_HELD,        /* ahead of the next one: kept (copied) for later */
	HP_RX_DUPLICATE,   /* seen before: acknowledge again, do nothing else */
	HP_RX_FULL         /* ahead, but no room: neither kept nor acknowledged */
};

/* Expect seq 0 first; hold at most max_held messages and max_bytes ahead of it. */
void hp_ssm_rx_init(struct hp_ssm_rx *rx, size_t max_held, size_t max_bytes);
void hp_ssm_rx_release(struct hp_ssm_rx *rx);
/* Where a stream message goes; HELD copies it. */
enum hp_ssm_rx_verdict hp_ssm_rx_offer(struct hp_ssm_rx *rx, int64_t seq, uint32_t payload_type,
				       const uint8_t *p, size_t n);
/* Take the next held message if it is now in order (caller frees out->data). 1 or 0. */
int hp_ssm_rx_pop(struct hp_ssm_rx *rx, struct hp_ssm_held *out);

/* One sent, unacknowledged message. */
struct hp_ssm_unacked {
	int64_t seq;
	uint8_t *frame;            /* the encoded message, resent as is */
	size_t len;
	int64_t first_ms, sent_ms;
	int resends;
};

/* Sending side: sequence numbers, resend list, retransmission timeout. */
struct hp_ssm_tx {
	int64_t next_seq;
	struct hp_ssm_unacked *v;
	size_t n, alloc, max;
	double srtt_ms, rttvar_ms;
	long rto_ms;
};

#define HP_SSM_RTO_INITIAL_MS 200
#define HP_SSM_RTO_MAX_MS 1000

/* Sequence numbers from 0, at most max_unacked messages in flight, RTO 200 ms. */
void hp_ssm_tx_init(struct hp_ssm_tx *tx, size_t max_unacked);
void hp_ssm_tx_release(struct hp_ssm_tx *tx);
/* Register a message before it is written (a fast ack must find it). -1 when the list is full. */
int hp_ssm_tx_add(struct hp_ssm_tx *tx, int64_t seq, const void *frame, size_t len, int64_t now);
/* An acknowledgement for seq: drop it and update the RTO. 1 if it was pending. */
int hp_ssm_tx_ack(struct hp_ssm_tx *tx, int64_t seq, int64_t now);
/* The oldest message due for a resend, or NULL; the caller resends it and calls hp_ssm_tx_resent. */
struct hp_ssm_unacked *hp_ssm_tx_due(struct hp_ssm_tx *tx, int64_t now);
/* Note that u went out again at now. */
void hp_ssm_tx_resent(struct hp_ssm_tx *tx, struct hp_ssm_unacked *u, int64_t now);

/* --------------------------------------------------------- one session */

/* The data channel of one started session. */
struct hp_ssm_channel {
	const char *host;          /* Host header: "host" or "host:port" */
	const char *path;          /* path and query of StreamUrl */
	const char *token;         /* TokenValue */
	const char *client_id;     /* UUID string, one per run */
	const volatile sig_atomic_t *stop; /* non-zero: the run was interrupted; may be NULL */
};

/*
 * Speak one session over an open transport until the agent ends it or the
 * deadline passes: upgrade, OpenDataChannelInput, handshake (refusing
 * KMS), output collection with acknowledgements, reordering and
 * de-duplication. The transport is not closed here.
 */
enum hp_ssm_end hp_ssm_session_run(struct hp_stream *io, struct hp_sys *sys,
				   const struct hp_ssm_channel *ch, int64_t deadline,
				   struct hp_ssm_output *out);

/* Split "wss://host[:port]/path?query" into host (with port), port number and path. */
int hp_ssm_parse_url(const char *url, char *host, size_t hn, int *port, char *path, size_t pn);
/*
 * Open a TLS connection to the stream URL's host through sys->tls_connect
 * (the proxy variables and the CA bundle apply). Returns a transport to
 * close with its close(), or NULL with err filled.
 */
struct hp_stream *hp_ssm_tls_open(struct hp_sys *sys, const char *url, const char *ca_bundle,
				  int64_t deadline, char *err, size_t errn);

/* ------------------------------------------------ session-manager-plugin */

/*
 * Run the plugin under a pseudo-terminal for a started session, as the
 * aws CLI does, until it exits or the deadline passes (then it is killed).
 * response is {"SessionId","TokenValue","StreamUrl"}, request the
 * StartSession parameters JSON. Output lands in out (stdout only: the
 * plugin merges stderr into it).
 */
enum hp_ssm_end hp_ssm_plugin_run(struct hp_sys *sys, const struct hp_ssm_plugin_info *info,
				  const char *response, const char *region, const char *request,
				  const char *endpoint, int64_t deadline, struct hp_ssm_output *out);
/*
 * Split what the plugin printed into the command's output, its exit code
 * and how it ended (exposed for tests). Returns HP_SSM_DONE when the
 * session ended normally.
 */
enum hp_ssm_end hp_ssm_plugin_parse(const char *text, size_t n, struct hp_ssm_output *out);

/* ------------------------------------------------------------ one node */

/* Shared state of a sweep (rate limiter, abort flag), for hp_ssm_probe_node. */
struct hp_ssm_shared {
	struct hp_ssm_bucket *bucket;
	int abort;                     /* a fatal StartSession error: skip the rest (under lock) */
	char abort_reason[256];
	const volatile sig_atomic_t *stop; /* the run's interrupt flag, or NULL */
	int kms_seen;                  /* auto mode: go straight to the plugin (under lock) */
	void *lock;                    /* pthread mutex (opaque here) */
	/*
	 * The places of the nodes waiting for a rate token (under lock; room
	 * for one per worker): the token goes to the lowest, so nodes start in
	 * the sweep's order however the workers are scheduled. NULL: to
	 * whichever asks first.
	 */
	size_t *waiting;
	size_t nwaiting;
};

/*
 * Probe one node end to end: wait for a rate token, StartSession (retried
 * with jittered backoff on throttling and 5xx only, never after a
 * timeout), the data channel natively or through the plugin, and
 * TerminateSession when the session did not end by itself. a is this
 * worker's own client (its settings are changed per call).
 */
void hp_ssm_probe_node(struct hp_aws *a, const struct hp_ssm_config *c, struct hp_ssm_shared *sh,
		       const struct hp_ssm_target *t, struct hp_ssm_result *r);

/* ------------------------------------------- rate limiter, worker pool */

/*
 * A token bucket: rate tokens per second, at most burst saved up. The rate
 * adapts: halved on throttling (not below a tenth of a call per second),
 * creeping back up to the configured rate on success.
 */
struct hp_ssm_bucket {
	double rate_per_ms;
	double max_rate_per_ms;
	double burst;
	double tokens;
	int64_t last_ms;
};

/* A bucket holding one token at now. */
void hp_ssm_bucket_init(struct hp_ssm_bucket *b, double rate_per_s, double burst, int64_t now);
/* Take one token: 0 when taken, else the milliseconds to wait before trying again. */
long hp_ssm_bucket_take(struct hp_ssm_bucket *b, int64_t now);
/* The milliseconds until a token is there (0: one is), taking none. */
long hp_ssm_bucket_due(struct hp_ssm_bucket *b, int64_t now);
/* The service said slow down: halve the rate. */
void hp_ssm_bucket_throttled(struct hp_ssm_bucket *b, int64_t now);
/* A call went through: a twentieth of the configured rate back. */
void hp_ssm_bucket_ok(struct hp_ssm_bucket *b);

/*
 * Run fn(ud, i) for every i in [0, n) on at most workers threads (1 runs
 * inline). Items are handed out in order; returns when all are done.
 */
void hp_ssm_pool_run(size_t n, int workers, void (*fn)(void *ud, size_t i, int worker), void *ud);

/* Full-jitter backoff before attempt (1-based) number attempt+1. */
long hp_ssm_backoff_ms(struct hp_sys *sys, int attempt, long base_ms, long cap_ms);

#endif
