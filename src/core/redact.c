/*
 * Secret redaction for support bundles (include/hp/redact.h). Every line
 * goes through a fixed series of passes, each copying the line with the
 * secrets it knows replaced: private key blocks, passwords in URLs,
 * bearer tokens, JWTs, key=value pairs whose key looks secret, AWS access
 * key ids, then bare 40-character secret keys. A replaced value is never
 * kept anywhere; only its kind is counted.
 */
#include <ctype.h>
#include <string.h>

#include "hp/redact.h"

#define SCRATCH_MAX ((size_t)64 << 20)
#define LINE_MAX_BYTES ((size_t)1 << 20)

static const char *const kind_names[HP_RK__COUNT] = {
	"aws_access_key", "aws_secret_key", "aws_session_token", "bearer_token", "jwt",
	"kubeconfig_credential", "private_key", "url_password", "password", "secret",
	"ssm_session_token",
};

const char *hp_redact_kind_name(enum hp_redact_kind k)
{
	return (unsigned)k < HP_RK__COUNT ? kind_names[k] : "unknown";
}

void hp_redact_init(struct hp_redact *r)
{
	memset(r, 0, sizeof(*r));
	hp_buf_init(&r->a, SCRATCH_MAX);
	hp_buf_init(&r->b, SCRATCH_MAX);
}

void hp_redact_release(struct hp_redact *r)
{
	hp_buf_release(&r->a);
	hp_buf_release(&r->b);
}

static void mark(struct hp_redact *r, enum hp_redact_kind k, struct hp_buf *out)
{
	r->counts[k]++;
	r->total++;
	hp_buf_puts(out, "[REDACTED:");
	hp_buf_puts(out, kind_names[k]);
	hp_buf_putc(out, ']');
}

/* Where needle occurs in p[0..n), or NULL. */
static const char *find(const char *p, size_t n, const char *needle)
{
	size_t k = strlen(needle), i;

	if (k > n)
		return NULL;
	for (i = 0; i + k <= n; i++)
		if (p[i] == needle[0] && !memcmp(p + i, needle, k))
			return p + i;
	return NULL;
}

typedef void (*pass_fn)(struct hp_redact *r, const char *p, size_t n, struct hp_buf *out);

/* ---- private keys ---- */

static int pem_begin(const char *p, size_t n, const char **body)
{
	const char *b = find(p, n, "-----BEGIN ");
	const char *k;

	if (!b)
		return 0;
	k = find(b, n - (size_t)(b - p), "PRIVATE KEY-----");
	if (!k || find(b, (size_t)(k - b), "\n"))
		return 0;
	*body = k + strlen("PRIVATE KEY-----");
	return 1;
}

static void pass_pem(struct hp_redact *r, const char *p, size_t n, struct hp_buf *out)
{
	const char *body, *end;

	if (r->in_pem) {
		end = find(p, n, "-----END ");
		if (end && find(end, n - (size_t)(end - p), "PRIVATE KEY-----")) {
			r->in_pem = 0;
			hp_buf_putn(out, end, n - (size_t)(end - p));
		}
		return;
	}
	if (!pem_begin(p, n, &body)) {
		hp_buf_putn(out, p, n);
		return;
	}
	hp_buf_putn(out, p, (size_t)(body - p));
	end = find(body, n - (size_t)(body - p), "-----END ");
	if (end) {
		/* The whole block on one line (JSON with \n escapes, a one-line blob). */
		mark(r, HP_RK_PRIVATE_KEY, out);
		hp_buf_putn(out, end, n - (size_t)(end - p));
	} else if (n - (size_t)(body - p) > 16) {
		/* A block cut on this line: everything after its start goes. */
		mark(r, HP_RK_PRIVATE_KEY, out);
	} else {
		mark(r, HP_RK_PRIVATE_KEY, out);
		r->in_pem = 1;
	}
}

/* ---- scheme://user:password@host ---- */

