/*
 * The support bundle's collection (`hpnode bundle`): the read-only
 * script each node runs over SSM, the reading of what it printed back into
 * files, and the CloudWatch streams of a time window. What becomes of the
 * files (redaction, caps, the archive) is the command's (src/cli/cmd-bundle.c).
 */
#ifndef HP_BUNDLE_H
#define HP_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include "hp/aws.h"
#include "hp/buf.h"
#include "hp/snapshot.h"

/* What the node script collects. */
struct hp_bundle_opts {
	int64_t from_s, until_s;   /* the window, seconds since the epoch (UTC) */
	size_t file_cap;           /* bytes kept of one file (its tail) */
	int job_scripts;           /* also Slurm's saved batch scripts (--job-scripts) */
	char nonce[33];            /* the marker's random part (hex), fixed per run */
};

/* The remote command line: the node script, base64 inside `sh -c`. */
void hp_bundle_command(const struct hp_bundle_opts *o, struct hp_buf *out);

enum hp_bundle_state {
	HP_BF_OK,        /* collected (maybe cut to its tail: cut) */
	HP_BF_ABSENT,    /* not on the node (no such file, command not installed) */
	HP_BF_PARTIAL,   /* the node's output ended inside it (per-node cap, session cut) */
};

/* One file of a node's output. */
struct hp_bundle_file {
	const char *name;          /* path inside the node's folder ("journal/kubelet.log") */
	const char *source;        /* the command or path it came from */
	const char *data;          /* its bytes (not NUL-terminated) */
	size_t len;
	size_t size;               /* bytes the node sent, before the cap */
	int cut;                   /* more than the file cap: only the tail is in data */
	int exit_code;             /* the command's, -1 when unknown */
	enum hp_bundle_state state;
};

/*
 * Split a node's output into its files, calling fn for each in order.
 * Names the node chose itself (directory entries) are made safe for an
 * archive. Returns how many files were seen; *complete is 1 when the
 * script's DONE marker arrived.
 */
size_t hp_bundle_parse(const struct hp_bundle_opts *o, const char *text, size_t len,
		       void (*fn)(void *ud, const struct hp_bundle_file *f), void *ud,
		       int *complete);

/* The names (and sources) of the files the script always tries, for the manifest. */
size_t hp_bundle_planned(const char *const **names, const char *const **sources);

/*
 * The cluster's CloudWatch streams of the window (LifecycleConfig/ and
 * SagemakerHealthMonitoringAgent/ prefixes, FilterLogEvents without a
 * pattern, at most pages x 10,000 events each), one text per prefix:
 * fn(ud, name, text, len, note) with note NULL or why it is incomplete.
 * Failed calls are recorded in the snapshot.
 */
void hp_bundle_cloudwatch(struct hp_aws *a, struct hp_snapshot *s, int64_t from_s, int64_t until_s,
			  int pages, size_t cap,
			  void (*fn)(void *ud, const char *name, const char *text, size_t len,
				     const char *note),
			  void *ud);

/* ms since the epoch as 2026-12-01T03:58:20Z ("?" when it cannot be). */
void hp_bundle_utc(int64_t ms, char out[32]);

#endif
