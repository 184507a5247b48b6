/*
 * Root-cause signals in ListClusterEvents: every event read is matched
 * against one rule table (first rule wins), on its Description and on every
 * FailureMessage that DescribeClusterEvent returned for it (EventDetails.
 * EventMetadata.{Cluster,InstanceGroup,InstanceGroupScaling,Instance}), and
 * matches are folded into one finding per rule and node (or instance group,
 * or the cluster). An Error event no rule claims is never dropped: it gets
 * a WARN of its own, one per distinct text.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/json.h"
#include "checks.h"

enum ev_kind { EV_EFA, EV_BOOTSTRAP, EV_LIFECYCLE, EV_HARDWARE, EV_CAPACITY, EV_AZ,
	       EV_PROVISION, EV_REPAIR, EV__COUNT };

/* What each kind of signal means; the order here is the order of findings. */
static const struct {
	const char *title;
	enum hp_tag tag;
	enum hp_prio prio;
	const char *section;
} kinds[EV__COUNT] = {
	[EV_EFA] = { "EFA health check failure", HP_TAG_FAIL, HP_P0, "A" },
	[EV_BOOTSTRAP] = { "Node bootstrap / network misconfiguration", HP_TAG_FAIL, HP_P1, "A+B" },
	[EV_LIFECYCLE] = { "Lifecycle script failure", HP_TAG_FAIL, HP_P1, "D" },
	[EV_HARDWARE] = { "Hardware failure", HP_TAG_FAIL, HP_P1, "F" },
	[EV_CAPACITY] = { "Insufficient capacity", HP_TAG_FAIL, HP_P1, "C" },
	[EV_AZ] = { "AZ mismatch", HP_TAG_FAIL, HP_P1, "C" },
	[EV_PROVISION] = { "Node provisioning failure", HP_TAG_FAIL, HP_P1, "C+F" },
	[EV_REPAIR] = { "Node repair activity", HP_TAG_WARN, HP_P2, "F" },
};

static const char *const w_efa[] = { "EFA health checks did not run successfully", "efa health",
				     NULL };
static const char *const w_bootstrap[] = { "bootstrap failed", NULL };
static const char *const w_network[] = { "network", NULL };
static const char *const w_netmisconf[] = { "network misconfiguration", NULL };
static const char *const w_lifecycle[] = { "lifecycle script", "lifecycle config",
					   "LifeCycleConfig", NULL };
/* "exit code" counts only when a non-zero code follows (see has_any). */
static const char *const w_failure[] = { "fail", "error", "timeout", "timed out", "exit code",
					 "did not run", "unsuccessful", "not successful", NULL };
static const char *const w_timedout[] = { "timed out", NULL };
static const char *const w_hardware[] = { "hardware failure", "unhealthy hardware",
					   "hardware fault", "failed health check",
					   "health check failed", "marked for replacement",
					   "marked unhealthy", NULL };
/* EC2's own wording: "We currently do not have sufficient p5.48xlarge capacity in ...". */
static const char *const w_capacity[] = { "insufficient capacity", "sufficient capacity",
					  "InsufficientInstanceCapacity", "do not have sufficient",
					  "not enough capacity", NULL };
static const char *const w_az[] = { "availability zone", NULL };
static const char *const w_az_bad[] = { "not supported", "mismatch", NULL };
static const char *const w_az_nosubnet[] = { "No subnets in the capacity AZ", NULL };
static const char *const w_provision[] = { "failed to provision", NULL };
/* Repair activity; only on Warn and Error events (an Info reboot is routine). */
static const char *const w_repair[] = { "replacement", "replacing", "replaced", "reboot", NULL };

/*
 * The rules, tried in order; the first that matches names the event's kind.
 * A rule matches when the text holds one word of `any` and, if `also` is
 * set, one word of `also` too. Matching ignores ASCII case.
 */
