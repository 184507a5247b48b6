/*
 * The cluster snapshot (include/hp/snapshot.h): one cJSON document holding
 * every collected fact, saved to and loaded from a file, plus the getters
 * checks share. It never talks to AWS; collectors fill it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/facts.h"
#include "hp/json.h"
#include "hp/snapshot.h"

/* A snapshot of 20,000 nodes is about 10 MB; leave room for later keys. */
#define SNAPSHOT_MAX_BYTES ((size_t)256 << 20)

static cJSON *new_root(void)
{
	cJSON *root = cJSON_CreateObject();

	cJSON_AddItemToObject(root, "version", cJSON_CreateNumber(HP_SNAPSHOT_VERSION));
	return root;
}

void hp_snapshot_init(struct hp_snapshot *s)
{
	s->root = new_root();
	s->facts = NULL;
}

void hp_snapshot_release(struct hp_snapshot *s)
{
	cJSON_Delete(s->root);
	s->root = NULL;
	hp_facts_free(s->facts);
	s->facts = NULL;
}

void hp_snapshot_set(struct hp_snapshot *s, const char *key, cJSON *item)
{
	if (!item)
		return;
	if (!s->root)
		s->root = new_root();
	/* What was decoded may have come from the key being replaced. */
	hp_facts_forget(s);
	if (cJSON_HasObjectItem(s->root, key))
		cJSON_ReplaceItemInObjectCaseSensitive(s->root, key, item);
	else
		cJSON_AddItemToObject(s->root, key, item);
}

const cJSON *hp_snapshot_get(const struct hp_snapshot *s, const char *key)
{
	if (!s->root)
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(s->root, key);
}

static void add_str(cJSON *obj, const char *key, const char *v)
{
	cJSON_AddItemToObject(obj, key, cJSON_CreateString(v ? v : ""));
}

void hp_snapshot_add_call(struct hp_snapshot *s, const char *service, const char *action,
			  const char *cls, const char *code, const char *message, long status)
{
	cJSON *calls, *call;

	if (!s->root)
		s->root = new_root();
	calls = cJSON_GetObjectItemCaseSensitive(s->root, "calls");
	if (!cJSON_IsArray(calls)) {
		calls = cJSON_CreateArray();
		hp_snapshot_set(s, "calls", calls);
	}
	call = cJSON_CreateObject();
	add_str(call, "service", service);
	add_str(call, "action", action);
	add_str(call, "class", cls);
	add_str(call, "code", code);
	{
		/* Replies can quote the endpoint URL: never its userinfo. */
		size_t n = message ? 2 * strlen(message) + 8 : 1;
		char *safe = xmalloc(n);

		hp_redact_urls(message ? message : "", safe, n);
		add_str(call, "message", safe);
		free(safe);
	}
	cJSON_AddItemToObject(call, "status", cJSON_CreateNumber((double)status));
	cJSON_AddItemToArray(calls, call);
}

int hp_snapshot_save(const struct hp_snapshot *s, struct hp_sys *sys, const char *path,
		     struct hp_error *e)
{
	char *text;
	size_t len;
	int err = 0;

	if (!s->root)
		return hp_error_set(e, HP_ERR_INTERNAL, "snapshot is empty");
	text = cJSON_Print(s->root);
	if (!text)
		hp_die("out of memory");
	len = strlen(text);
	{
		/* The document and its final newline, written in one piece. */
		char *full = xmalloc(len + 2);

		memcpy(full, text, len);
		full[len] = '\n';
		full[len + 1] = '\0';
		cJSON_free(text);
		if (sys->write_file(sys, path, full, len + 1, 0600) < 0)
			err = errno ? errno : EIO;
		free(full);
	}
	if (err == ELOOP)
		return hp_error_set(e, HP_ERR_FILE, "cannot write snapshot '%s': it is a symbolic "
				    "link (write to the file itself)", path);
	if (err == EINVAL)
		return hp_error_set(e, HP_ERR_FILE, "cannot write snapshot '%s': it exists and is "
				    "not a regular file", path);
	if (err)
		return hp_error_set(e, HP_ERR_FILE, "cannot write snapshot '%s': %s", path,
				    strerror(err));
	return 0;
}

