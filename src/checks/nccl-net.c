/*
 * The job's network inside Kubernetes (report group "Job Network"): a
 * headless Service that selects the job's pods, so MASTER_ADDR resolves;
 * and NetworkPolicies that select the job's pods and allow no traffic, or
 * only some ports (NCCL connects on ephemeral ports). Selectors are matched
 * against the pod labels the collector kept; a selector on a label it did
 * not keep is "cannot tell", never a match or a miss.
 */
#include <stdio.h>
#include <string.h>

#include "hp/json.h"
#include "checks.h"
#include "nccl-check.h"

/* The pod labels the collector keeps (src/collect/nccl-read.c). */
static const char *const kept[] = {
	"training.kubeflow.org/job-name", "training.kubeflow.org/replica-type",
	"training.kubeflow.org/replica-index", "job-name", "app", "app.kubernetes.io/name",
};

static int is_kept(const char *key)
{
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(kept); i++)
		if (!strcmp(kept[i], key))
			return 1;
	return 0;
}

/* Whether a label map selects the pod: 1 yes, 0 no, -1 it names a label not kept. */
static int labels_select(const cJSON *match, const cJSON *pod)
{
	const cJSON *kv;
	int unknown = 0;

	cJSON_ArrayForEach(kv, match) {
		const char *have;

		if (!kv->string || !cJSON_IsString(kv))
			return 0;
		if (!is_kept(kv->string)) {
			unknown = 1;
			continue;
		}
		have = hp_nccl_check_label(pod, kv->string);
		if (!have || strcmp(have, kv->valuestring))
			return 0;
	}
	return unknown ? -1 : 1;
}

/* matchExpressions (In, NotIn, Exists, DoesNotExist) over the kept labels. */
static int expressions_select(const cJSON *exprs, const cJSON *pod)
{
	const cJSON *e, *v;
	int unknown = 0;

	cJSON_ArrayForEach(e, exprs) {
		const char *key = hp_json_str(e, "key"), *op = hp_json_str(e, "operator"), *have;
		int in = 0;

		if (!key || !op)
			return 0;
		if (!is_kept(key)) {
			unknown = 1;
			continue;
		}
		have = hp_nccl_check_label(pod, key);
		cJSON_ArrayForEach(v, hp_json_arr(e, "values"))
			in |= have && cJSON_IsString(v) && !strcmp(v->valuestring, have);
		if (!strcmp(op, "In") ? !in : !strcmp(op, "NotIn") ? in :
		    !strcmp(op, "Exists") ? !have : !strcmp(op, "DoesNotExist") ? have != NULL : 1)
			return 0;
	}
	return unknown ? -1 : 1;
}

/* A NetworkPolicy podSelector over the pod: null or {} selects every pod of its namespace. */
static int selector_selects(const cJSON *sel, const cJSON *pod)
{
	int a, b;

	if (!cJSON_IsObject(sel))
		return 1;
	a = labels_select(hp_json_get(sel, "matchLabels"), pod);
	if (!a)
		return 0;
	b = expressions_select(hp_json_get(sel, "matchExpressions"), pod);
	if (!b)
		return 0;
	return a < 0 || b < 0 ? -1 : 1;
}

static int same_ns(const cJSON *obj, const cJSON *pod)
{
	const char *a = hp_json_str(obj, "namespace"), *b = hp_json_str(pod, "namespace");

	return a && b && !strcmp(a, b);
}

/* ---- nccl.headless-service ---- */

/* The env value of the job's pods (first main container that sets it), or NULL. */
static const char *job_env(const struct hp_nccl_check_job *j, const char *name, const cJSON **from)
{
	size_t i;

	for (i = 0; i < j->npods; i++) {
		const cJSON *c = hp_nccl_check_main_container(j->pods[i]);
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(hp_json_get(c, "env"), name);
		const char *v = cJSON_IsString(x) ? x->valuestring : NULL;

		if (v && *v && strcmp(v, "(valueFrom)")) {
			if (from)
				*from = j->pods[i];
			return v;
		}
	}
	return NULL;
}