static const struct {
	enum ev_kind kind;
	const char *const *any;
	const char *const *also;
	int not_info;   /* only for Warn and Error events */
} rules[] = {
	{ EV_EFA, w_efa, NULL, 0 },
	{ EV_BOOTSTRAP, w_bootstrap, w_network, 0 },
	{ EV_BOOTSTRAP, w_netmisconf, NULL, 0 },
	{ EV_LIFECYCLE, w_lifecycle, w_failure, 0 },
	{ EV_HARDWARE, w_hardware, NULL, 0 },
	{ EV_CAPACITY, w_capacity, NULL, 0 },
	{ EV_AZ, w_az, w_az_bad, 0 },
	{ EV_AZ, w_az_nosubnet, NULL, 0 },
	{ EV_PROVISION, w_provision, NULL, 0 },
	/* A bare "timed out" is, in practice, a lifecycle script that never finished. */
	{ EV_LIFECYCLE, w_timedout, NULL, 0 },
	{ EV_REPAIR, w_repair, NULL, 1 },
};

/* "exit code N" with N other than 0 somewhere in text. */
static int nonzero_exit(const char *text)
{
	const char *p = text;

	while ((p = hp_strcasestr(p, "exit code")) != NULL) {
		p += strlen("exit code");
		while (*p == ' ' || *p == ':' || *p == '=')
			p++;
		if ((*p >= '1' && *p <= '9') || *p == '-')
			return 1;
		while (*p == '0')
			p++;
		if (*p >= '1' && *p <= '9')
			return 1;
	}
	return 0;
}

static int has_any(const char *text, const char *const *words)
{
	for (; *words; words++) {
		if (!strcmp(*words, "exit code")) {
			if (nonzero_exit(text))
				return 1;
		} else if (hp_strcasestr(text, *words)) {
			return 1;
		}
	}
	return 0;
}

/* The index of the first rule matching text, or HP_ARRAY_LEN(rules) for none. */
static size_t classify(const char *text, int info)
{
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(rules); i++)
		if ((!info || !rules[i].not_info) && has_any(text, rules[i].any) &&
		    (!rules[i].also || has_any(text, rules[i].also)))
			return i;
	return HP_ARRAY_LEN(rules);
}

static const char *const meta_kinds[] = { "Cluster", "InstanceGroup", "InstanceGroupScaling",
					  "Instance" };

/* The FailureMessage of the event's details (the metadata union holds one), or NULL. */
static const char *failure_message(const cJSON *ev)
{
	const cJSON *md = hp_json_get(ev, "EventDetails.EventMetadata");
	size_t i;

	for (i = 0; md && i < HP_ARRAY_LEN(meta_kinds); i++) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(md, meta_kinds[i]);
		const char *fm = hp_json_str(m, "FailureMessage");

		if (fm && *fm)
			return fm;
	}
	return NULL;
}

/*
 * The kind of the event: the best (earliest) rule matching its Description
 * or any FailureMessage of its details; EV__COUNT for none.
 */
static enum ev_kind classify_event(const cJSON *ev)
{
	const char *lvl = hp_check_str(ev, "EventLevel", "Info");
	int info = strcmp(lvl, "Warn") && strcmp(lvl, "Error");
	const cJSON *md = hp_json_get(ev, "EventDetails.EventMetadata");
	const char *text = hp_json_str(ev, "Description");
	size_t best = HP_ARRAY_LEN(rules), r, i;

	if (text)
		best = classify(text, info);
	for (i = 0; md && i < HP_ARRAY_LEN(meta_kinds); i++) {
		const char *fm = hp_json_str(cJSON_GetObjectItemCaseSensitive(md, meta_kinds[i]),
					     "FailureMessage");

		if (fm && (r = classify(fm, info)) < best)
			best = r;
	}
	return best < HP_ARRAY_LEN(rules) ? rules[best].kind : EV__COUNT;
}

/* "<description> — <failure message>" (either part alone when the other is missing). */
static void event_text(const cJSON *ev, char *out, size_t size)
{
	const char *d = hp_check_str(ev, "Description", NULL);
	const char *fm = failure_message(ev);

	if (d && fm && !strstr(d, fm))
		snprintf(out, size, "%s — %s", d, fm);
	else
		hp_strlcpy(out, d ? d : fm ? fm : "(no description)", size);
}

