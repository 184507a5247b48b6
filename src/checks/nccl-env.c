/*
 * The NCCL environment and versions of the job (report group "NCCL
 * Environment and Versions"): the variables of one pod per replica type,
 * from the pod spec, or from the running container with --exec (nccl.exec,
 * src/collect/nccl-exec.c), judged against the guide's table (§ NC24); the
 * images and, with --exec, torch's NCCL version and the libnccl files across
 * the job's pods (§ NC10). Values are compared, not only looked for: the
 * collective timeout against the job's node count (not its rank count), the
 * world size against its pods and GPUs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hp/facts.h"
#include "hp/json.h"
#include "checks.h"
#include "nccl-check.h"

/* The exec result of a pod (nccl.exec.pods), or NULL. */
static const cJSON *exec_of(const cJSON *nccl, const cJSON *pod)
{
	const cJSON *x;

	cJSON_ArrayForEach(x, hp_json_arr(nccl, "exec.pods"))
		if (!strcmp(hp_check_str(x, "namespace", ""), hp_check_str(pod, "namespace", "-")) &&
		    !strcmp(hp_check_str(x, "pod", ""), hp_check_str(pod, "name", "-")))
			return x;
	return NULL;
}

/* One replica type of a job: the pod whose environment stands for it. */
struct replica {
	const char *type;            /* "worker", or "pod" without a replica type */
	const cJSON *pod;
	const cJSON *env;            /* name -> value */
	int from_exec;
};

static size_t pick_replicas(const cJSON *nccl, const struct hp_nccl_check_job *j, struct replica *r,
			    size_t max)
{
	size_t i, k, n = 0;

	for (i = 0; i < j->npods; i++) {
		const cJSON *pod = j->pods[i], *x;
		const char *type = hp_nccl_check_replica(pod) ? hp_nccl_check_replica(pod) : "pod";
		int running = !strcmp(hp_check_str(pod, "phase", ""), "Running");

		for (k = 0; k < n && strcmp(r[k].type, type); k++)
			;
		if (k == n) {
			if (n == max)
				continue;
			r[n].type = type;
			r[n].pod = NULL;
			n++;
		}
		/* A running pod stands for its type; else the first one. */
		if (r[k].pod && !(running && strcmp(hp_check_str(r[k].pod, "phase", ""), "Running")))
			continue;
		r[k].pod = pod;
		x = exec_of(nccl, pod);
		r[k].from_exec = x && cJSON_IsObject(hp_json_get(x, "env"));
		r[k].env = r[k].from_exec ? hp_json_get(x, "env")
					  : hp_json_get(hp_nccl_check_main_container(pod), "env");
	}
	return n;
}

static const char *env_get(const struct replica *r, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->env, name);

	if (!cJSON_IsString(v) || !strcmp(v->valuestring, "(valueFrom)"))
		return NULL;
	return v->valuestring;
}

/* Whether the replica's environment sets an NCCL_ or FI_ variable. */
static int sets_nccl(const struct replica *r)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, r->env)
		if (v->string && (!strncmp(v->string, "NCCL_", 5) || !strncmp(v->string, "FI_", 3)))
			return 1;
	return 0;
}

/* A problem of several replica types of one job, reported once. */
struct rule {
	enum hp_tag tag;
	enum hp_prio prio;
	const char *section;
	char msg[600];
	struct hp_buf types;
	const cJSON *pod;
	int hit;
};

static void rule_hit(struct rule *r, const struct replica *rep, enum hp_tag tag, enum hp_prio prio,
		     const char *section, const char *fmt, ...) HP_PRINTF(6, 7);

static void rule_hit(struct rule *r, const struct replica *rep, enum hp_tag tag, enum hp_prio prio,
		     const char *section, const char *fmt, ...)
{
	va_list ap;

	if (!r->hit) {
		r->tag = tag;
		r->prio = prio;
		r->section = section;
		va_start(ap, fmt);
		vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
		va_end(ap);
		r->pod = rep->pod;
		r->hit = 1;
	}
	hp_buf_printf(&r->types, "%s%.40s", r->types.len ? ", " : "", rep->type);
}