/* Whether s is a dotted IPv4 address or holds ':' (IPv6). */
static int is_address(const char *s)
{
	size_t i, dots = 0;

	if (strchr(s, ':'))
		return 1;
	for (i = 0; s[i]; i++) {
		if (s[i] == '.')
			dots++;
		else if (s[i] < '0' || s[i] > '9')
			return 0;
	}
	return dots == 3;
}

static void judge_service(const struct hp_snapshot *snap, struct hp_emit *em, const cJSON *nccl,
			  const struct hp_nccl_check_job *j)
{
	const cJSON *svc, *from = NULL;
	const char *master = job_env(j, "MASTER_ADDR", &from);
	char jname[600], first[256] = "", second[256] = "", list[600] = "";
	const char *named = NULL;
	struct hp_finding *f;
	size_t i, n = 0;
	int unknown = 0;

	(void)snap;
	/* Only jobs that rendezvous through MASTER_ADDR (PyTorchJob, torchrun); MPIJob uses its hostfile. */
	if (!master && !(j->kind && !strcmp(j->kind, "PyTorchJob")))
		return;
	hp_nccl_check_job_name(j, jname, sizeof(jname));
	if (master && !is_address(master)) {
		size_t k = strcspn(master, "."), k2;

		snprintf(first, sizeof(first), "%.*s", (int)(k < 200 ? k : 200), master);
		/* <pod>.<subdomain service>.<namespace>.svc…: the second label names the Service. */
		if (master[k] == '.') {
			k2 = strcspn(master + k + 1, ".");
			snprintf(second, sizeof(second), "%.*s", (int)(k2 < 200 ? k2 : 200),
				 master + k + 1);
		}
	}
	cJSON_ArrayForEach(svc, hp_json_arr(nccl, "services")) {
		int sel = 0;

		if (!same_ns(svc, j->pods[0]))
			continue;
		if ((*first && !strcmp(hp_check_str(svc, "name", ""), first)) ||
		    (*second && !strcmp(hp_check_str(svc, "name", ""), second)))
			named = hp_json_str(svc, "name");
		if (!cJSON_IsTrue(cJSON_GetObjectItem(svc, "headless")) ||
		    !cJSON_GetArraySize(hp_json_get(svc, "selector")))
			continue;
		for (i = 0; i < j->npods && sel <= 0; i++) {
			int s = labels_select(hp_json_get(svc, "selector"), j->pods[i]);

			if (s)
				sel = s;
		}
		if (!sel)
			continue;
		unknown |= sel < 0;
		if (n++ < 4) {
			size_t len = strlen(list);

			snprintf(list + len, sizeof(list) - len, "%s%s/%s", len ? ", " : "",
				 hp_check_str(svc, "namespace", "?"), hp_check_str(svc, "name", "?"));
		}
	}
	/* A name resolves only through a Service: "<service>" or "<pod>.<service>…". */
	if (*first && !named) {
		f = hp_emitx(em, HP_TAG_FAIL, HP_P1, NULL, NULL, "MASTER_ADDR %s of job %s names no "
			     "Service of namespace %s: rendezvous cannot resolve it", master, jname,
			     j->ns);
		hp_nccl_check_pod_vars(f, from, NULL, j->name);
		return;
	}
	if (!n) {
		f = hp_emit(em, HP_TAG_WARN, "No headless Service selects the pods of job %s: "
			    "MASTER_ADDR names cannot resolve to them", jname);
		hp_nccl_check_pod_vars(f, j->pods[0], NULL, j->name);
		if (master)
			hp_finding_evidence(f, master);
		return;
	}
	hp_emit(em, HP_TAG_PASS, "Headless Service %s selects pods of job %s%s%s%s", list, jname,
		master ? " (MASTER_ADDR " : "", master ? master : "", master ? ")" : "");
	if (unknown)
		HP_CHECK_INFO(em, "A Service selector of job %s names labels hpnode does not read; "
			      "its match is assumed", jname);
}