/* Matches folded under one (kind, subject). */
struct ev_bucket {
	enum ev_kind kind;
	const char *iid;       /* InstanceId, or NULL */
	const char *group;     /* InstanceGroupName when no InstanceId, or NULL */
	const char *iid_group; /* with an InstanceId: its group, shown but not part of the key */
	int count;
	HP_ARRAY(const cJSON *) ev;  /* matching events, in the order read */
};

typedef HP_ARRAY(struct ev_bucket) ev_bucket_list;

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static struct ev_bucket *bucket_for(ev_bucket_list *v, enum ev_kind kind, const char *iid,
				    const char *group)
{
	struct ev_bucket *b;
	size_t i;

	for (i = 0; i < v->n; i++) {
		b = &v->v[i];
		if (b->kind == kind && same_str(b->iid, iid) && same_str(b->group, group))
			return b;
	}
	b = hp_array_push(v);
	b->kind = kind;
	b->iid = iid;
	b->group = group;
	return b;
}

static double event_time(const cJSON *ev)
{
	return hp_json_num(ev, "EventTime", -1);
}

/* Evidence: the newest events' times and texts, at most three distinct texts. */
static void add_evidence(struct hp_finding *f, const struct ev_bucket *b)
{
	const cJSON *shown[3];
	size_t nshown = 0, i, j;

	while (nshown < HP_ARRAY_LEN(shown)) {
		const cJSON *best = NULL;

		for (i = 0; i < b->ev.n; i++) {
			char d[1024], o[1024];
			int dup = 0;

			event_text(b->ev.v[i], d, sizeof(d));
			for (j = 0; j < nshown; j++) {
				event_text(shown[j], o, sizeof(o));
				if (!strcmp(d, o))
					dup = 1;
			}
			if (dup)
				continue;
			if (!best || event_time(b->ev.v[i]) > event_time(best))
				best = b->ev.v[i];
		}
		if (!best)
			break;
		shown[nshown++] = best;
	}
	for (i = 0; i < nshown; i++) {
		char when[32], text[HP_CHECK_CLIP_SIZE], line[HP_CHECK_CLIP_SIZE + 64], full[1024];

		event_text(shown[i], full, sizeof(full));
		snprintf(line, sizeof(line), "%s %s",
			 hp_check_iso_time(event_time(shown[i]), when), hp_check_clip(full, text));
		hp_finding_evidence(f, line);
	}
}

static void report_bucket(struct hp_emit *em, const struct ev_bucket *b)
{
	char where[128], when[32];
	double newest = -1;
	struct hp_finding *f;
	size_t i;

	for (i = 0; i < b->ev.n; i++)
		if (event_time(b->ev.v[i]) > newest)
			newest = event_time(b->ev.v[i]);
	if (b->iid)
		snprintf(where, sizeof(where), "%.40s%s%.64s%s", b->iid,
			 b->iid_group ? " (group '" : "", b->iid_group ? b->iid_group : "",
			 b->iid_group ? "')" : "");
	else if (b->group)
		snprintf(where, sizeof(where), "instance group '%.64s'", b->group);
	else
		hp_strlcpy(where, "the cluster", sizeof(where));
	f = hp_emitx(em, kinds[b->kind].tag, kinds[b->kind].prio, kinds[b->kind].section, b->iid,
		     "%s on %s: %d event%s, newest %s", kinds[b->kind].title, where, b->count,
		     b->count == 1 ? "" : "s", hp_check_iso_time(newest, when));
	if (b->group || b->iid_group)
		hp_finding_var(f, "GROUP", b->group ? b->group : b->iid_group);
	add_evidence(f, b);
}

/*
 * The grouping key of an unclaimed event's text: instance ids masked, so the
 * same failure on several nodes folds into one finding.
 */