enum { R_TRACE, R_INFO, R_P2P, R_IB, R_PROVIDER, R_NO_PROVIDER, R_RDMA, R_IFNAME_NONE,
       R_IFNAME_BAD, R_MASTER, R_WORLD, R_TIMEOUT, R_CUDA_VIS, R_COUNT };

static int is_one(const char *v)
{
	return v && (!strcmp(v, "1") || !strcasecmp(v, "true"));
}

/* Whether an NCCL_SOCKET_IFNAME that names interfaces (no "^") names lo or a bridge. */
static int ifname_bad(const char *v)
{
	const char *p;

	if (!v || v[0] == '^')
		return 0;
	if (v[0] == '=')
		v++;
	for (p = v; *p; p += strcspn(p, ","), p += *p == ',') {
		if (!strncmp(p, "lo", 2) || !strncmp(p, "docker", 6) || !strncmp(p, "veth", 4) ||
		    !strncmp(p, "virbr", 5))
			return 1;
	}
	return 0;
}

static void judge_replica(const struct hp_nccl_check_job *j, const struct replica *rep, struct rule *r)
{
	const cJSON *c = hp_nccl_check_main_container(rep->pod);
	int efa = hp_nccl_check_wants_efa(c), gpu = hp_nccl_check_wants_gpu(c);
	const char *dbg = env_get(rep, "NCCL_DEBUG"), *prov = env_get(rep, "FI_PROVIDER");
	const char *ifname = env_get(rep, "NCCL_SOCKET_IFNAME"), *ws = env_get(rep, "WORLD_SIZE");
	const char *tmo = env_get(rep, "NCCL_TIMEOUT");
	size_t pods = j->npods + j->more, nodes = hp_nccl_check_job_nodes(j);
	int gpus_per_pod = hp_nccl_check_pod_gpus(rep->pod);

	if (dbg && !strcasecmp(dbg, "TRACE"))
		rule_hit(&r[R_TRACE], rep, HP_TAG_WARN, HP_P1, NULL, "NCCL_DEBUG=TRACE in job %s/%s: "
			 "tracing costs roughly 50-80%% of throughput; use WARN", j->ns, j->name);
	else if (dbg && !strcasecmp(dbg, "INFO"))
		rule_hit(&r[R_INFO], rep, HP_TAG_WARN, HP_P2, NULL, "NCCL_DEBUG=INFO in job %s/%s: "
			 "roughly 10-30%% of throughput; use WARN in production", j->ns, j->name);
	if (is_one(env_get(rep, "NCCL_P2P_DISABLE")))
		rule_hit(&r[R_P2P], rep, HP_TAG_WARN, HP_P1, "NC14", "NCCL_P2P_DISABLE=1 in job %s/%s: "
			 "every intra-node transfer goes through host memory", j->ns, j->name);
	if (efa && is_one(env_get(rep, "NCCL_IB_DISABLE")))
		rule_hit(&r[R_IB], rep, HP_TAG_WARN, HP_P1, "NC13", "NCCL_IB_DISABLE=1 in job %s/%s on "
			 "EFA pods: NCCL is told not to use the network plugin", j->ns, j->name);
	if (efa && prov && strcasecmp(prov, "efa"))
		rule_hit(&r[R_PROVIDER], rep, HP_TAG_WARN, HP_P1, "NC13", "FI_PROVIDER=%s in job %s/%s "
			 "on EFA pods: libfabric will not use EFA", prov, j->ns, j->name);
	else if (efa && !prov)
		rule_hit(&r[R_NO_PROVIDER], rep, HP_TAG_WARN, HP_P2, "NC13", "FI_PROVIDER is not set "
			 "in job %s/%s: set FI_PROVIDER=efa on EFA pods", j->ns, j->name);
	if (efa && gpu && !is_one(env_get(rep, "FI_EFA_USE_DEVICE_RDMA")))
		rule_hit(&r[R_RDMA], rep, HP_TAG_WARN, HP_P2, "NC6.2", "FI_EFA_USE_DEVICE_RDMA=1 is not "
			 "set in job %s/%s: GPUDirect RDMA may stay off", j->ns, j->name);
	if (!ifname)
		rule_hit(&r[R_IFNAME_NONE], rep, HP_TAG_WARN, HP_P2, "NC3", "NCCL_SOCKET_IFNAME is not "
			 "set in job %s/%s: NCCL may pick a container bridge or lo; use "
			 "^lo,docker,efa,veth,virbr", j->ns, j->name);
	else if (ifname_bad(ifname))
		rule_hit(&r[R_IFNAME_BAD], rep, HP_TAG_WARN, HP_P1, "NC3", "NCCL_SOCKET_IFNAME=%s in "
			 "job %s/%s names interfaces other nodes cannot reach", ifname, j->ns, j->name);
	if (j->kind && !strcmp(j->kind, "PyTorchJob") && !rep->from_exec &&
	    (!env_get(rep, "MASTER_ADDR") || !env_get(rep, "MASTER_PORT")))
		rule_hit(&r[R_MASTER], rep, HP_TAG_WARN, HP_P1, "NC12", "MASTER_ADDR or MASTER_PORT is "
			 "missing from the pod spec of PyTorchJob %s/%s", j->ns, j->name);
	if (ws) {
		char *end;
		long w = strtol(ws, &end, 10);

		if (*end || w < 1)
			rule_hit(&r[R_WORLD], rep, HP_TAG_WARN, HP_P1, NULL, "WORLD_SIZE=%s in job %s/%s "
				 "is not a number", ws, j->ns, j->name);
		else if ((size_t)w != pods && (!gpus_per_pod || (size_t)w != pods * (size_t)gpus_per_pod))
			rule_hit(&r[R_WORLD], rep, HP_TAG_WARN, HP_P1, NULL, "WORLD_SIZE=%ld in job %s/%s "
				 "matches neither its %zu pods nor its %zu GPUs: the ranks wait for peers "
				 "that never come", w, j->ns, j->name, pods,
				 pods * (size_t)gpus_per_pod);
	}
	if (tmo) {
		char *end;
		long t = strtol(tmo, &end, 10);
		long want = (long)nodes * 5 + 600;

		if (!*end && t > 0 && t < want)
			rule_hit(&r[R_TIMEOUT], rep, HP_TAG_WARN, HP_P2, "NC1.2", "NCCL_TIMEOUT=%ld in job "
				 "%s/%s is below %ld s (%zu nodes x 5 + 600)", t, j->ns, j->name, want,
				 nodes);
	}
	if (gpu && env_get(rep, "CUDA_VISIBLE_DEVICES") && !rep->from_exec)
		rule_hit(&r[R_CUDA_VIS], rep, HP_TAG_WARN, HP_P2, NULL, "CUDA_VISIBLE_DEVICES=%s is set "
			 "in the pod spec of job %s/%s: it can hide GPUs the device plugin gave",
			 env_get(rep, "CUDA_VISIBLE_DEVICES"), j->ns, j->name);
}