static void run_service(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *nccl = hp_nccl_check_kube(snap, NULL);
	struct hp_nccl_check_jobs jobs;
	size_t i;

	if (!nccl)
		return;
	if (hp_nccl_check_read_failed(nccl, em, "services", "Services",
			       "the headless Service is not checked"))
		return;
	hp_nccl_check_jobs(nccl, &jobs);
	for (i = 0; i < jobs.n; i++)
		judge_service(snap, em, nccl, &jobs.v[i]);
	hp_nccl_check_jobs_release(&jobs);
}

/* ---- nccl.network-policy ---- */

/* Whether the policy is of type dir ("Ingress"/"Egress"); no policyTypes: Ingress, and Egress
   when it has egress rules (the API server's default). */
static int policy_has_type(const cJSON *p, const char *dir)
{
	const cJSON *t, *types = hp_json_get(p, "policy_types");

	if (cJSON_GetArraySize(types) > 0) {
		cJSON_ArrayForEach(t, types)
			if (cJSON_IsString(t) && !strcmp(t->valuestring, dir))
				return 1;
		return 0;
	}
	if (!strcmp(dir, "Ingress"))
		return 1;
	return hp_json_num(p, "egress_rules", 0) > 0;
}

/* Every rule of the direction lists ports (so only those ports are allowed). */
static int rules_restrict_ports(const cJSON *rules, struct hp_buf *ports)
{
	const cJSON *r, *pt;
	int all = cJSON_GetArraySize(rules) > 0;

	cJSON_ArrayForEach(r, rules) {
		if (!cJSON_GetArraySize(hp_json_get(r, "ports"))) {
			all = 0;
			continue;
		}
		cJSON_ArrayForEach(pt, hp_json_arr(r, "ports")) {
			const cJSON *port = hp_json_get(pt, "port");

			if (ports->len > 200)
				continue;
			if (cJSON_IsNumber(port))
				hp_buf_printf(ports, "%s%.0f", ports->len ? ", " : "", port->valuedouble);
			else if (cJSON_IsString(port))
				hp_buf_printf(ports, "%s%.40s", ports->len ? ", " : "", port->valuestring);
		}
	}
	return all;
}

struct dir_state {
	const char *dir;           /* "Ingress" / "Egress" */
	const char *rules_key;     /* "ingress" / "egress" */
	const char *count_key;     /* "ingress_rules" / "egress_rules" */
	size_t policies;           /* policies of this type selecting the pod */
	size_t rules;              /* their rules, together */
	int restricted;            /* every rule names ports */
	const cJSON *first;        /* a selecting policy, for the message */
	struct hp_buf names, ports;
};