static void unclaimed_key(const char *text, char *out, size_t size)
{
	size_t o = 0;
	const char *p = text;

	while (*p && o + 1 < size) {
		if (p[0] == 'i' && p[1] == '-' && (p == text || !isalnum((unsigned char)p[-1]))) {
			size_t n = 0;

			while (isxdigit((unsigned char)p[2 + n]))
				n++;
			if (n >= 8 && !isalnum((unsigned char)p[2 + n])) {
				if (o + 4 >= size)
					break;
				memcpy(out + o, "i-*", 3);
				o += 3;
				p += 2 + n;
				continue;
			}
		}
		out[o++] = *p++;
	}
	out[o] = '\0';
}

/* Error events no rule claims, one group per distinct text. */
struct ev_unclaimed {
	char key[1024];
	HP_ARRAY(const cJSON *) ev;
};

typedef HP_ARRAY(struct ev_unclaimed) ev_unclaimed_list;

static void report_unclaimed(struct hp_emit *em, const struct ev_unclaimed *u)
{
	char text[HP_CHECK_CLIP_SIZE], full[1024], when[32], where[160];
	const cJSON *newest = u->ev.v[0];
	const char *node = NULL, *group = NULL;
	int one_node = 1, one_group = 1;
	struct hp_finding *f;
	size_t i;

	for (i = 0; i < u->ev.n; i++) {
		const char *iid = hp_check_str(u->ev.v[i], "InstanceId", NULL);
		const char *g = hp_check_str(u->ev.v[i], "InstanceGroupName", NULL);

		if (event_time(u->ev.v[i]) > event_time(newest))
			newest = u->ev.v[i];
		if (i == 0) {
			node = iid;
			group = g;
		}
		if (!same_str(iid, node))
			one_node = 0;
		if (!same_str(g, group))
			one_group = 0;
	}
	if (!one_node)
		node = NULL;
	if (!one_group)
		group = NULL;
	if (node)
		snprintf(where, sizeof(where), "%.40s%s%.64s%s", node, group ? " (group '" : "",
			 group ? group : "", group ? "')" : "");
	else if (group)
		snprintf(where, sizeof(where), "instance group '%.64s'", group);
	else if (u->ev.n > 1)
		hp_strlcpy(where, "several nodes or groups", sizeof(where));
	else
		hp_strlcpy(where, "the cluster", sizeof(where));
	event_text(newest, full, sizeof(full));
	f = hp_emitx(em, HP_TAG_WARN, HP_P1, "L", node,
		     "Error event on %s that no rule recognises: \"%s\" (%zu event%s, newest %s)",
		     where, hp_check_clip(full, text), u->ev.n, u->ev.n == 1 ? "" : "s",
		     hp_check_iso_time(event_time(newest), when));
	if (group)
		hp_finding_var(f, "GROUP", group);
	for (i = 0; i < u->ev.n && i < 20; i++) {
		char line[HP_CHECK_CLIP_SIZE + 160];

		event_text(u->ev.v[i], full, sizeof(full));
		snprintf(line, sizeof(line), "%s %s%s%.40s %s",
			 hp_check_iso_time(event_time(u->ev.v[i]), when),
			 hp_check_str(u->ev.v[i], "EventId", "?"),
			 hp_check_str(u->ev.v[i], "InstanceId", NULL) ? " " : "",
			 hp_check_str(u->ev.v[i], "InstanceId", ""), hp_check_clip(full, text));
		hp_finding_evidence(f, line);
	}
	if (u->ev.n > 20) {
		char line[64];

		snprintf(line, sizeof(line), "… and %zu more events with this text", u->ev.n - 20);
		hp_finding_evidence(f, line);
	}
}

static void add_unclaimed(ev_unclaimed_list *v, const cJSON *ev)
{
	char full[1024], key[1024];
	struct ev_unclaimed *u = NULL;
	size_t i;

	event_text(ev, full, sizeof(full));
	unclaimed_key(full, key, sizeof(key));
	for (i = 0; i < v->n && !u; i++)
		if (!strcmp(v->v[i].key, key))
			u = &v->v[i];
	if (!u) {
		u = hp_array_push(v);
		hp_strlcpy(u->key, key, sizeof(u->key));
	}
	hp_array_append(&u->ev, ev);
}