/* Whether an interface name is picked by one NCCL_SOCKET_IFNAME entry (prefix, or exact after '='). */
static int if_picks(const char *entry, size_t len, int exact, const char *name)
{
	return exact ? strlen(name) == len && !strncmp(name, entry, len) : !strncmp(name, entry, len);
}

/*
 * NCCL_SOCKET_IFNAME naming interfaces (no "^") that the pod's node does
 * not have, by the NCCL probe's interface list: 1 (names put into have),
 * 0 (one is there), -1 (unknown: no probe, no list).
 */
static int ifname_missing(const struct hp_snapshot *snap, const cJSON *pod, const char *v,
			  char *have, size_t n)
{
	const char *iid = hp_nccl_check_node_iid(snap, hp_json_str(pod, "node"));
	struct hp_probe_iter it;
	const cJSON *list, *x;
	cJSON *facts;
	int exact = 0, r = 1, any = 0;
	size_t len = 0;
	const char *p;

	if (!v || v[0] == '^' || !*v || !iid || !hp_probes_find(snap, "nccl_probes", iid, &it))
		return -1;
	if (*v == '=') {
		exact = 1;
		v++;
	}
	facts = hp_probes_facts(&it);
	list = hp_json_get(hp_json_get(facts, "netif"), "interfaces");
	have[0] = '\0';
	cJSON_ArrayForEach(x, list) {
		const char *name = hp_json_str(x, "name");

		if (!name)
			continue;
		any = 1;
		if (len + strlen(name) + 3 < n)
			len += (size_t)snprintf(have + len, n - len, "%s%s", len ? ", " : "", name);
		for (p = v; *p; p += strcspn(p, ","), p += *p == ',')
			if (strcspn(p, ",") && if_picks(p, strcspn(p, ","), exact, name))
				r = 0;
	}
	cJSON_Delete(facts);
	hp_probes_end(&it);
	return any ? r : -1;
}

