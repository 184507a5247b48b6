/*
 * Redaction of secrets in text bound for a support bundle (pure: no I/O).
 * Each secret is replaced by "[REDACTED:<kind>]" and counted by kind; the
 * value itself is never copied anywhere. Text is taken line by line, so a
 * private key block spanning lines is followed across calls.
 */
#ifndef HP_REDACT_H
#define HP_REDACT_H

#include <stddef.h>

#include "hp/buf.h"

enum hp_redact_kind {
	HP_RK_AWS_ACCESS_KEY,   /* AKIA…/ASIA… key ids */
	HP_RK_AWS_SECRET_KEY,   /* aws_secret_access_key values, 40-character secret keys */
	HP_RK_AWS_SESSION_TOKEN,/* aws_session_token, X-Amz-Security-Token, SessionToken */
	HP_RK_BEARER,           /* Authorization: Bearer …, Basic … */
	HP_RK_JWT,              /* eyJ….eyJ….… */
	HP_RK_KUBECONFIG,       /* client-key-data, token, id-token, refresh-token */
	HP_RK_PRIVATE_KEY,      /* PEM PRIVATE KEY blocks */
	HP_RK_URL_PASSWORD,     /* scheme://user:password@host */
	HP_RK_PASSWORD,         /* password=, passwd:, … */
	HP_RK_SECRET,           /* other key=value with a secret-looking key */
	HP_RK_SSM_TOKEN,        /* SSM session TokenValue */
	HP_RK__COUNT
};

/* "aws_access_key", … (the manifest's names). */
const char *hp_redact_kind_name(enum hp_redact_kind k);

struct hp_redact {
	int in_pem;                      /* inside a PRIVATE KEY block */
	size_t counts[HP_RK__COUNT];
	size_t total;
	struct hp_buf a, b;              /* scratch lines */
};

void hp_redact_init(struct hp_redact *r);
void hp_redact_release(struct hp_redact *r);
/*
 * Append text (n bytes, any content; lines end at '\n') to out with its
 * secrets replaced, counting them in r. A final line without '\n' is
 * taken as a whole line. out's cap applies (bytes past it are dropped and
 * -1 returned).
 */
int hp_redact(struct hp_redact *r, const char *text, size_t n, struct hp_buf *out);

#endif