static void judge_policies(struct hp_emit *em, const cJSON *nccl, const struct hp_nccl_check_job *j)
{
	struct dir_state d[2] = {
		{ "Ingress", "ingress", "ingress_rules", 0, 0, 1, NULL, HP_BUF_INIT(HP_MAX_LINE),
		  HP_BUF_INIT(HP_MAX_LINE) },
		{ "Egress", "egress", "egress_rules", 0, 0, 1, NULL, HP_BUF_INIT(HP_MAX_LINE),
		  HP_BUF_INIT(HP_MAX_LINE) },
	};
	const cJSON *p, *pod = j->pods[0];
	char jname[600];
	size_t k, selecting = 0;
	int maybe = 0, problem = 0;
	struct hp_finding *f;

	hp_nccl_check_job_name(j, jname, sizeof(jname));
	cJSON_ArrayForEach(p, hp_json_arr(nccl, "network_policies")) {
		int sel;

		if (!same_ns(p, pod))
			continue;
		sel = selector_selects(hp_json_get(p, "pod_selector"), pod);
		if (!sel)
			continue;
		if (sel < 0) {
			maybe = 1;
			continue;
		}
		selecting++;
		for (k = 0; k < 2; k++) {
			if (!policy_has_type(p, d[k].dir))
				continue;
			d[k].policies++;
			d[k].rules += (size_t)hp_json_num(p, d[k].count_key, 0);
			if (!rules_restrict_ports(hp_json_get(p, d[k].rules_key), &d[k].ports))
				d[k].restricted &= hp_json_num(p, d[k].count_key, 0) == 0;
			if (!d[k].first)
				d[k].first = p;
			if (d[k].names.len < 300)
				hp_buf_printf(&d[k].names, "%s%s", d[k].names.len ? ", " : "",
					      hp_check_str(p, "name", "?"));
		}
	}
	for (k = 0; k < 2; k++) {
		const char *what = k ? "egress from" : "ingress to";

		if (!d[k].policies)
			continue;
		if (!d[k].rules) {
			f = hp_emitx(em, HP_TAG_FAIL, HP_P1, NULL, NULL, "NetworkPolicy %s/%s blocks all "
				     "%s the pods of job %s (it selects them and allows no %s)", j->ns,
				     d[k].names.buf, what, jname, k ? "egress" : "ingress");
			hp_nccl_check_pod_vars(f, pod, NULL, j->name);
			hp_finding_var(f, "POLICY", hp_check_str(d[k].first, "name", "?"));
			problem = 1;
		} else if (d[k].restricted) {
			f = hp_emitx(em, HP_TAG_WARN, HP_P1, NULL, NULL, "NetworkPolicy %s/%s allows %s "
				     "the pods of job %s only on ports %s: NCCL connects on ephemeral "
				     "ports", j->ns, d[k].names.buf, what, jname,
				     d[k].ports.len ? d[k].ports.buf : "(none named)");
			hp_nccl_check_pod_vars(f, pod, NULL, j->name);
			hp_finding_var(f, "POLICY", hp_check_str(d[k].first, "name", "?"));
			problem = 1;
		}
	}
	if (!problem && selecting)
		hp_emit(em, HP_TAG_PASS, "NetworkPolicies selecting the pods of job %s allow their "
			"traffic (%s)", jname, d[0].names.len ? d[0].names.buf : d[1].names.buf);
	else if (!problem && !maybe)
		hp_emit(em, HP_TAG_PASS, "No NetworkPolicy selects the pods of job %s: all traffic is "
			"allowed", jname);
	if (maybe)
		HP_CHECK_INFO(em, "A NetworkPolicy in %s selects pods by labels hpnode does not read; "
			      "whether it applies to job %s is not judged", j->ns, jname);
	for (k = 0; k < 2; k++) {
		hp_buf_release(&d[k].names);
		hp_buf_release(&d[k].ports);
	}
}

static void run_policy(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *nccl = hp_nccl_check_kube(snap, NULL);
	struct hp_nccl_check_jobs jobs;
	size_t i;

	if (!nccl)
		return;
	if (hp_nccl_check_read_failed(nccl, em, "networkpolicies", "NetworkPolicies",
			       "they are not checked"))
		return;
	hp_nccl_check_jobs(nccl, &jobs);
	for (i = 0; i < jobs.n; i++)
		judge_policies(em, nccl, &jobs.v[i]);
	hp_nccl_check_jobs_release(&jobs);
}

HP_CHECK(nccl_headless_service, HP_GROUP_NCCL_NET, 10,
	 .id = "nccl.headless-service", .doc = HP_REFDOC_NCCL, .section = "NC12", .prio = HP_P1,
	 .run = run_service);
HP_CHECK(nccl_network_policy, HP_GROUP_NCCL_NET, 20,
	 .id = "nccl.network-policy", .doc = HP_REFDOC_NCCL, .section = "NC22", .prio = HP_P1,
	 .run = run_policy);