static void judge_ifname_nodes(const struct hp_snapshot *snap, struct hp_emit *em,
			       const struct hp_nccl_check_job *j)
{
	size_t i;

	for (i = 0; i < j->npods; i++) {
		const cJSON *c = hp_nccl_check_main_container(j->pods[i]);
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(hp_json_get(c, "env"),
								  "NCCL_SOCKET_IFNAME");
		char have[300], name[600];
		struct hp_finding *f;

		if (!cJSON_IsString(v) || ifname_missing(snap, j->pods[i], v->valuestring, have,
							 sizeof(have)) != 1)
			continue;
		f = hp_emitx(em, HP_TAG_FAIL, HP_P1, "NC3",
			     hp_nccl_check_node_iid(snap, hp_json_str(j->pods[i], "node")),
			     "NCCL_SOCKET_IFNAME=%s of pod %s names no interface of its node %s (it has %s): "
			     "NCCL finds no socket interface there", v->valuestring,
			     hp_nccl_check_pod_name(j->pods[i], name, sizeof(name)),
			     hp_nccl_check_node_iid(snap, hp_json_str(j->pods[i], "node")), have);
		hp_nccl_check_pod_vars(f, j->pods[i], hp_json_str(c, "name"), j->name);
		/* One pod says it for the job. */
		return;
	}
}

static void judge_env(struct hp_emit *em, const cJSON *nccl, const struct hp_nccl_check_job *j)
{
	struct replica reps[16];
	struct rule rules[R_COUNT];
	size_t n = pick_replicas(nccl, j, reps, HP_ARRAY_LEN(reps)), i, problems = 0;
	struct hp_buf seen = HP_BUF_INIT(HP_MAX_LINE);
	int exec = 0;

	memset(rules, 0, sizeof(rules));
	for (i = 0; i < R_COUNT; i++)
		rules[i].types = (struct hp_buf)HP_BUF_INIT(HP_MAX_LINE);
	for (i = 0; i < n; i++) {
		const cJSON *c = hp_nccl_check_main_container(reps[i].pod);
		char name[600];

		/*
		 * NCCL runs where GPUs or EFA are asked for, and through an MPIJob's
		 * launcher when it hands NCCL or libfabric settings on (mpirun -x); a
		 * launcher that sets none runs no NCCL and is not judged.
		 */
		if (!hp_nccl_check_wants_gpu(c) && !hp_nccl_check_wants_efa(c) &&
		    !(j->kind && !strcmp(j->kind, "MPIJob") && !strcmp(reps[i].type, "launcher") &&
		      sets_nccl(&reps[i])))
			continue;
		hp_buf_printf(&seen, "%s%s (%s%s)", seen.len ? ", " : "",
			      hp_nccl_check_pod_name(reps[i].pod, name, sizeof(name)), reps[i].type,
			      reps[i].from_exec ? ", kubectl exec env" : "");
		exec |= reps[i].from_exec;
		judge_replica(j, &reps[i], rules);
	}
	for (i = 0; i < R_COUNT; i++) {
		struct hp_finding *f;

		if (!rules[i].hit)
			continue;
		problems++;
		f = hp_emitx(em, rules[i].tag, rules[i].prio, rules[i].section, NULL, "%s (%s)",
			     rules[i].msg, rules[i].types.buf);
		hp_nccl_check_pod_vars(f, rules[i].pod, hp_json_str(hp_nccl_check_main_container(rules[i].pod),
							     "name"), j->name);
	}
	if (!seen.len) {
		HP_CHECK_INFO(em, "Job %s/%s requests no GPU or EFA: its environment is not judged",
			      j->ns, j->name);
	} else if (!problems)
		hp_emit(em, HP_TAG_PASS, "NCCL environment of job %s/%s as the guide recommends: %s",
			j->ns, j->name, seen.buf);
	else
		HP_CHECK_INFO(em, "Environment of job %s/%s read from %s: %s", j->ns, j->name,
			      exec ? "the pod spec and the running containers" : "the pod spec",
			      seen.buf);
	for (i = 0; i < R_COUNT; i++)
		hp_buf_release(&rules[i].types);
	hp_buf_release(&seen);
}

