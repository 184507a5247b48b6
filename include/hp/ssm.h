/*
 * The SSM Session Manager client's public face: probe many HyperPod nodes,
 * each with one read-only command, through ssm:StartSession and the
 * session's data channel, spoken natively (WebSocket over TLS, then the
 * agent's binary message layer) or through an installed
 * session-manager-plugin, by a bounded worker pool under a StartSession
 * rate limit. What a sweep is given (targets, settings) and what it gives
 * back (one result per node) are here; the codecs and the layers under the
 * sweep are private to src/collect/ssm/ (ssm-int.h).
 * KMS-encrypted sessions are refused by the native client.
 */
#ifndef HP_SSM_H
#define HP_SSM_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "hp/aws.h"
#include "hp/buf.h"
#include "hp/sys.h"

/* ------------------------------------------------ one session's output */

/* Output caps (the snapshot contract). */
#define HP_SSM_MAX_STDOUT ((size_t)1 << 20)
#define HP_SSM_MAX_STDERR ((size_t)64 << 10)

/* How a session ended. */
enum hp_ssm_end {
	HP_SSM_DONE,        /* the agent ended it (channel_closed or exit code, then close) */
	HP_SSM_TIMEOUT,     /* the deadline passed first */
	HP_SSM_LOST,        /* the connection dropped before the end */
	HP_SSM_REFUSED,     /* the stream URL refused us (TLS, upgrade, closed at once) */
	HP_SSM_KMS,         /* the session wants KMS encryption: refused */
	HP_SSM_FAILED,      /* the agent reported a failure, or a protocol error */
	HP_SSM_UNSUPPORTED, /* the handshake asked for an action this client refused; it ended there */
	HP_SSM_STOPPED      /* the run was interrupted (SIGINT/SIGTERM) */
};

/* "done", "timeout", ... for logs and tests. */
const char *hp_ssm_end_name(enum hp_ssm_end e);

struct hp_ssm_output {
	struct hp_buf out;          /* stdout, capped at HP_SSM_MAX_STDOUT */
	struct hp_buf err;          /* stderr, capped at HP_SSM_MAX_STDERR */
	int out_capped, err_capped; /* bytes were dropped at a cap */
	int has_exit;
	int exit_code;
	int closed;                 /* channel_closed received */
	char detail[256];           /* why it failed, or the channel_closed text */
	char agent_version[48];
	char session_type[40];
	char refused_action[48];    /* a handshake action refused as unsupported, "" if none */
	/* Counters for tests and --debug. */
	unsigned received, duplicates, held, dropped_bad, acks_sent, resent;
};

/* Empty output with the stdout/stderr caps and no exit code; release frees it. */
void hp_ssm_output_init(struct hp_ssm_output *o);
void hp_ssm_output_release(struct hp_ssm_output *o);

/* ------------------------------------------------ session-manager-plugin */

/* What running the plugin found. */
struct hp_ssm_plugin_info {
	int present;               /* found and answered --version */
	char version[48];
	char error[256];           /* why it is unusable */
	/* The run's interrupt flag: a session under way ends (HP_SSM_STOPPED); may be NULL. */
	const volatile sig_atomic_t *stop;
};

/* Look for session-manager-plugin on PATH and read its version (through sys->run). */
void hp_ssm_plugin_probe(struct hp_sys *sys, struct hp_ssm_plugin_info *info);

/* ------------------------------------------------------- one node, many */

enum hp_ssm_transport { HP_SSM_NATIVE, HP_SSM_PLUGIN, HP_SSM_AUTO };

enum hp_ssm_state { HP_SSM_PROBED, HP_SSM_UNREACHABLE, HP_SSM_SKIPPED };

/* "probed", "unreachable" or "skipped" (the snapshot's words). */
const char *hp_ssm_state_name(enum hp_ssm_state s);