static void pass_url(struct hp_redact *r, const char *p, size_t n, struct hp_buf *out)
{
	size_t i = 0;

	while (i < n) {
		const char *s = find(p + i, n - i, "://");
		size_t a, j, colon = 0;

		if (!s) {
			hp_buf_putn(out, p + i, n - i);
			return;
		}
		a = (size_t)(s - p) + 3;
		for (j = a; j < n; j++) {
			char c = p[j];
			if (c == '@' || c == '/' || c == ' ' || c == '\t' || c == '"' || c == '\'' ||
			    c == '<' || c == '>' || c == '[')
				break;
			if (c == ':' && !colon)
				colon = j;
		}
		if (j < n && p[j] == '@' && colon && colon + 1 < j) {
			hp_buf_putn(out, p + i, colon + 1 - i);
			mark(r, HP_RK_URL_PASSWORD, out);
			hp_buf_putc(out, '@');
			i = j + 1;
		} else {
			hp_buf_putn(out, p + i, a - i);
			i = a;
		}
	}
}

/* ---- tokens by their shape ---- */

static int tok_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '~' || c == '+' ||
	       c == '/' || c == '=' || c == '-';
}

static int b64url(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

static void pass_bearer(struct hp_redact *r, const char *p, size_t n, struct hp_buf *out)
{
	size_t i = 0, last = 0;

	while (i + 7 < n) {
		if ((p[i] == 'B' || p[i] == 'b') && !strncmp(p + i + 1, "earer", 5) &&
		    (p[i + 6] == ' ' || p[i + 6] == '\t') && (i == 0 || !isalnum((unsigned char)p[i - 1]))) {
			size_t v = i + 7, e;

			while (v < n && p[v] == ' ')
				v++;
			for (e = v; e < n && tok_char(p[e]); e++)
				;
			if (e - v >= 8) {
				hp_buf_putn(out, p + last, v - last);
				mark(r, HP_RK_BEARER, out);
				i = last = e;
				continue;
			}
		}
		i++;
	}
	hp_buf_putn(out, p + last, n - last);
}

static void pass_jwt(struct hp_redact *r, const char *p, size_t n, struct hp_buf *out)
{
	size_t i = 0, last = 0;

	while (i + 3 < n) {
		if (p[i] == 'e' && p[i + 1] == 'y' && p[i + 2] == 'J' &&
		    (i == 0 || !b64url(p[i - 1]))) {
			size_t e = i, dots = 0, seg = 0, ok = 1;

			while (e < n && (b64url(p[e]) || p[e] == '.')) {
				if (p[e] == '.') {
					if (seg < 2)
						ok = 0;
					dots++;
					seg = 0;
				} else {
					seg++;
				}
				e++;
			}
			if (ok && dots == 2) {
				hp_buf_putn(out, p + last, i - last);
				mark(r, HP_RK_JWT, out);
				i = last = e;
				continue;
			}
			i = e;
			continue;
		}
		i++;
	}
	hp_buf_putn(out, p + last, n - last);
}

/* ---- key=value, key: value, "key": "value", --key value ---- */

static int has(const char *k, const char *w)
{
	return strstr(k, w) != NULL;
}

/* The kind of a key's value, or -1 when the key does not look secret. */
static int key_kind(const char *key, size_t n)
{
	char k[64];
	size_t i;

	if (!n || n >= sizeof(k))
		return -1;
	for (i = 0; i < n; i++)
		k[i] = (char)tolower((unsigned char)key[i]);
	k[n] = '\0';
	if (has(k, "secret_access_key") || has(k, "secretaccesskey") || has(k, "aws_secret") ||
	    has(k, "secret_key") || has(k, "secretkey"))
		return HP_RK_AWS_SECRET_KEY;
	if (has(k, "session_token") || has(k, "sessiontoken") || has(k, "security_token") ||
	    has(k, "security-token") || has(k, "securitytoken"))
		return HP_RK_AWS_SESSION_TOKEN;
	if (has(k, "tokenvalue") || has(k, "token_value"))
		return HP_RK_SSM_TOKEN;
	if (has(k, "access_key_id") || has(k, "accesskeyid"))
		return HP_RK_AWS_ACCESS_KEY;
	if (!strcmp(k, "token") || has(k, "client-key-data") || has(k, "client_key_data") ||
	    has(k, "id-token") || has(k, "refresh-token") || has(k, "id_token") ||
	    has(k, "refresh_token"))
		return HP_RK_KUBECONFIG;
	if (!strcmp(k, "authorization") || !strcmp(k, "proxy-authorization"))
		return HP_RK_BEARER;
	if (has(k, "password") || has(k, "passwd") || has(k, "passphrase") || !strcmp(k, "pwd") ||
	    (n > 4 && !strcmp(k + n - 4, "_pwd")) || (n > 4 && !strcmp(k + n - 4, "pass")))
		return HP_RK_PASSWORD;
	if (has(k, "secret") || has(k, "token") || has(k, "apikey") || has(k, "api_key") ||
	    has(k, "api-key") || has(k, "private_key") || has(k, "privatekey") ||
	    has(k, "private-key") || !strcmp(k, "credential") || has(k, "signature"))
		return HP_RK_SECRET;
	return -1;
}

static int key_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

/* Whether v[0..n) is only a count (tokens=1234, max_tokens: 4096), not a secret. */
static int numeric(const char *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)v[i]) && v[i] != '.' && v[i] != ',' && v[i] != '/')
			return 0;
	return 1;
}