static void run_env(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *nccl = hp_nccl_check_kube(snap, NULL);
	struct hp_nccl_check_jobs jobs;
	size_t i;

	if (!nccl)
		return;
	hp_nccl_check_jobs(nccl, &jobs);
	for (i = 0; i < jobs.n; i++) {
		judge_env(em, nccl, &jobs.v[i]);
		judge_ifname_nodes(snap, em, &jobs.v[i]);
	}
	hp_nccl_check_jobs_release(&jobs);
}

/* ---- nccl.versions ---- */


struct values {
	const char *v[16];
	size_t n;
	char where[16][300];
};

static void value_add(struct values *s, const char *v, const char *where)
{
	size_t i;

	if (!v || !*v)
		return;
	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], v))
			return;
	if (s->n < HP_ARRAY_LEN(s->v)) {
		s->v[s->n] = v;
		hp_strlcpy(s->where[s->n], where, sizeof(s->where[0]));
		s->n++;
	}
}

static void values_evidence(struct hp_finding *f, const struct values *s)
{
	size_t i;
	char line[600];

	for (i = 0; i < s->n; i++) {
		snprintf(line, sizeof(line), "%s on %s", s->v[i], s->where[i]);
		hp_finding_evidence(f, line);
	}
}

static void judge_versions_of(struct hp_emit *em, const cJSON *nccl, const struct hp_nccl_check_job *j)
{
	struct values torch = { { 0 }, 0, { { 0 } } }, lib = { { 0 }, 0, { { 0 } } };
	struct values logged = { { 0 }, 0, { { 0 } } };
	struct hp_finding *f;
	size_t i, k, execd = 0;
	int problem = 0;

	/* Images within one replica type. */
	for (i = 0; i < j->npods; i++) {
		const char *type = hp_nccl_check_replica(j->pods[i]) ? hp_nccl_check_replica(j->pods[i]) : "pod";
		struct values img = { { 0 }, 0, { { 0 } } };

		for (k = 0; k < i; k++) {
			const char *t = hp_nccl_check_replica(j->pods[k]) ? hp_nccl_check_replica(j->pods[k]) : "pod";

			if (!strcmp(t, type))
				break;
		}
		if (k < i)
			continue;
		for (k = i; k < j->npods; k++) {
			const char *t = hp_nccl_check_replica(j->pods[k]) ? hp_nccl_check_replica(j->pods[k]) : "pod";
			char name[600];

			if (strcmp(t, type))
				continue;
			value_add(&img, hp_json_str(hp_nccl_check_main_container(j->pods[k]), "image"),
				  hp_nccl_check_pod_name(j->pods[k], name, sizeof(name)));
		}
		if (img.n > 1) {
			f = hp_emitx(em, HP_TAG_WARN, HP_P1, NULL, NULL, "Pods of type %s in job %s/%s run "
				     "%zu different images: their NCCL builds may differ", type, j->ns,
				     j->name, img.n);
			values_evidence(f, &img);
			hp_nccl_check_pod_vars(f, j->pods[i], NULL, j->name);
			problem = 1;
		}
	}
	for (i = 0; i < j->npods; i++) {
		const cJSON *x = exec_of(nccl, j->pods[i]);
		char name[600];

		if (!x || strcmp(hp_check_str(x, "status", ""), "ok"))
			continue;
		execd++;
		hp_nccl_check_pod_name(j->pods[i], name, sizeof(name));
		value_add(&torch, hp_json_str(x, "torch_nccl"), name);
		value_add(&lib, hp_json_str(x, "libnccl_version"), name);
	}
	if (torch.n > 1) {
		f = hp_emit(em, HP_TAG_FAIL, "NCCL version mismatch in job %s/%s: torch reports %zu "
			    "NCCL versions across its pods", j->ns, j->name, torch.n);
		values_evidence(f, &torch);
		hp_nccl_check_pod_vars(f, j->pods[0], NULL, j->name);
		problem = 1;
	}
	/* The "NCCL version X.Y.Z" lines the pods printed in their logs. */
	for (i = 0; i < j->npods; i++) {
		const cJSON *v;
		char name[600];
		size_t nlen;

		hp_nccl_check_pod_name(j->pods[i], name, sizeof(name));
		nlen = strlen(name);
		cJSON_ArrayForEach(v, hp_json_arr(nccl, "log_scan.versions")) {
			const char *src = hp_check_str(v, "source", "");

			/* Sources are "ns/pod/container" and "ns/pod/container (previous)". */
			if (!strncmp(src, name, nlen) && src[nlen] == '/')
				value_add(&logged, hp_json_str(v, "version"), name);
		}
	}
	if (logged.n > 1) {
		f = hp_emitx(em, HP_TAG_FAIL, HP_P1, "NC10", NULL, "NCCL version mismatch in job %s/%s: "
			     "its pods' logs print %zu NCCL versions", j->ns, j->name, logged.n);
		values_evidence(f, &logged);
		hp_nccl_check_pod_vars(f, j->pods[0], NULL, j->name);
		problem = 1;
	}
	if (lib.n > 1) {
		f = hp_emit(em, HP_TAG_FAIL, "libnccl version mismatch in job %s/%s: %zu versions of the "
			    "library across its pods", j->ns, j->name, lib.n);
		values_evidence(f, &lib);
		hp_nccl_check_pod_vars(f, j->pods[0], NULL, j->name);
		problem = 1;
	}
	if (!problem && execd && (torch.n || lib.n))
		hp_emit(em, HP_TAG_PASS, "One NCCL version in the %zu running pod%s read of job %s/%s: "
			"torch's NCCL %s, libnccl %s", execd, execd == 1 ? "" : "s", j->ns, j->name,
			torch.n ? torch.v[0] : "unknown", lib.n ? lib.v[0] : "unknown");
	else if (!problem && execd)
		HP_CHECK_INFO(em, "No NCCL version found inside the %zu pods read of job %s/%s", execd,
			      j->ns, j->name);
}

