/*
 * kubectl as a child process (include/hp/kube.h): argument vector, a fixed
 * environment allowlist, deadline, capped output, error classification,
 * and the server URL comparison the collector uses to trust a kubeconfig
 * (a node's instance id is the core's: src/core/facts/kube-index.c). It never
 * talks to the
 * API server itself and never runs anything but read-only kubectl verbs
 * chosen by its callers.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/text.h"
#include "hp/array.h"
#include "hp/json.h"
#include "hp/kube.h"
#include "hp/util.h"

/* Passed through when set; see the list and the reasons in kube.h. */
static const char *const pass_env[] = {
	"PATH", "HOME", "KUBECACHEDIR", "TMPDIR",
	"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
	"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
	"AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_SDK_LOAD_CONFIG",
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME", "AWS_WEB_IDENTITY_TOKEN_FILE",
	"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
	"AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
	"AWS_EC2_METADATA_DISABLED", "AWS_CA_BUNDLE", "AWS_STS_REGIONAL_ENDPOINTS",
};

/* The environment being built: NULL-terminated after every add. */
struct env_list {
	char **v;
	size_t n, alloc;
};

static void env_add(struct env_list *env, char *entry)
{
	hp_array_reserve(env, 2);
	env->v[env->n++] = entry;
	env->v[env->n] = NULL;
}

/* Set up the wrapper and build its environment from the allowlist. */
void hp_kube_init(struct hp_kube *k, struct hp_sys *sys, const struct hp_kube_opts *o)
{
	struct env_list env = HP_ARRAY_INIT;
	size_t i;

	memset(k, 0, sizeof(*k));
	k->sys = sys;
	k->program = o && o->program ? o->program : "kubectl";
	k->kubeconfig = o ? o->kubeconfig : NULL;
	k->context = o ? o->context : NULL;
	k->timeout_ms = o && o->timeout_ms > 0 ? o->timeout_ms : HP_KUBE_TIMEOUT_MS;
	k->max_out = HP_KUBE_MAX_OUT;
	env_add(&env, xstrdup("LANG=C"));
	env_add(&env, xstrdup("LC_ALL=C"));
	for (i = 0; i < HP_ARRAY_LEN(pass_env); i++) {
		const char *v = hp_sys_env(sys, pass_env[i]);

		if (!v)
			continue;
		/* --profile wins over the environment's profile. */
		if (o && o->aws_profile && !strcmp(pass_env[i], "AWS_PROFILE"))
			continue;
		env_add(&env, xasprintf("%s=%s", pass_env[i], v));
	}
	if (o && o->aws_profile)
		env_add(&env, xasprintf("AWS_PROFILE=%s", o->aws_profile));
	if (!k->kubeconfig && hp_sys_env(sys, "KUBECONFIG"))
		env_add(&env, xasprintf("KUBECONFIG=%s", hp_sys_env(sys, "KUBECONFIG")));
	k->env = env.v;
}

/* Wipe and free the environment strings. */
void hp_kube_release(struct hp_kube *k)
{
	size_t i;

	for (i = 0; k->env && k->env[i]; i++)
		hp_free_secret(k->env[i]);
	free(k->env);
	k->env = NULL;
}

/* The stable snapshot name of a run status. */
const char *hp_kube_status_name(enum hp_kube_status s)
{
	static const char *const names[] = {
		"ok", "missing", "timeout", "auth", "forbidden", "not_found", "unreachable",
		"config", "too_big", "parse", "error", "interrupted",
	};

	return (size_t)s < HP_ARRAY_LEN(names) ? names[s] : "error";
}

/* Case-insensitive: does err contain any of the needles? */
static int has_any(const char *err, const char *const *needles)
{
	for (; *needles; needles++)
		if (hp_strcasestr(err, *needles))
			return 1;
	return 0;
}

/* Classify a finished run by its exit status and kubectl's stderr. */
enum hp_kube_status hp_kube_classify(int exit_status, int timed_out, const char *err)
{
	/* Order matters: an exec plugin failure also says "Unable to connect". */
	static const char *const auth[] = {
		"getting credentials", "You must be logged in", "Unauthorized",
		"provide credentials", "exec plugin", "ExpiredToken", "token has expired",
		"InvalidClientTokenId", "invalid bearer token", NULL
	};
	static const char *const config[] = {
		"no configuration has been provided", "current-context must exist",
		"context was not found", "Error in configuration", "invalid configuration",
		"error loading config file", "no such file or directory", "cluster has no server",
		NULL
	};
	static const char *const timeout[] = {
		"Client.Timeout exceeded", "context deadline exceeded", "request timed out",
		"Timeout: request did not complete", NULL
	};
	static const char *const forbidden[] = { "is forbidden", "(Forbidden)", NULL };
	static const char *const not_found[] = { "(NotFound)", NULL };
	static const char *const unreachable[] = {
		"Unable to connect to the server", "connection refused", "was refused",
		"no such host", "i/o timeout", "dial tcp", "x509:", "tls:", "certificate", "EOF",
		NULL
	};