/*
 * The value after a separator at p[at]: [*vs, *ve) without its quotes.
 * whole: it runs to the end of the line (or its quote), as an
 * Authorization header's does.
 */
static int value_span(const char *p, size_t n, size_t at, int whole, size_t *vs, size_t *ve)
{
	size_t v = at + 1, e;
	char q = 0;

	while (v < n && (p[v] == ' ' || p[v] == '\t'))
		v++;
	if (v < n && (p[v] == '"' || p[v] == '\'')) {
		q = p[v];
		v++;
	} else if (v + 1 < n && p[v] == '\\' && p[v + 1] == '"') {
		q = '\\';
		v += 2;
	}
	for (e = v; e < n; e++) {
		if (q == '\\') {
			if (p[e] == '\\' && e + 1 < n && p[e + 1] == '"')
				break;
		} else if (q) {
			if (p[e] == '\\' && e + 1 < n) {
				e++;
				continue;
			}
			if (p[e] == q)
				break;
		} else if (whole ? 0 : (p[e] == ' ' || p[e] == '\t' || p[e] == ',' || p[e] == ';' ||
					 p[e] == '&' || p[e] == '"' || p[e] == '\'' || p[e] == '}' ||
					 p[e] == ')' || p[e] == ']' || p[e] == '<')) {
			break;
		}
	}
	if (!q && whole)
		while (e > v && (p[e - 1] == ' ' || p[e - 1] == '\r'))
			e--;
	*vs = v;
	*ve = e;
	return e > v;
}

static void pass_keyvalue(struct hp_redact *r, const char *p, size_t n, struct hp_buf *out)
{
	size_t i, last = 0;

	for (i = 0; i < n; i++) {
		size_t ke, ks, vs, ve;
		int kind, flag = 0;

		if (p[i] == '=' || p[i] == ':') {
			ke = i;
			if (p[i] == '=' && i && p[i - 1] == '=')
				continue;
			if (p[i] == ':' && i + 2 < n && p[i + 1] == '/' && p[i + 2] == '/')
				continue;
			while (ke > last && (p[ke - 1] == ' ' || p[ke - 1] == '\t'))
				ke--;
			if (ke > last && (p[ke - 1] == '"' || p[ke - 1] == '\''))
				ke--;
			if (ke > last + 1 && p[ke - 1] == '"' && p[ke - 2] == '\\')
				ke -= 2;
		} else if (p[i] == ' ' && i > 2 && key_char(p[i - 1])) {
			/* --password VALUE on a command line. */
			ke = i;
			flag = 1;
		} else {
			continue;
		}
		for (ks = ke; ks > last && key_char(p[ks - 1]); ks--)
			;
		if (flag && !(ks + 2 < ke && p[ks] == '-' && p[ks + 1] == '-'))
			continue;
		kind = flag ? key_kind(p + ks + 2, ke - ks - 2) : key_kind(p + ks, ke - ks);
		if (kind < 0)
			continue;
		if (!value_span(p, n, i, kind == HP_RK_BEARER, &vs, &ve))
			continue;
		/* An earlier pass's marker inside the value stays, and ends it. */
		{
			const char *mk = find(p + vs, ve - vs, "[REDACTED:");
			if (mk)
				ve = (size_t)(mk - p);
			if (ve == vs)
				continue;
		}
		if (ve - vs >= 10 && !strncmp(p + vs, "[REDACTED:", 10))
			continue;
		if (kind == HP_RK_SECRET && numeric(p + vs, ve - vs))
			continue;
		/* A shell variable or substitution ($TOKEN, $(curl ...)) names a value, it is none. */
		if (p[vs] == '$' || p[vs] == '{' || p[vs] == '[')
			continue;
		if (kind == HP_RK_BEARER && !strncmp(p + vs, "[REDACTED:", 10))
			continue;
		hp_buf_putn(out, p + last, vs - last);
		mark(r, (enum hp_redact_kind)kind, out);
		last = ve;
		i = ve ? ve - 1 : 0;
	}
	hp_buf_putn(out, p + last, n - last);
}

