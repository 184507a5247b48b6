/*
 * Root-cause signals in ListClusterEvents: every event read is matched
 * against one rule table (first rule wins), and matches are folded into one
 * finding per rule and node (or instance group, or the cluster). Events are
 * not printed one by one; the reporter shows the evidence lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/json.h"
#include "checks.h"

enum ev_kind { EV_EFA, EV_BOOTSTRAP, EV_LIFECYCLE, EV_HARDWARE, EV_CAPACITY, EV_AZ,
	       EV_PROVISION, EV__COUNT };

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
					 NULL };
static const char *const w_hardware[] = { "hardware failure", "unhealthy hardware",
					   "hardware fault", "failed health check",
					   "health check failed", "marked for replacement",
					   "marked unhealthy", NULL };
static const char *const w_capacity[] = { "insufficient capacity", "sufficient capacity",
					  "InsufficientInstanceCapacity", NULL };
static const char *const w_az[] = { "availability zone", NULL };
static const char *const w_az_bad[] = { "not supported", "mismatch", NULL };
static const char *const w_provision[] = { "failed to provision", NULL };

/*
 * The rules, tried in order; the first that matches names the event's kind.
 * A rule matches when the text holds one word of `any` and, if `also` is
 * set, one word of `also` too. Matching ignores ASCII case.
 */
static const struct {
	enum ev_kind kind;
	const char *const *any;
	const char *const *also;
} rules[] = {
	{ EV_EFA, w_efa, NULL },
	{ EV_BOOTSTRAP, w_bootstrap, w_network },
	{ EV_BOOTSTRAP, w_netmisconf, NULL },
	{ EV_LIFECYCLE, w_lifecycle, w_failure },
	{ EV_HARDWARE, w_hardware, NULL },
	{ EV_CAPACITY, w_capacity, NULL },
	{ EV_AZ, w_az, w_az_bad },
	{ EV_PROVISION, w_provision, NULL },
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

/* The kind of the first rule matching text, or EV__COUNT for none. */
static enum ev_kind classify(const char *text)
{
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(rules); i++)
		if (has_any(text, rules[i].any) && (!rules[i].also || has_any(text, rules[i].also)))
			return rules[i].kind;
	return EV__COUNT;
}

/* Matches folded under one (kind, subject). */
struct ev_bucket {
	enum ev_kind kind;
	const char *iid;       /* InstanceId, or NULL */
	const char *group;     /* InstanceGroupName when no InstanceId, or NULL */
	const char *iid_group; /* with an InstanceId: its group, shown but not part of the key */
	int count;
	const cJSON **ev;      /* matching events, in the order read */
	size_t nev;
};

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static struct ev_bucket *bucket_for(struct ev_bucket **v, size_t *n, enum ev_kind kind,
				    const char *iid, const char *group)
{
	struct ev_bucket *b;
	size_t i;

	for (i = 0; i < *n; i++) {
		b = &(*v)[i];
		if (b->kind == kind && same_str(b->iid, iid) && same_str(b->group, group))
			return b;
	}
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	b = &(*v)[(*n)++];
	memset(b, 0, sizeof(*b));
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

		for (i = 0; i < b->nev; i++) {
			const char *d = hp_check_str(b->ev[i], "Description", "");
			int dup = 0;

			for (j = 0; j < nshown; j++)
				if (!strcmp(d, hp_check_str(shown[j], "Description", "")))
					dup = 1;
			if (dup)
				continue;
			if (!best || event_time(b->ev[i]) > event_time(best))
				best = b->ev[i];
		}
		if (!best)
			break;
		shown[nshown++] = best;
	}
	for (i = 0; i < nshown; i++) {
		char when[32], text[HP_CHECK_CLIP_SIZE], line[HP_CHECK_CLIP_SIZE + 64];

		snprintf(line, sizeof(line), "%s %s",
			 hp_check_iso_time(event_time(shown[i]), when),
			 hp_check_clip(hp_check_str(shown[i], "Description", "(no description)"),
				       text));
		hp_finding_evidence(f, line);
	}
}

static void report_bucket(struct hp_emit *em, const struct ev_bucket *b)
{
	char where[128], when[32];
	double newest = -1;
	struct hp_finding *f;
	size_t i;

	for (i = 0; i < b->nev; i++)
		if (event_time(b->ev[i]) > newest)
			newest = event_time(b->ev[i]);
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

static void run_signals(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *events = hp_json_arr(snap->root, "events");
	const cJSON *ev;
	struct ev_bucket *buckets = NULL;
	size_t nbuckets = 0, i;
	double newest = -1;
	int n = 0, k;
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
		const char *text = hp_json_str(ev, "Description");
		const char *iid = hp_check_str(ev, "InstanceId", NULL);
		const char *group = hp_check_str(ev, "InstanceGroupName", NULL);
		enum ev_kind kind;
		struct ev_bucket *b;

		if (!cJSON_IsObject(ev))
			continue;
		n++;
		if (event_time(ev) > newest)
			newest = event_time(ev);
		kind = text ? classify(text) : EV__COUNT;
		if (kind == EV__COUNT)
			continue;
		/* With an instance id the node is the key; the group is only shown. */
		b = bucket_for(&buckets, &nbuckets, kind, iid, iid ? NULL : group);
		if (iid && !b->iid_group)
			b->iid_group = group;
		b->count++;
		b->ev = xrealloc(b->ev, (b->nev + 1) * sizeof(*b->ev));
		b->ev[b->nev++] = ev;
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
	for (k = 0; k < EV__COUNT; k++)
		for (i = 0; i < nbuckets; i++)
			if (buckets[i].kind == (enum ev_kind)k)
				report_bucket(em, &buckets[i]);
	for (i = 0; i < nbuckets; i++)
		free(buckets[i].ev);
	free(buckets);
}

const struct hp_check hp_check_events_signals = {
	.id = "events.signals",
	.section = "",
	.prio = HP_P1,
	.scope = HP_SCOPE_CLUSTER,
	.group = HP_GROUP_EVENTS,
	.summary = "cluster events matched to root-cause signals (EFA, bootstrap, lifecycle, "
		   "hardware, capacity, provisioning)",
	.run = run_signals,
};