static void run_signals(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *events = hp_json_arr(snap->root, "events");
	const cJSON *ev;
	ev_bucket_list buckets = HP_ARRAY_INIT;
	ev_unclaimed_list unclaimed = HP_ARRAY_INIT;
	size_t i;
	double newest = -1;
	int n = 0, k, capped, failed;
	char when[32];

	if (!events) {
		/* The collector does not ask for events a cluster cannot have. */
		if (hp_json_str(snap->root, "events_skipped"))
			HP_CHECK_INFO(em, "Cluster events not read: %s. ListClusterEvents only reports "
				      "events when NodeProvisioningMode is Continuous",
				      hp_json_str(snap->root, "events_skipped"));
		return;
	}
	cJSON_ArrayForEach(ev, events) {
		const char *iid = hp_check_str(ev, "InstanceId", NULL);
		const char *group = hp_check_str(ev, "InstanceGroupName", NULL);
		enum ev_kind kind;
		struct ev_bucket *b;

		if (!cJSON_IsObject(ev))
			continue;
		n++;
		if (event_time(ev) > newest)
			newest = event_time(ev);
		kind = classify_event(ev);
		if (kind == EV__COUNT) {
			if (!strcmp(hp_check_str(ev, "EventLevel", ""), "Error"))
				add_unclaimed(&unclaimed, ev);
			continue;
		}
		/* With an instance id the node is the key; the group is only shown. */
		b = bucket_for(&buckets, kind, iid, iid ? NULL : group);
		if (iid && !b->iid_group)
			b->iid_group = group;
		b->count++;
		hp_array_append(&b->ev, ev);
	}

	if (!n) {
		HP_CHECK_INFO(em,
			"No cluster events were returned. ListClusterEvents only reports events when "
			"NodeProvisioningMode is Continuous; this cluster's mode is %s",
			hp_check_str(snap->root, "cluster.NodeProvisioningMode",
				     hp_json_get(snap->root, "cluster") ? "legacy (not Continuous)"
									: "unknown"));
		return;
	}
	HP_CHECK_INFO(em, "Read %d cluster event%s (newest %s)", n, n == 1 ? "" : "s",
		hp_check_iso_time(newest, when));
	if (hp_json_bool(snap->root, "events_truncated", 0))
		HP_CHECK_INFO(em,
			"Only the newest 500 cluster events were read; older signals are not judged");
	capped = (int)hp_json_num(snap->root, "events_details_capped", 0);
	failed = (int)hp_json_num(snap->root, "events_details_failed", 0);
	if (capped > 0)
		hp_emitx(em, HP_TAG_WARN, HP_P2, "C", NULL,
			 "Details of %d older Error/Warn cluster event%s not read: DescribeClusterEvent "
			 "is called for the newest %d only, so their FailureMessage is not judged",
			 capped, capped == 1 ? "" : "s",
			 (int)hp_json_num(snap->root, "events_details_cap", 0));
	if (failed > 0)
		hp_emitx(em, HP_TAG_WARN, HP_P2, "C", NULL,
			 "Details of %d Error/Warn cluster event%s could not be read (DescribeClusterEvent "
			 "failed); only their descriptions are judged", failed, failed == 1 ? "" : "s");
	for (k = 0; k < EV__COUNT; k++)
		for (i = 0; i < buckets.n; i++)
			if (buckets.v[i].kind == (enum ev_kind)k)
				report_bucket(em, &buckets.v[i]);
	for (i = 0; i < unclaimed.n; i++)
		report_unclaimed(em, &unclaimed.v[i]);
	for (i = 0; i < buckets.n; i++)
		hp_array_release(&buckets.v[i].ev);
	hp_array_release(&buckets);
	for (i = 0; i < unclaimed.n; i++)
		hp_array_release(&unclaimed.v[i].ev);
	hp_array_release(&unclaimed);
}

HP_CHECK(events_signals, HP_GROUP_EVENTS, 20,
	 .id = "events.signals", .section = "", .prio = HP_P1, .run = run_signals);
