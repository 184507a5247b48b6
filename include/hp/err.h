/*
 * The error list: one X-macro declares every error code, its category and
 * its message. A category maps to one documented exit status.
 *
 * Library code records the first error in a struct hp_error and returns -1;
 * only main() and the cmd-* files decide to exit.
 */
#ifndef HP_ERR_H
#define HP_ERR_H

#include "hp/util.h"

/* Exit statuses (documented in README.md). */
#define HP_EXIT_OK 0       /* triage complete */
#define HP_EXIT_FATAL 1    /* AWS error, cluster not found, prerequisite */
#define HP_EXIT_USAGE 2    /* bad flags, arguments or configuration */
#define HP_EXIT_FINDINGS 3 /* --fail-on threshold reached */
#define HP_EXIT_CREDS 4    /* every credential problem: missing, rejected, expired */
#define HP_EXIT_UPLOAD 5   /* bundle: the archive was written, its --upload failed */

#define HP_ERR_CATEGORIES(X) \
	X(NONE, HP_EXIT_OK)  \
	X(USAGE, HP_EXIT_USAGE) \
	X(CONFIG, HP_EXIT_USAGE) \
	X(AUTH, HP_EXIT_CREDS) \
	X(NETWORK, HP_EXIT_FATAL) \
	X(REMOTE, HP_EXIT_FATAL) \
	X(INTERNAL, HP_EXIT_FATAL)

#define HP_ERRORS(X) \
	X(HP_OK, NONE, "ok") \
	X(HP_ERR_USAGE, USAGE, "invalid arguments") \
	X(HP_ERR_NO_REGION, CONFIG, "no AWS region configured") \
	X(HP_ERR_CONFIG, CONFIG, "invalid configuration") \
	X(HP_ERR_NO_CREDS, AUTH, "no AWS credentials found") \
	X(HP_ERR_CREDS, AUTH, "AWS credentials rejected") \
	X(HP_ERR_FILE, CONFIG, "cannot read file") \
	X(HP_ERR_PROC, INTERNAL, "cannot run command") \
	X(HP_ERR_HTTP, NETWORK, "HTTP request failed") \
	X(HP_ERR_TIMEOUT, NETWORK, "request timed out") \
	X(HP_ERR_API, REMOTE, "AWS API call failed") \
	X(HP_ERR_PARSE, REMOTE, "cannot parse reply") \
	X(HP_ERR_NOT_FOUND, REMOTE, "resource not found") \
	X(HP_ERR_TOO_BIG, REMOTE, "reply exceeds size limit") \
	X(HP_ERR_INTERNAL, INTERNAL, "internal error")

enum hp_err_category {
#define HP_X(name, exit) HP_ERRCAT_##name,
	HP_ERR_CATEGORIES(HP_X)
#undef HP_X
};

enum hp_err {
#define HP_X(code, cat, msg) code,
	HP_ERRORS(HP_X)
#undef HP_X
	HP_ERR__COUNT
};

/* First error wins: later hp_error_set() calls on a set error are ignored. */
struct hp_error {
	enum hp_err code;
	char msg[1024];
};

#define HP_ERROR_INIT { HP_OK, "" }

/* Records the error (if none yet) and returns -1 for `return hp_error_set(...)`. */
int hp_error_set(struct hp_error *e, enum hp_err code, const char *fmt, ...) HP_PRINTF(3, 4);
void hp_error_clear(struct hp_error *e);
const char *hp_err_name(enum hp_err code);
const char *hp_err_message(enum hp_err code);
enum hp_err_category hp_err_category(enum hp_err code);
int hp_err_exit_status(enum hp_err code);

#endif