/* ---- AWS access key ids and bare secret keys ---- */

static int upper_digit(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static void pass_akid(struct hp_redact *r, const char *p, size_t n, struct hp_buf *out)
{
	static const char *const pre[] = { "AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA",
					   "AIPA", "ABIA", "ACCA" };
	size_t i, last = 0, k;

	for (i = 0; i + 20 <= n; i++) {
		if (p[i] != 'A' || (i && isalnum((unsigned char)p[i - 1])))
			continue;
		for (k = 0; k < sizeof(pre) / sizeof(pre[0]); k++)
			if (!memcmp(p + i, pre[k], 4))
				break;
		if (k == sizeof(pre) / sizeof(pre[0]))
			continue;
		for (k = 4; k < 20 && upper_digit(p[i + k]); k++)
			;
		if (k < 20 || (i + 20 < n && isalnum((unsigned char)p[i + 20])))
			continue;
		hp_buf_putn(out, p + last, i - last);
		mark(r, HP_RK_AWS_ACCESS_KEY, out);
		last = i + 20;
		i = last - 1;
	}
	hp_buf_putn(out, p + last, n - last);
}

static int secret_char(char c)
{
	return isalnum((unsigned char)c) || c == '/' || c == '+';
}

static void pass_secret40(struct hp_redact *r, const char *p, size_t n, struct hp_buf *out)
{
	size_t i = 0, last = 0;

	while (i < n) {
		size_t e, k;
		int up = 0, lo = 0, dig = 0;

		if (!secret_char(p[i])) {
			i++;
			continue;
		}
		for (e = i; e < n && secret_char(p[e]); e++)
			;
		if (e - i == 40 && (e == n || p[e] != '=')) {
			for (k = i; k < e; k++) {
				up |= isupper((unsigned char)p[k]);
				lo |= islower((unsigned char)p[k]);
				dig |= isdigit((unsigned char)p[k]);
			}
			if (up && lo && dig) {
				hp_buf_putn(out, p + last, i - last);
				mark(r, HP_RK_AWS_SECRET_KEY, out);
				last = e;
			}
		}
		i = e;
	}
	hp_buf_putn(out, p + last, n - last);
}

static const pass_fn passes[] = {
	pass_pem, pass_url, pass_bearer, pass_jwt, pass_keyvalue, pass_akid, pass_secret40,
};

/* One line (without its '\n') through every pass. */
static int line(struct hp_redact *r, const char *p, size_t n, int nl, struct hp_buf *out)
{
	struct hp_buf *a = &r->a, *b = &r->b;
	size_t i;
	int was_pem = r->in_pem;

	hp_buf_reset(a);
	hp_buf_putn(a, p, n);
	for (i = 0; i < sizeof(passes) / sizeof(passes[0]); i++) {
		struct hp_buf *t;

		hp_buf_reset(b);
		passes[i](r, a->buf, a->len, b);
		/* A line inside a key block is gone whole, its newline too. */
		if (i == 0 && was_pem && r->in_pem)
			return 0;
		t = a;
		a = b;
		b = t;
	}
	if (hp_buf_add(out, a->buf, a->len) || (nl && hp_buf_addc(out, '\n')))
		return -1;
	return 0;
}

int hp_redact(struct hp_redact *r, const char *text, size_t n, struct hp_buf *out)
{
	size_t i = 0;
	int rc = 0;

	while (i < n) {
		const char *nl = memchr(text + i, '\n', n - i);
		size_t k = nl ? (size_t)(nl - (text + i)) : n - i;

		/* A line longer than any log line is taken in pieces. */
		if (k > LINE_MAX_BYTES) {
			k = LINE_MAX_BYTES;
			nl = NULL;
		}
		if (line(r, text + i, k, nl != NULL, out))
			rc = -1;
		i += k + (nl != NULL);
	}
	return rc;
}