/* A node to probe. */
struct hp_ssm_target {
	const char *instance_id;
	const char *group;
	const char *instance_type;
	char target[512];          /* sagemaker-cluster:<id>_<group>-<instance> */
	size_t place;              /* its place in the sweep's order (set by hp_ssm_sweep) */
};

/* How one node ended. */
struct hp_ssm_result {
	enum hp_ssm_state state;
	char reason[320];
	enum hp_ssm_transport used;    /* NATIVE or PLUGIN */
	struct hp_ssm_output output;
	int64_t started_ms;            /* monotonic time of the first StartSession call; 0 if none */
	int64_t duration_ms;           /* from then to the end */
	int start_attempts;
	int terminated;                /* TerminateSession was called */
	/* A StartSession/TerminateSession failure worth recording under "calls". */
	struct hp_aws_result failed_call;
	const char *failed_action;     /* "StartSession", "TerminateSession" or NULL */
};

struct hp_ssm_bucket;

/* Settings shared by every node of a sweep. */
struct hp_ssm_config {
	const char *command;           /* the remote command line */
	enum hp_ssm_transport transport;
	int concurrency;               /* workers */
	double rate_per_s;             /* StartSession calls per second */
	long timeout_ms;               /* per node, all of it */
	int max_start_attempts;        /* StartSession attempts on throttling / 5xx */
	long backoff_base_ms, backoff_cap_ms;
	struct hp_ssm_plugin_info plugin;
	char client_id[37];
	/* Set (by a signal handler) when the run is interrupted: no new session, open ones end. */
	const volatile sig_atomic_t *stop;
	/*
	 * Per sweep, optional. on_done is called in the worker as soon as node
	 * i's session is over (before progress; calls run at once in several
	 * workers): the place to decode its output and keep what the caller
	 * needs, so nothing of a node is held past its session. With on_done
	 * set, hp_ssm_sweep's results may be NULL: each worker then uses a
	 * result of its own, released after the call. target_of fills node i's
	 * target when its turn comes (then targets may be NULL), so a sweep
	 * over many nodes builds one target per worker, not one per node.
	 */
	void (*on_done)(void *ud, size_t i, struct hp_ssm_result *r);
	void (*target_of)(void *ud, size_t i, struct hp_ssm_target *t);
	void *hook_ud;
	/* Optional: a stdout cap other than HP_SSM_MAX_STDOUT (native transport; `hpnode bundle`). */
	size_t max_stdout;
};

/* Fill the defaults: native, 16 workers, 3/s, 180 s, 8 attempts. */
void hp_ssm_config_defaults(struct hp_ssm_config *c);

/*
 * Descriptors one session may hold at once (its socket, the control
 * channel's, a pseudo-terminal or pipes with the plugin; ~3.4 measured) and
 * those kept for the rest of the run (stdio, the HTTP connections, files).
 */
#define HP_SSM_FDS_PER_SESSION 4
#define HP_SSM_FDS_RESERVED 48
/* The workers that fit an open-file limit of fd_limit (0: unknown, want kept); at least 1. */
int hp_ssm_fit_concurrency(int want, long fd_limit);

/* Free a result's output and kept call. */
void hp_ssm_result_release(struct hp_ssm_result *r);

/* Progress of a sweep, for a terminal display. */
struct hp_ssm_progress {
	size_t done, total, unreachable, skipped;
};

/*
 * Probe every target with c->concurrency workers sharing one rate
 * limiter; results[i] belongs to targets[i] (either may be NULL with the
 * config's hooks, above). progress (may be NULL) is called under a lock
 * after each node. Each worker gets a copy of a; the call statistics are
 * added back to a.
 */
void hp_ssm_sweep(struct hp_aws *a, const struct hp_ssm_config *c,
		  const struct hp_ssm_target *targets, size_t n, struct hp_ssm_result *results,
		  void (*progress)(void *ud, const struct hp_ssm_progress *p), void *ud);

#endif
