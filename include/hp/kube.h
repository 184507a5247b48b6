/*
 * The kubectl wrapper: runs kubectl through hp_sys->run with an argument
 * vector (never a shell string), an explicit environment, a timeout and a
 * cap on what it may print, and classifies how each run ended so that a
 * kubectl that cannot reach or authenticate to the cluster is never read
 * as "nothing wrong".
 *
 * Environment given to kubectl (nothing else of hpnode's is passed on):
 *   - PATH and HOME (kubectl finds its exec plugins and ~/.kube there),
 *     KUBECONFIG when set and no --kubeconfig was given, KUBECACHEDIR,
 *     TMPDIR, and LANG=C / LC_ALL=C so its messages are stable;
 *   - the proxy variables (HTTPS_PROXY, HTTP_PROXY, NO_PROXY and their
 *     lower-case forms), which kubectl needs to reach a server behind one;
 *   - the AWS variables an exec credential plugin needs to obtain a token
 *     (`aws eks get-token`, aws-iam-authenticator): profile, region, the
 *     config and credential file paths, static or session credentials,
 *     web identity, container credentials, CA bundle, metadata switch.
 *     EKS kubeconfigs authenticate this way, so without them every call
 *     would fail; they are the same credentials the user's own kubectl
 *     would see. --profile overrides AWS_PROFILE so the token is minted
 *     for the identity hpnode itself uses. AWS_ENDPOINT_URL* are not
 *     passed: a token must come from the real STS.
 * The strings are wiped when the wrapper is released.
 */
#ifndef HP_KUBE_H
#define HP_KUBE_H

#include <cjson/cJSON.h>

#include "hp/buf.h"
#include "hp/sys.h"

/* Per kubectl run; each HTTP request inside it gets half of this. */
#define HP_KUBE_TIMEOUT_MS 120000L
/* What one kubectl run may print on stdout (a 20,000-node list is ~150 MiB). */
#define HP_KUBE_MAX_OUT ((size_t)128 << 20)
#define HP_KUBE_MAX_ERR ((size_t)1 << 20)

/* How one kubectl run ended. */
enum hp_kube_status {
	HP_KUBE_OK = 0,
	HP_KUBE_MISSING,      /* kubectl could not be started (not on PATH) */
	HP_KUBE_TIMEOUT,      /* killed at the deadline, or kubectl's own request timeout */
	HP_KUBE_AUTH,         /* credentials missing, rejected or expired; exec plugin failed */
	HP_KUBE_FORBIDDEN,    /* authenticated, but RBAC does not allow the read */
	HP_KUBE_NOT_FOUND,    /* the named object does not exist */
	HP_KUBE_UNREACHABLE,  /* no connection, TLS failure, DNS */
	HP_KUBE_CONFIG,       /* no kubeconfig, unknown context, unreadable file */
	HP_KUBE_TOO_BIG,      /* stdout reached the cap */
	HP_KUBE_PARSE,        /* -o json output that is not a JSON object */
	HP_KUBE_ERROR,        /* any other non-zero exit */
	HP_KUBE_INTERRUPTED   /* the run was interrupted (SIGINT/SIGTERM): not run, or killed */
};

struct hp_kube_opts {
	const char *kubeconfig;   /* --kubeconfig FILE, or NULL for kubectl's default */
	const char *context;      /* --context NAME, or NULL for the current context */
	const char *aws_profile;  /* hpnode's --profile, exported as AWS_PROFILE */
	const char *program;      /* NULL: "kubectl" searched on PATH */
	long timeout_ms;          /* per run; 0: HP_KUBE_TIMEOUT_MS */
	int disabled;             /* --no-kube: the collector records a skip */
	/*
	 * hp_collect_kube calls this before each of its reads (done of total
	 * finished, now the one starting) and once when it stops (now NULL);
	 * NULL for none. Called on the collector's thread.
	 */
	void (*progress)(void *ud, int done, int total, const char *now);
	void *progress_ud;
};

struct hp_kube {
	struct hp_sys *sys;
	const char *program;
	const char *kubeconfig;
	const char *context;
	long timeout_ms;
	size_t max_out;
	char **env;               /* NULL-terminated, owned; wiped on release */
	int64_t deadline_ms;      /* run budget (monotonic ms; 0: none): runs are cut to it */
	long budget_s;            /* the budget, for messages */
	int debug;                /* 1: one stderr line per run (its arguments, outcome, duration) */
};

struct hp_kube_result {
	enum hp_kube_status status;
	int exit_status;          /* kubectl's exit status, -1 when it never ran */
	char message[512];        /* kubectl's own error line, "" on success */
	cJSON *json;              /* parsed stdout for HP_KUBE_JSON runs (owned) */
	struct hp_buf out;        /* raw stdout of other runs (logs) */
};

/* Flags for hp_kube_run. */
#define HP_KUBE_JSON 1        /* append "-o json" and parse stdout */

/* Set up the wrapper (copies nothing from o but pointers; o must outlive k). */
void hp_kube_init(struct hp_kube *k, struct hp_sys *sys, const struct hp_kube_opts *o);
/* Free the environment (wiped first). */
void hp_kube_release(struct hp_kube *k);

/*
 * Run `kubectl [--kubeconfig F] [--context C] --request-timeout=Ns ARGS...`
 * (args NULL-terminated). Returns 0 when the run ended HP_KUBE_OK, else -1;
 * r is filled either way and must be released.
 */
int hp_kube_run(struct hp_kube *k, const char *const *args, int flags, struct hp_kube_result *r);
/*
 * `kubectl get ... -o json` for a list: 0 with its "items" array in
 * r->json, else -1 with r->status and r->message saying why (a reply
 * without an "items" list is HP_KUBE_PARSE).
 */
int hp_kube_get_items(struct hp_kube *k, const char *const *args, struct hp_kube_result *r);
/*
 * Like hp_kube_run without HP_KUBE_JSON, for output too long to hold: each
 * piece of stdout goes to on_out(ud, data, n) as it arrives (pieces end
 * anywhere, not at lines; r->out stays empty), at most max_bytes in all (0:
 * k->max_out; the run is stopped there, HP_KUBE_TOO_BIG), within timeout_ms
 * (0: k->timeout_ms; the run budget still cuts it). An hp_sys whose run()
 * keeps stdout in res->out instead (a test's) has it handed over in one
 * piece after the run, so callers see the same either way.
 */
int hp_kube_stream(struct hp_kube *k, const char *const *args,
		   void (*on_out)(void *ud, const char *data, size_t n), void *ud,
		   size_t max_bytes, long timeout_ms, struct hp_kube_result *r);
void hp_kube_result_release(struct hp_kube_result *r);

/* "ok", "missing", "timeout", "auth", ... (stable; stored in snapshots). */
const char *hp_kube_status_name(enum hp_kube_status s);

/* Classify a finished run from its exit status and stderr (exposed for tests). */
enum hp_kube_status hp_kube_classify(int exit_status, int timed_out, const char *err);

/* The line of kubectl's stderr that says what went wrong, into out (exposed for tests). */
void hp_kube_error_line(const char *err, char *out, size_t n);

/*
 * Whether two API server URLs name the same server: scheme and host compared
 * without case, default ports (443, 80) made explicit, trailing slashes of
 * the path ignored. NULL or unparsable URLs are never the same.
 */
int hp_kube_same_server(const char *a, const char *b);

#endif