int hp_snapshot_load(struct hp_snapshot *s, struct hp_sys *sys, const char *path,
		     struct hp_error *e)
{
	struct hp_buf b = HP_BUF_INIT(SNAPSHOT_MAX_BYTES);
	const char *end = NULL;
	const cJSON *ver;
	cJSON *doc;

	if (sys->read_file(sys, path, &b) < 0) {
		int err = errno;

		hp_buf_release(&b);
		if (err == EFBIG)
			return hp_error_set(e, HP_ERR_FILE, "snapshot '%s' is larger than %zu MB",
					    path, SNAPSHOT_MAX_BYTES >> 20);
		if (err == EINVAL)
			return hp_error_set(e, HP_ERR_FILE, "cannot read snapshot '%s': not a regular "
					    "file", path);
		return hp_error_set(e, HP_ERR_FILE, "cannot read snapshot '%s': %s", path,
				    strerror(err));
	}
	doc = hp_json_parse(b.buf, b.len, &end);
	if (!doc) {
		size_t at = end && end >= b.buf ? (size_t)(end - b.buf) : 0;

		hp_buf_release(&b);
		return hp_error_set(e, HP_ERR_PARSE, "snapshot '%s' is not valid JSON (near byte %zu)",
				    path, at);
	}
	hp_buf_release(&b);
	if (!cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		return hp_error_set(e, HP_ERR_PARSE, "snapshot '%s' is not a JSON object", path);
	}
	ver = cJSON_GetObjectItemCaseSensitive(doc, "version");
	if (!cJSON_IsNumber(ver) || ver->valuedouble != HP_SNAPSHOT_VERSION) {
		char seen[32] = "none";

		if (cJSON_IsNumber(ver))
			snprintf(seen, sizeof(seen), "%g", ver->valuedouble);
		else if (ver)
			hp_strlcpy(seen, "not a number", sizeof(seen));
		cJSON_Delete(doc);
		return hp_error_set(e, HP_ERR_PARSE,
				    "snapshot '%s' has version %s; this hpnode reads version %d",
				    path, seen, HP_SNAPSHOT_VERSION);
	}
	/* Only a good document replaces what s held. */
	cJSON_Delete(s->root);
	s->root = doc;
	hp_facts_forget(s);
	return 0;
}

const char *hp_snap_cluster_name(const struct hp_snapshot *s)
{
	const char *v = hp_json_str(s->root, "cluster.ClusterName");

	if (!v || !*v)
		v = hp_json_str(s->root, "meta.cluster_arg");
	return v ? v : "";
}

const char *hp_snap_cluster_arn(const struct hp_snapshot *s)
{
	const char *v = hp_json_str(s->root, "cluster.ClusterArn");

	return v ? v : "";
}

void hp_snap_cluster_id(const struct hp_snapshot *s, char out[64])
{
	const char *arn = hp_snap_cluster_arn(s);
	const char *id = strrchr(arn, '/');
	size_t i;

	out[0] = '\0';
	if (!id)
		return;
	id++;
	for (i = 0; id[i]; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' && id[i] <= '9')))
			return;
	if (i != 12)
		return;
	memcpy(out, id, 13);
}

const char *hp_snap_orchestrator(const struct hp_snapshot *s)
{
	const cJSON *cluster = hp_json_get(s->root, "cluster");

	if (!cJSON_IsObject(cluster))
		return "Unknown";
	if (hp_json_get(cluster, "Orchestrator.Eks"))
		return "EKS";
	return "Slurm";
}

int hp_snap_node_running(const cJSON *node)
{
	const char *st = hp_json_str(node, "InstanceStatus.Status");

	return st && !strcmp(st, "Running");
}