	if (!err)
		err = "";
	if (timed_out)
		return HP_KUBE_TIMEOUT;
	if (exit_status == 0)
		return HP_KUBE_OK;
	if (has_any(err, auth))
		return HP_KUBE_AUTH;
	if (has_any(err, config))
		return HP_KUBE_CONFIG;
	if (has_any(err, timeout))
		return HP_KUBE_TIMEOUT;
	if (has_any(err, forbidden))
		return HP_KUBE_FORBIDDEN;
	if (has_any(err, not_found))
		return HP_KUBE_NOT_FOUND;
	if (has_any(err, unreachable))
		return HP_KUBE_UNREACHABLE;
	return HP_KUBE_ERROR;
}

/* A klog line: "E1129 20:43:33.771510   25582 memcache.go:265] ...". */
static int is_klog(const char *p, size_t len)
{
	return len > 6 && strchr("IWEF", p[0]) && isdigit((unsigned char)p[1]) &&
	       isdigit((unsigned char)p[4]) && memchr(p, ']', len);
}

/* Copy the line of stderr that states kubectl's error into out. */
void hp_kube_error_line(const char *err, char *out, size_t n)
{
	const char *p = err ? err : "", *best = NULL, *last = NULL;
	size_t best_len = 0, last_len = 0, len;

	/* kubectl's own verdict ("error: ...", "Error from server ...") wins over klog noise. */
	while (*p) {
		len = strcspn(p, "\n");
		while (len && (p[len - 1] == '\r' || p[len - 1] == ' '))
			len--;
		if (len && !is_klog(p, len)) {
			if (!best && (hp_starts_with(p, "error:") || hp_starts_with(p, "Error ") ||
				      hp_starts_with(p, "Unable to connect"))) {
				best = p;
				best_len = len;
			}
			last = p;
			last_len = len;
		} else if (len && !last) {
			last = p;
			last_len = len;
		}
		p += strcspn(p, "\n");
		if (*p)
			p++;
	}
	if (!best) {
		best = last;
		best_len = last_len;
	}
	if (best && hp_starts_with(best, "error: ")) {
		best += 7;
		best_len -= 7;
	}
	if (!best || !n) {
		if (n)
			out[0] = '\0';
		return;
	}
	if (best_len >= n)
		best_len = n - 1;
	memcpy(out, best, best_len);
	out[best_len] = '\0';
}

/* How one run hands over its stdout: kept (NULL on_out) or streamed. */
struct out_mode {
	void (*on_out)(void *ud, const char *data, size_t n);
	void *ud;
	size_t max;
	long timeout_ms;
};