static void run_versions(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *nccl = hp_nccl_check_kube(snap, NULL), *x;
	struct hp_nccl_check_jobs jobs;
	size_t i, failed = 0;
	int exec_ran;

	if (!nccl)
		return;
	exec_ran = cJSON_IsObject(hp_json_get(nccl, "exec"));
	cJSON_ArrayForEach(x, hp_json_arr(nccl, "exec.pods")) {
		struct hp_finding *f;

		if (!strcmp(hp_check_str(x, "status", ""), "ok"))
			continue;
		if (failed++ >= 8)
			continue;
		f = hp_emitx(em, HP_TAG_WARN, HP_P2, "NC26", NULL, "Cannot run the read-only commands in "
			     "%s/%s (%s): %s", hp_check_str(x, "namespace", "?"),
			     hp_check_str(x, "pod", "?"), hp_check_str(x, "status", "?"),
			     hp_check_str(x, "error", "no message"));
		(void)f;
	}
	if (hp_json_str(hp_json_get(nccl, "exec"), "skipped"))
		HP_CHECK_INFO(em, "--exec ran nothing: %s", hp_json_str(hp_json_get(nccl, "exec"), "skipped"));
	hp_nccl_check_jobs(nccl, &jobs);
	for (i = 0; i < jobs.n; i++)
		judge_versions_of(em, nccl, &jobs.v[i]);
	if (jobs.n && !exec_ran)
		HP_CHECK_INFO(em, "NCCL versions inside the containers not read (they need --exec); "
			      "images compared only");
	hp_nccl_check_jobs_release(&jobs);
}

/* ---- nccl.slurm-env ---- */

