/*
 * The local collector of `hpnode node`: the on-node probe run on this
 * machine (through sys->run) and the instance it runs on, asked of the
 * instance metadata service (IMDSv2, 1 s per request at most; off with
 * AWS_EC2_METADATA_DISABLED=true, another address with
 * AWS_EC2_METADATA_SERVICE_ENDPOINT). It fills the snapshot the way the
 * SSM sweep does for one node, so the same checks judge it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/probe.h"

#define IMDS_DEFAULT "http://169.254.169.254"
#define IMDS_TIMEOUT_MS 1000
#define MAX_STDERR ((size_t)64 << 10)

/* "i-" and 8 or 17 hex digits. */
static int instance_id_ok(const char *s)
{
	size_t n = strlen(s), i;

	if ((n != 10 && n != 19) || strncmp(s, "i-", 2))
		return 0;
	for (i = 2; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int type_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < 64 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789.-") == n;
}

/* One IMDSv2 request; the body (trimmed) into out. */
static int imds(struct hp_sys *sys, const char *method, const char *base, const char *path,
		const struct hp_header *h, char *out, size_t n)
{
	struct hp_http_req req;
	struct hp_http_resp resp;
	char url[512];
	size_t len;
	int ok;

	snprintf(url, sizeof(url), "%s%s", base, path);
	memset(&req, 0, sizeof(req));
	req.method = method;
	req.url = url;
	req.headers = h;
	req.nheaders = 1;
	req.timeout_ms = IMDS_TIMEOUT_MS;
	req.no_proxy = 1;
	hp_http_resp_init(&resp);
	hp_buf_set_secret(&resp.body);
	ok = !sys->http(sys, &req, &resp) && resp.status == 200 && resp.body.len &&
	     resp.body.len < n;
	if (ok) {
		len = resp.body.len;
		while (len && (resp.body.buf[len - 1] == '\n' || resp.body.buf[len - 1] == '\r'))
			len--;
		memcpy(out, resp.body.buf, len);
		out[len] = '\0';
	}
	hp_buf_release_secure(&resp.body);
	hp_http_resp_release(&resp);
	return ok ? 0 : -1;
}

/* Instance id and type from the metadata service, when it answers at once ("" when not). */
static void whoami(struct hp_sys *sys, char id[32], char type[64])
{
	const char *off = hp_sys_env(sys, "AWS_EC2_METADATA_DISABLED");
	const char *base = hp_sys_env(sys, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
	struct hp_header h;
	char token[128], buf[128], root[256];

	id[0] = type[0] = '\0';
	if (off && !strcasecmp(off, "true"))
		return;
	hp_strlcpy(root, base ? base : IMDS_DEFAULT, sizeof(root));
	if (*root && root[strlen(root) - 1] == '/')
		root[strlen(root) - 1] = '\0';
	h.name = "X-aws-ec2-metadata-token-ttl-seconds";
	h.value = "60";
	if (imds(sys, "PUT", root, "/latest/api/token", &h, token, sizeof(token)))
		return;
	h.name = "X-aws-ec2-metadata-token";
	h.value = token;
	if (!imds(sys, "GET", root, "/latest/meta-data/instance-id", &h, buf, sizeof(buf)) &&
	    instance_id_ok(buf))
		hp_strlcpy(id, buf, 32);
	if (!imds(sys, "GET", root, "/latest/meta-data/instance-type", &h, buf, sizeof(buf)) &&
	    type_ok(buf))
		hp_strlcpy(type, buf, 64);
	hp_wipe(token, sizeof(token));
}

/* At most max bytes of b as a JSON string, cut back to a whole UTF-8 character. */
static cJSON *capped_string(const struct hp_buf *b, size_t max)
{
	size_t n = b->len < max ? b->len : max;
	char *s;
	cJSON *v;

	while (n && n < b->len && ((unsigned char)b->buf[n] & 0xC0) == 0x80)
		n--;
	s = xstrndup(b->buf, n);
	v = cJSON_CreateString(s);
	free(s);
	return v;
}

/* Whether the probe output lacks its DONE marker (the one decoder call of this collector). */
static int output_truncated(const struct hp_run_res *res)
{
	cJSON *facts = hp_probe_parse(res->out.buf, res->out.len);
	int truncated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(facts, "truncated"));

	cJSON_Delete(facts);
	return truncated;
}

/* The "probes" entry of this machine, shaped like one node of the SSM sweep. */
static cJSON *probe_entry(const struct hp_run_res *res, const char *type, int64_t duration_ms)
{
	cJSON *e = cJSON_CreateObject();

	cJSON_AddStringToObject(e, "state", "probed");
	if (res->timed_out)
		cJSON_AddStringToObject(e, "reason", "timed out");
	cJSON_AddNumberToObject(e, "exit_code", res->exit_status);
	cJSON_AddItemToObject(e, "stdout", capped_string(&res->out, HP_PROBE_MAX_STDOUT));
	cJSON_AddItemToObject(e, "stderr", capped_string(&res->err, MAX_STDERR));
	cJSON_AddBoolToObject(e, "truncated", output_truncated(res));
	cJSON_AddNumberToObject(e, "duration_ms", (double)duration_ms);
	cJSON_AddNullToObject(e, "group");
	if (*type)
		cJSON_AddStringToObject(e, "instance_type", type);
	else
		cJSON_AddNullToObject(e, "instance_type");
	return e;
}

/* "probes_meta" of a one-node local run. */
static cJSON *local_meta(void)
{
	cJSON *pm = cJSON_CreateObject();

	cJSON_AddStringToObject(pm, "transport", "local");
	cJSON_AddNumberToObject(pm, "concurrency", 1);
	cJSON_AddNumberToObject(pm, "requested", 1);
	cJSON_AddNumberToObject(pm, "probed", 1);
	cJSON_AddNumberToObject(pm, "unreachable", 0);
	cJSON_AddNumberToObject(pm, "skipped", 0);
	return pm;
}

int hp_collect_local(struct hp_sys *sys, const struct hp_local_opts *o, struct hp_snapshot *s,
		     struct hp_error *e)
{
	const char *argv[] = { "sh", "-c", hp_probe_script(), "hpnode-probe", NULL };
	struct hp_run_req req;
	struct hp_run_res res;
	cJSON *meta, *probes;
	char id[32], type[64];
	int64_t t0, t1;

	whoami(sys, id, type);
	memset(&req, 0, sizeof(req));
	req.argv = argv;
	req.timeout_ms = o->timeout_ms;
	hp_run_res_init(&res);
	t0 = sys->monotonic_ms(sys);
	if (sys->run(sys, &req, &res)) {
		hp_run_res_release(&res);
		return hp_error_set(e, HP_ERR_PROC, "cannot run the probe with 'sh'");
	}
	t1 = sys->monotonic_ms(sys);
	meta = cJSON_CreateObject();
	cJSON_AddNumberToObject(meta, "collected_at_ms", (double)sys->now_ms(sys));
	cJSON_AddStringToObject(meta, "mode", "node");
	if (o->orchestrator)
		cJSON_AddStringToObject(meta, "orchestrator", o->orchestrator);
	hp_snapshot_set(s, "meta", meta);
	probes = cJSON_CreateObject();
	cJSON_AddItemToObject(probes, *id ? id : "local", probe_entry(&res, type, t1 - t0));
	hp_snapshot_set(s, "probes", probes);
	hp_snapshot_set(s, "probes_meta", local_meta());
	hp_run_res_release(&res);
	return 0;
}