/* Run kubectl once and classify, cap and (for -o json) parse what it printed. */
static int kube_exec(struct hp_kube *k, const char *const *args, int flags,
		     const struct out_mode *m, struct hp_kube_result *r)
{
	const char **argv;
	struct hp_run_req req;
	struct hp_run_res res;
	char timeout_flag[48];
	size_t n = 0, i;
	int rc;

	memset(r, 0, sizeof(*r));
	hp_buf_init(&r->out, k->max_out);
	if (k->sys->stop && *k->sys->stop) {
		r->status = HP_KUBE_INTERRUPTED;
		r->exit_status = -1;
		hp_strlcpy(r->message, "kubectl not run: the run was interrupted", sizeof(r->message));
		return -1;
	}
	if (k->deadline_ms && k->sys->monotonic_ms(k->sys) >= k->deadline_ms) {
		r->status = HP_KUBE_TIMEOUT;
		r->exit_status = -1;
		snprintf(r->message, sizeof(r->message),
			 "kubectl not run: the run budget (--max-runtime %ld s) was spent", k->budget_s);
		return -1;
	}
	for (i = 0; args[i]; i++)
		;
	argv = xcalloc(i + 10, sizeof(*argv));
	argv[n++] = k->program;
	if (k->kubeconfig) {
		argv[n++] = "--kubeconfig";
		argv[n++] = k->kubeconfig;
	}
	if (k->context) {
		argv[n++] = "--context";
		argv[n++] = k->context;
	}
	/* kubectl's own per-request limit, so it says why before we kill it. */
	snprintf(timeout_flag, sizeof(timeout_flag), "--request-timeout=%lds",
		 k->timeout_ms / 2000 > 0 ? k->timeout_ms / 2000 : 1);
	argv[n++] = timeout_flag;
	for (i = 0; args[i]; i++)
		argv[n++] = args[i];
	if (flags & HP_KUBE_JSON) {
		argv[n++] = "-o";
		argv[n++] = "json";
	}
	argv[n] = NULL;

	memset(&req, 0, sizeof(req));
	req.argv = argv;
	req.env = (const char *const *)k->env;
	req.timeout_ms = m->timeout_ms > 0 ? m->timeout_ms : k->timeout_ms;
	req.on_out = m->on_out;
	req.on_out_ud = m->ud;
	req.out_max = m->max;
	if (k->deadline_ms && k->deadline_ms - k->sys->monotonic_ms(k->sys) < req.timeout_ms)
		req.timeout_ms = (long)(k->deadline_ms - k->sys->monotonic_ms(k->sys));
	hp_run_res_init(&res);
	hp_buf_init(&res.out, k->max_out);
	hp_buf_init(&res.err, HP_KUBE_MAX_ERR);
	rc = k->sys->run(k->sys, &req, &res);
	free(argv);
	/* A run() that kept stdout although asked to stream it: hand it over now. */
	if (m->on_out && res.out.len) {
		size_t give = m->max && res.out.len > m->max ? m->max : res.out.len;

		m->on_out(m->ud, res.out.buf, give);
		res.out_capped |= give < res.out.len;
		hp_buf_reset(&res.out);
	}
	r->exit_status = res.exit_status;
	if (rc < 0) {
		r->status = HP_KUBE_MISSING;
		r->exit_status = -1;
		snprintf(r->message, sizeof(r->message),
			 "cannot run '%s' (is it installed and on PATH?)", k->program);
		hp_run_res_release(&res);
		return -1;
	}
	r->status = res.interrupted ? HP_KUBE_INTERRUPTED :
		    hp_kube_classify(res.exit_status, res.timed_out, res.err.buf);
	if (res.out_capped || (!m->on_out && r->status == HP_KUBE_OK && res.out.len >= k->max_out))
		r->status = HP_KUBE_TOO_BIG;
	if (r->status == HP_KUBE_TIMEOUT && res.timed_out && req.timeout_ms < k->timeout_ms)
		snprintf(r->message, sizeof(r->message),
			 "kubectl stopped at the end of the run budget (--max-runtime %ld s)",
			 k->budget_s);
	else if (r->status == HP_KUBE_TIMEOUT && res.timed_out)
		snprintf(r->message, sizeof(r->message), "kubectl did not finish within %ld s",
			 req.timeout_ms / 1000);
	else if (r->status == HP_KUBE_INTERRUPTED)
		hp_strlcpy(r->message, "kubectl stopped: the run was interrupted", sizeof(r->message));
	else if (r->status == HP_KUBE_TOO_BIG)
		snprintf(r->message, sizeof(r->message), "kubectl printed more than %zu MiB",
			 (m->on_out && m->max ? m->max : k->max_out) >> 20);
	else if (r->status != HP_KUBE_OK)
		hp_kube_error_line(res.err.buf, r->message, sizeof(r->message));
	if (r->status != HP_KUBE_OK && !r->message[0])
		snprintf(r->message, sizeof(r->message), "kubectl exited with status %d",
			 res.exit_status);
	if (r->status == HP_KUBE_OK && (flags & HP_KUBE_JSON)) {
		const char *end = NULL;

		r->json = hp_json_parse(res.out.buf, res.out.len, &end);
		/* One JSON document and nothing after it but white space. */
		while (r->json && end && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
			end++;
		if (r->json && end != res.out.buf + res.out.len) {
			cJSON_Delete(r->json);
			r->json = NULL;
		}
		if (!cJSON_IsObject(r->json)) {
			cJSON_Delete(r->json);
			r->json = NULL;
			r->status = HP_KUBE_PARSE;
			hp_strlcpy(r->message,
				   "kubectl -o json printed something that is not a JSON object",
				   sizeof(r->message));
		}
	} else if (r->status == HP_KUBE_OK) {
		hp_buf_release(&r->out);
		r->out = res.out;
		hp_buf_init(&res.out, k->max_out);
	}
	hp_run_res_release(&res);
	return r->status == HP_KUBE_OK ? 0 : -1;
}

/* --debug: "kubectl get pods ... -> ok (exit 0, 812 ms)", the arguments clipped and made safe. */
static void debug_run(const char *const *args, const struct hp_kube_result *r, int64_t ms)
{
	struct hp_buf line = HP_BUF_INIT(HP_MAX_LINE);
	char safe[512];
	size_t i;

	hp_buf_puts(&line, "kubectl");
	for (i = 0; args[i] && line.len < 400; i++) {
		hp_buf_putc(&line, ' ');
		hp_buf_puts(&line, args[i]);
	}
	hp_text_str(HP_TEXT_SAFE, line.buf, safe, sizeof(safe));
	hp_debug("%s -> %s (exit %d, %lld ms)", safe, hp_kube_status_name(r->status),
		 r->exit_status, (long long)ms);
	hp_buf_release(&line);
}

/* kube_exec, timed and traced with --debug. */
static int kube_traced(struct hp_kube *k, const char *const *args, int flags,
		       const struct out_mode *m, struct hp_kube_result *r)
{
	int64_t t0 = k->sys->monotonic_ms(k->sys);
	int rc = kube_exec(k, args, flags, m, r);

	if (k->debug)
		debug_run(args, r, k->sys->monotonic_ms(k->sys) - t0);
	return rc;
}

int hp_kube_run(struct hp_kube *k, const char *const *args, int flags, struct hp_kube_result *r)
{
	struct out_mode m = { NULL, NULL, 0, 0 };

	return kube_traced(k, args, flags, &m, r);
}

int hp_kube_get_items(struct hp_kube *k, const char *const *args, struct hp_kube_result *r)
{
	if (!hp_kube_run(k, args, HP_KUBE_JSON, r) && cJSON_IsArray(hp_json_get(r->json, "items")))
		return 0;
	if (r->status == HP_KUBE_OK) {
		r->status = HP_KUBE_PARSE;
		hp_strlcpy(r->message, "kubectl -o json gave no 'items' list", sizeof(r->message));
	}
	return -1;
}

int hp_kube_stream(struct hp_kube *k, const char *const *args,
		   void (*on_out)(void *ud, const char *data, size_t n), void *ud,
		   size_t max_bytes, long timeout_ms, struct hp_kube_result *r)
{
	struct out_mode m = { on_out, ud, max_bytes ? max_bytes : k->max_out, timeout_ms };

	return kube_traced(k, args, 0, &m, r);
}

/* Free what a run left in r. */
void hp_kube_result_release(struct hp_kube_result *r)
{
	cJSON_Delete(r->json);
	r->json = NULL;
	hp_buf_release(&r->out);
}

#define URL_PART 512

/* Split "scheme://host[:port][/path]" into lower-case scheme/host, port, path (each < n). */
static int parse_url(const char *u, char *scheme, char *host, long *port, char *path, size_t n)
{
	const char *p = strstr(u ? u : "", "://"), *h, *end, *colon;
	size_t len, i;

	if (!p || p == u || (size_t)(p - u) >= n)
		return -1;
	len = (size_t)(p - u);
	for (i = 0; i < len; i++)
		scheme[i] = (char)tolower((unsigned char)u[i]);
	scheme[len] = '\0';
	h = p + 3;
	end = h + strcspn(h, "/?#");
	if (*h == '[') {
		/* IPv6 literal: the port colon comes after the bracket. */
		const char *rb = memchr(h, ']', (size_t)(end - h));
		if (!rb)
			return -1;
		colon = rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = memchr(h, ':', (size_t)(end - h));
	}
	len = (size_t)((colon ? colon : end) - h);
	if (!len || len >= n)
		return -1;
	for (i = 0; i < len; i++)
		host[i] = (char)tolower((unsigned char)h[i]);
	host[len] = '\0';
	if (colon) {
		char *stop;

		*port = strtol(colon + 1, &stop, 10);
		if (stop != end || *port <= 0 || *port > 65535)
			return -1;
	} else if (!strcmp(scheme, "https")) {
		*port = 443;
	} else if (!strcmp(scheme, "http")) {
		*port = 80;
	} else {
		*port = 0;
	}
	len = strcspn(end, "?#");
	while (len && end[len - 1] == '/')
		len--;
	if (len >= n)
		return -1;
	memcpy(path, end, len);
	path[len] = '\0';
	return 0;
}

/* Whether two API server URLs name the same server. */
int hp_kube_same_server(const char *a, const char *b)
{
	char sa[URL_PART], sb[URL_PART], ha[URL_PART], hb[URL_PART], pa[URL_PART], pb[URL_PART];
	long na, nb;

	if (!a || !b || parse_url(a, sa, ha, &na, pa, URL_PART) < 0 ||
	    parse_url(b, sb, hb, &nb, pb, URL_PART) < 0)
		return 0;
	return !strcmp(sa, sb) && !strcmp(ha, hb) && na == nb && !strcmp(pa, pb);
}