static const char *slurm_var(const cJSON *ne, const char *name, const char **from)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(hp_json_get(ne, "vars"), name);
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(hp_json_get(ne, "from"), name);

	if (from)
		*from = cJSON_IsString(f) ? f->valuestring : "?";
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void run_slurm_env(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *facts, *ne, *v;
	const char *dbg, *prov, *from, *ifname;
	struct hp_buf list = HP_BUF_INIT(HP_MAX_LINE);
	struct hp_finding *f;
	int problems = 0;

	if (!hp_nccl_check_data(snap) || strcmp(hp_snap_orchestrator(snap), "Slurm"))
		return;
	facts = hp_facts_slurm(snap);
	ne = hp_json_get(facts, "nccl_env");
	if (!facts || !ne) {
		hp_emit(em, HP_TAG_SKIP, "NCCL settings of the Slurm profile and prolog files not read: %s",
			!facts ? "the controller probe did not run" : "the controller probe's output has "
								      "no nccl_env block");
		return;
	}
	if (!hp_json_len(ne, "files")) {
		HP_CHECK_INFO(em, "No profile, prolog or nccl.conf file on the Slurm controller sets NCCL "
			      "variables (every job brings its own)");
		return;
	}
	if ((dbg = slurm_var(ne, "NCCL_DEBUG", &from)) && !strcasecmp(dbg, "TRACE")) {
		hp_emitx(em, HP_TAG_WARN, HP_P1, "NC24", NULL, "NCCL_DEBUG=TRACE in %s gives every Slurm "
			 "job NCCL tracing: roughly 50-80%% of throughput", from);
		problems++;
	} else if (dbg && !strcasecmp(dbg, "INFO")) {
		hp_emitx(em, HP_TAG_WARN, HP_P2, "NC24", NULL, "NCCL_DEBUG=INFO in %s gives every Slurm "
			 "job NCCL's INFO logging: roughly 10-30%% of throughput; use WARN", from);
		problems++;
	}
	if ((prov = slurm_var(ne, "FI_PROVIDER", &from)) && strcasecmp(prov, "efa")) {
		hp_emitx(em, HP_TAG_WARN, HP_P1, "NC13", NULL, "FI_PROVIDER=%s in %s: libfabric will not "
			 "use EFA for the cluster's jobs", prov, from);
		problems++;
	} else if (!prov) {
		hp_emitx(em, HP_TAG_WARN, HP_P2, "NC13", NULL, "FI_PROVIDER=efa is not set in the Slurm "
			 "profile or prolog files: each job must set it");
		problems++;
	}
	if (!(ifname = slurm_var(ne, "NCCL_SOCKET_IFNAME", NULL))) {
		hp_emitx(em, HP_TAG_WARN, HP_P2, "NC3", NULL, "NCCL_SOCKET_IFNAME is not set in the Slurm "
			 "profile or prolog files: use ^lo,docker,efa,veth,virbr");
		problems++;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(hp_json_get(ne, "vars"), "NCCL_P2P_DISABLE")) &&
	    cJSON_IsString(v) && is_one(v->valuestring)) {
		slurm_var(ne, "NCCL_P2P_DISABLE", &from);
		hp_emitx(em, HP_TAG_WARN, HP_P1, "NC14", NULL, "NCCL_P2P_DISABLE=1 in %s: every "
			 "intra-node transfer of the cluster's jobs goes through host memory", from);
		problems++;
	}
	cJSON_ArrayForEach(v, hp_json_get(ne, "vars"))
		if (v->string && cJSON_IsString(v) && list.len < 600)
			hp_buf_printf(&list, "%s%s=%s", list.len ? ", " : "", v->string, v->valuestring);
	f = problems ? HP_CHECK_INFO(em, "NCCL settings of the Slurm profile and prolog files: %s",
				     list.len ? list.buf : "none")
		     : hp_emit(em, HP_TAG_PASS, "NCCL settings of the Slurm profile and prolog files as "
			       "the guide recommends: %s", list.buf);
	cJSON_ArrayForEach(v, hp_json_get(ne, "files"))
		if (cJSON_IsString(v))
			hp_finding_evidence(f, v->valuestring);
	hp_buf_release(&list);
}

HP_CHECK(nccl_env, HP_GROUP_NCCL_ENV, 10,
	 .id = "nccl.env", .doc = HP_REFDOC_NCCL, .section = "NC24", .prio = HP_P2, .run = run_env);
HP_CHECK(nccl_versions, HP_GROUP_NCCL_ENV, 20,
	 .id = "nccl.versions", .doc = HP_REFDOC_NCCL, .section = "NC10", .prio = HP_P1,
	 .run = run_versions);
HP_CHECK(nccl_slurm_env, HP_GROUP_NCCL_ENV, 30,
	 .id = "nccl.slurm-env", .doc = HP_REFDOC_NCCL, .section = "NC8", .prio = HP_P2,
	 .run = run_slurm_env);
