/*
 * Suggested commands for findings (`--suggest`): picks the blocks of the
 * finding's sections in the reference document of its check (the node
 * guide or the NCCL guide), fills placeholders from the finding's own values
 * and from the snapshot, and renders them for the text and JSON reports.
 * Values are checked for shell safety and never guessed; nothing is run.
 *
 * In the JSON report each finding gets "suggestions_skipped" (blocks left
 * out because they are for the other orchestrator) and "suggestions", a
 * list of:
 *
 *   {"section": "F.2", "title": "Reboot and Replace Nodes",
 *    "intro": "step 1, reboot.", "command": "aws sagemaker ...",
 *    "blast_radius": "..." | null, "iac_note": "..." | null,
 *    "unfilled": [{"placeholder": "<NODE_NAME>", "reason": "..."}],
 *    "run_this_yourself": true}
 *
 * The command keeps its newlines (continuation lines); every string is
 * sanitised like the rest of the report.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/report.h"
#include "hp/suggest.h"

#define C_YELLOW "\033[1;33m"
#define C_RESET "\033[0m"
#define SECT "\xc2\xa7" /* U+00A7 */

/* Longest value put into a command, and ids named in a reason. */
#define MAX_VALUE 512
#define IDS_NAMED 5
/* Cap on one rendered suggestion line. */
#define MAX_LINE ((size_t)8192)

enum { K_CLUSTER, K_CLUSTER_ID, K_REGION, K_EKS_NAME, K_VPC_ID, K_EKS_CLUSTER_SG };

static const char *const known_names[] = {
	[K_CLUSTER] = "CLUSTER",
	[K_CLUSTER_ID] = "CLUSTER_ID",
	[K_REGION] = "REGION",
	[K_EKS_NAME] = "EKS_NAME",
	[K_VPC_ID] = "VPC_ID",
	[K_EKS_CLUSTER_SG] = "EKS_CLUSTER_SG",
};

_Static_assert(sizeof(known_names) / sizeof(known_names[0]) == HP_SUGGEST_KNOWN,
	       "one name per cluster-wide value");

/* A small set of distinct strings. */
struct strset {
	const char **v;
	size_t n, alloc;
};

static void set_add(struct strset *s, const char *v)
{
	size_t i;

	if (!v || !*v)
		return;
	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], v))
			return;
	hp_array_append(s, v);
}

static void set_add_array(struct strset *s, const cJSON *arr)
{
	const cJSON *x;

	cJSON_ArrayForEach(x, arr)
		if (cJSON_IsString(x))
			set_add(s, x->valuestring);
}

/* "a, b, c" of the first few members, with "…" when there are more. */
static char *set_join(const struct strset *s)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);
	size_t i;

	for (i = 0; i < s->n && i < IDS_NAMED; i++)
		hp_buf_printf(&b, "%s%.64s", i ? ", " : "", s->v[i]);
	if (s->n > IDS_NAMED)
		hp_buf_puts(&b, ", \xe2\x80\xa6");
	return hp_buf_detach(&b, NULL);
}

/* Every string value of a member named key1 or key2, anywhere under node. */
static void collect_key(const cJSON *node, const char *key1, const char *key2, struct strset *s)
{
	const cJSON *x;

	cJSON_ArrayForEach(x, node) {
		if (x->string && cJSON_IsString(x) &&
		    (!strcmp(x->string, key1) || (key2 && !strcmp(x->string, key2))))
			set_add(s, x->valuestring);
		if (cJSON_IsObject(x) || cJSON_IsArray(x))
			collect_key(x, key1, key2, s);
	}
}

/*
 * A value may go into a command a person pastes into a shell only if it
 * is one plain word: no quotes, spaces, globs, expansions or redirections.
 */
static int shell_safe(const char *v)
{
	size_t i, n = strlen(v);

	if (!n || n > MAX_VALUE || v[0] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)v[i]) && !strchr("._:/@+=,%-", v[i]))
			return 0;
	return 1;
}

static void known_set(struct hp_suggest *s, int k, const char *value, char *why)
{
	s->known[k].name = known_names[k];
	if (value && *value) {
		s->known[k].value = xstrdup(value);
		free(why);
	} else {
		s->known[k].why = why;
	}
}

/* The one value of a key in the whole snapshot, or why there is none. */
static void known_unique(struct hp_suggest *s, int k, const char *key1, const char *key2,
			 const char *what)
{
	struct strset set = { 0 };
	char *list;

	if (s->snap)
		collect_key(s->snap->root, key1, key2, &set);
	if (set.n == 1) {
		known_set(s, k, set.v[0], NULL);
	} else if (!set.n) {
		known_set(s, k, NULL, xasprintf("no %s in the data hpnode collected", what));
	} else {
		list = set_join(&set);
		known_set(s, k, NULL, xasprintf("the collected data holds %zu %ss (%s); choose one",
						 set.n, what, list));
		free(list);
	}
	hp_array_release(&set);
}

/* Parses the embedded guide and works out the values that hold for the whole cluster. */
int hp_suggest_init(struct hp_suggest *s, const struct hp_snapshot *snap, const char *cluster,
		    const char *region, struct hp_error *e)
{
	const char *text = hp_refdoc_embedded(HP_REFDOC_DETAIL);
	const char *nccl = hp_refdoc_embedded(HP_REFDOC_NCCL);
	const cJSON *root = snap ? snap->root : NULL;
	const char *v, *orch;
	char id[64] = "";

	memset(s, 0, sizeof(*s));
	if (!text || !nccl)
		return hp_error_set(e, HP_ERR_INTERNAL, "reference document '%s' is not embedded",
				    !text ? HP_REFDOC_DETAIL : HP_REFDOC_NCCL);
	if (hp_refdoc_parse(&s->doc, text, e))
		return -1;
	if (hp_refdoc_parse(&s->nccl, nccl, e)) {
		hp_refdoc_release(&s->doc);
		return -1;
	}
	s->snap = snap;
	orch = snap ? hp_snap_orchestrator(snap) : "Unknown";
	s->orch = !strcmp(orch, "EKS") ? HP_ORCH_EKS : !strcmp(orch, "Slurm") ? HP_ORCH_SLURM
										: HP_ORCH_ANY;

	v = snap ? hp_snap_cluster_name(snap) : NULL;
	known_set(s, K_CLUSTER, v && *v ? v : cluster, xstrdup("the cluster name is not known"));
	if (snap)
		hp_snap_cluster_id(snap, id);
	known_set(s, K_CLUSTER_ID, id,
		  xstrdup("the cluster ARN (DescribeCluster) is missing or malformed"));
	v = hp_json_str(root, "meta.region");
	known_set(s, K_REGION, v && *v ? v : region, xstrdup("the region is not known"));

	v = hp_json_str(root, "cluster.Orchestrator.Eks.ClusterArn");
	if (v && strchr(v, '/'))
		known_set(s, K_EKS_NAME, strrchr(v, '/') + 1, xstrdup("the EKS cluster ARN has no name"));
	else if (s->orch == HP_ORCH_SLURM)
		known_set(s, K_EKS_NAME, NULL, xstrdup("the cluster is orchestrated by Slurm, not EKS"));
	else
		known_set(s, K_EKS_NAME, NULL,
			  xstrdup("no EKS cluster ARN in the cluster's Orchestrator (DescribeCluster)"));
	known_unique(s, K_VPC_ID, "VpcId", "vpcId", "VPC id");
	known_unique(s, K_EKS_CLUSTER_SG, "clusterSecurityGroupId", NULL,
		     "EKS cluster security group");
	return 0;
}

/* Frees the document and the cluster-wide values. */
void hp_suggest_release(struct hp_suggest *s)
{
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(s->known); i++) {
		free(s->known[i].value);
		free(s->known[i].why);
	}
	hp_refdoc_release(&s->doc);
	hp_refdoc_release(&s->nccl);
	memset(s, 0, sizeof(*s));
}

/* ---- values that depend on the finding ---- */

static const cJSON *find_group(const struct hp_snapshot *snap, const char *name)
{
	const cJSON *g;
	const char *v;

	if (!snap || !name)
		return NULL;
	cJSON_ArrayForEach(g, hp_json_arr(snap->root, "cluster.InstanceGroups")) {
		v = hp_json_str(g, "InstanceGroupName");
		if (v && !strcmp(v, name))
			return g;
	}
	return NULL;
}

/* What the finding says about where it happened. */
struct where {
	const char *iid;
	const cJSON *detail;   /* DescribeClusterNode (--node) of that node, or NULL */
	const cJSON *listed;   /* its ListClusterNodes entry, or NULL */
	const char *group;
	const cJSON *gobj;
};

/* A node field, from the detail when it has it, else from the list entry. */
static const char *node_str(const struct where *w, const char *path)
{
	const char *v = hp_json_str(w->detail, path);

	if (!v || !*v)
		v = hp_json_str(w->listed, path);
	return v && *v ? v : NULL;
}

static void where_of(const struct hp_suggest *s, const struct hp_finding *f, struct where *w)
{
	const cJSON *n;
	const char *v;

	memset(w, 0, sizeof(*w));
	w->iid = f->node && *f->node ? f->node : NULL;
	if (s->snap && w->iid) {
		n = hp_json_get(s->snap->root, "node");
		v = hp_json_str(n, "InstanceId");
		if (v && !strcmp(v, w->iid))
			w->detail = n;
		cJSON_ArrayForEach(n, hp_json_arr(s->snap->root, "nodes")) {
			v = hp_json_str(n, "InstanceId");
			if (v && !strcmp(v, w->iid)) {
				w->listed = n;
				break;
			}
		}
	}
	w->group = hp_json_str(f->vars, "GROUP");
	if (!w->group || !*w->group)
		w->group = node_str(w, "InstanceGroupName");
	w->gobj = find_group(s->snap, w->group);
}

/* SG_ID or SUBNET_ID: the one id the finding's instance group (or the cluster) uses. */
static char *network_id(const struct hp_suggest *s, const struct where *w, const char *field,
			const char *what, char **why)
{
	const cJSON *cluster = hp_json_get(s->snap ? s->snap->root : NULL, "cluster"), *vpc;
	struct strset set = { 0 };
	struct hp_vpc_walk walk;
	char *v = NULL, *list;

	if (w->gobj) {
		set_add_array(&set, hp_vpc_ids(cluster, w->gobj, field));
	} else {
		/* Without a group, any group's override may be the one meant. */
		for (vpc = hp_vpc_first(&walk, cluster); vpc; vpc = hp_vpc_next(&walk))
			set_add_array(&set, hp_json_arr(vpc, field));
	}
	if (set.n == 1) {
		v = xstrdup(set.v[0]);
	} else if (!set.n) {
		*why = xasprintf("no %s in the cluster's VpcConfig (DescribeCluster)", what);
	} else {
		list = set_join(&set);
		*why = xasprintf("the %s uses %zu %ss (%s); pick the one this finding concerns",
				 w->gobj ? "instance group" : "cluster", set.n, what, list);
		free(list);
	}
	hp_array_release(&set);
	return v;
}

static char *group_field(const struct where *w, const char *path, const char *what, char **why)
{
	const cJSON *x = hp_json_get(w->gobj, path);

	if (!w->group) {
		*why = xstrdup("this finding names no instance group");
		return NULL;
	}
	if (cJSON_IsString(x) && *x->valuestring)
		return xstrdup(x->valuestring);
	if (cJSON_IsNumber(x))
		return xasprintf("%.0f", x->valuedouble);
	*why = xasprintf("DescribeCluster gives no %s for instance group '%.64s'", what, w->group);
	return NULL;
}

static char *node_field(const struct where *w, const char *path, char **why)
{
	const char *v = node_str(w, path);

	if (v)
		return xstrdup(v);
	if (!w->iid)
		*why = xstrdup("this finding names no single node");
	else
		*why = xasprintf("not collected for %.40s (run triage with --node %.40s)", w->iid,
				 w->iid);
	return NULL;
}

/* The NCCL guide's placeholders a finding did not carry itself. */
static char *resolve_job(const struct hp_suggest *s, const struct where *w, const char *name,
			 char **why)
{
	const cJSON *opts = hp_json_get(s->snap ? s->snap->root : NULL, "nccl.options");
	const char *v;

	if (!strcmp(name, "JOB") || !strcmp(name, "NAMESPACE")) {
		v = hp_json_str(opts, !strcmp(name, "JOB") ? "job" : "namespace");
		if (v && *v)
			return xstrdup(v);
		*why = xasprintf("this finding names no %s (hpnode nccl --%s narrows the run to one)",
				 !strcmp(name, "JOB") ? "job" : "namespace",
				 !strcmp(name, "JOB") ? "job" : "namespace");
		return NULL;
	}
	if (!strcmp(name, "NODE_NAME") && w->iid && s->snap) {
		const struct hp_kube_index *x = hp_facts_kube(s->snap);
		size_t i;

		for (i = 0; i < hp_kube_index_count(x); i++) {
			const struct hp_kube_node *k = hp_kube_index_at(x, i);

			if (k->name && !strcmp(k->iid, w->iid))
				return xstrdup(k->name);
		}
		*why = xasprintf("no Kubernetes node of %.40s in the data hpnode collected", w->iid);
		return NULL;
	}
	if (!strcmp(name, "POD") || !strcmp(name, "CONTAINER") || !strcmp(name, "POLICY") ||
	    !strcmp(name, "PID") || !strcmp(name, "DEVICE")) {
		*why = xasprintf("this finding names no single %s", !strcmp(name, "POD") ? "pod" :
				 !strcmp(name, "CONTAINER") ? "container" : !strcmp(name, "POLICY")
				 ? "NetworkPolicy" : !strcmp(name, "PID") ? "process" : "PCI device");
		return NULL;
	}
	*why = xstrdup("hpnode has no value for it in this finding or the snapshot");
	return NULL;
}

static char *resolve(const struct hp_suggest *s, const struct hp_finding *f, const char *name,
		     char **why)
{
	struct where w;
	const char *v;
	size_t i;
	int nccl;

	v = hp_json_str(f->vars, name);
	if (v && *v)
		return xstrdup(v);
	for (i = 0; i < HP_ARRAY_LEN(s->known); i++) {
		if (!s->known[i].name || strcmp(s->known[i].name, name))
			continue;
		if (s->known[i].value)
			return xstrdup(s->known[i].value);
		*why = xstrdup(s->known[i].why);
		return NULL;
	}
	where_of(s, f, &w);
	nccl = !strcmp(hp_check_doc(f->check), HP_REFDOC_NCCL);
	if (!strcmp(name, "INSTANCE_ID")) {
		if (w.iid)
			return xstrdup(w.iid);
		*why = xstrdup("this finding names no single node");
		return NULL;
	}
	if (!strcmp(name, "GROUP")) {
		if (w.group)
			return xstrdup(w.group);
		*why = xstrdup(w.iid ? "the node's instance group is not in the node list"
				     : "this finding names no instance group");
		return NULL;
	}
	if (!strcmp(name, "INSTANCE_TYPE")) {
		v = node_str(&w, "InstanceType");
		if (!v)
			v = hp_json_str(w.gobj, "InstanceType");
		if (v && *v)
			return xstrdup(hp_starts_with(v, "ml.") ? v + 3 : v);
		*why = xstrdup("the instance type of this finding is not known");
		return NULL;
	}
	if (!strcmp(name, "INSTANCE_COUNT"))
		return group_field(&w, "TargetCount", "TargetCount", why);
	if (!strcmp(name, "LIFECYCLE_S3_URI"))
		return group_field(&w, "LifeCycleConfig.SourceS3Uri", "LifeCycleConfig.SourceS3Uri",
				   why);
	if (!strcmp(name, "ON_CREATE_SCRIPT"))
		return group_field(&w, "LifeCycleConfig.OnCreate", "LifeCycleConfig.OnCreate", why);
	if (!strcmp(name, "EXECUTION_ROLE_ARN"))
		return group_field(&w, "ExecutionRole", "ExecutionRole", why);
	if (!strcmp(name, "NODE_IP"))
		return node_field(&w, "PrivatePrimaryIp", why);
	if (!strcmp(name, "AZ"))
		return node_field(&w, "Placement.AvailabilityZone", why);
	if (!strcmp(name, "SG_ID"))
		return network_id(s, &w, "SecurityGroupIds", "security group", why);
	if (!strcmp(name, "SUBNET_ID"))
		return network_id(s, &w, "Subnets", "subnet", why);
	if (nccl)
		return resolve_job(s, &w, name, why);
	*why = xstrdup("hpnode has no value for it in this finding or the snapshot");
	return NULL;
}

/* One placeholder's value for a finding, refused when unsafe for a shell. */
char *hp_suggest_value(const struct hp_suggest *s, const struct hp_finding *f, const char *name,
		       char **why)
{
	char *v;

	*why = NULL;
	v = resolve(s, f, name, why);
	if (v && !shell_safe(v)) {
		free(v);
		v = NULL;
		*why = xstrdup("the value read from the cluster holds characters that are not safe "
			       "in a shell command");
	}
	return v;
}

/* ---- filling ---- */

/* Length of a placeholder name at p (just after '<'), 0 when it is not one. */
static size_t placeholder_at(const char *p)
{
	size_t n = 0;

	if (*p < 'A' || *p > 'Z')
		return 0;
	while ((p[n] >= 'A' && p[n] <= 'Z') || isdigit((unsigned char)p[n]) || p[n] == '_')
		n++;
	return p[n] == '>' ? n : 0;
}

static void note_unfilled(struct hp_suggestion *sg, const char *name, char *why)
{
	size_t i;

	for (i = 0; i < sg->nunfilled; i++) {
		if (!strcmp(sg->unfilled[i].name, name)) {
			free(why);
			return;
		}
	}
	sg->unfilled = hp_array_grow(sg->unfilled, &sg->unfilled_alloc, sg->nunfilled, 1,
				     sizeof(*sg->unfilled));
	sg->unfilled[sg->nunfilled].name = xstrdup(name);
	sg->unfilled[sg->nunfilled].why = why;
	sg->nunfilled++;
}

static char *fill(const struct hp_suggest *s, const struct hp_finding *f, const char *text,
		  struct hp_suggestion *sg)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_FILE);
	const char *p = text;

	while (*p) {
		const char *lt = strchr(p, '<');
		size_t n;
		char name[64], *v, *why;

		if (!lt) {
			hp_buf_puts(&b, p);
			break;
		}
		hp_buf_putn(&b, p, (size_t)(lt - p));
		n = placeholder_at(lt + 1);
		if (!n || n >= sizeof(name)) {
			hp_buf_putc(&b, '<');
			p = lt + 1;
			continue;
		}
		memcpy(name, lt + 1, n);
		name[n] = '\0';
		v = hp_suggest_value(s, f, name, &why);
		if (v) {
			hp_buf_puts(&b, v);
			free(v);
		} else {
			hp_buf_putn(&b, lt, n + 2);
			note_unfilled(sg, name, why);
		}
		p = lt + n + 2;
	}
	return hp_buf_detach(&b, NULL);
}

/* ---- state: commands that do not fit what the snapshot shows ---- */

/* States in which HyperPod is still provisioning or handling a node itself. */
static const char *const busy_states[] = { "Pending", "DeepHealthCheckInProgress",
					   "SystemUpdating", "ShuttingDown" };

/* The snapshot's security group sg, or NULL. */
static const cJSON *sg_of(const struct hp_suggest *s, const char *sg)
{
	if (!s->snap || !sg)
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(hp_json_get(s->snap->root,
							    "network.security_groups"), sg);
}

static int perm_all_traffic(const cJSON *perm)
{
	const char *p = hp_json_str(perm, "ipProtocol");

	return p && (!strcmp(p, "-1") || !strcmp(p, "all"));
}

/* sg has an all-traffic rule in perms_key naming group other. */
static int has_group_rule(const cJSON *sg, const char *perms_key, const char *other)
{
	const cJSON *perm, *g;

	cJSON_ArrayForEach(perm, hp_json_arr(sg, perms_key)) {
		if (!perm_all_traffic(perm))
			continue;
		cJSON_ArrayForEach(g, hp_json_arr(perm, "groups")) {
			const char *gid = hp_json_str(g, "groupId");

			if (gid && !strcmp(gid, other))
				return 1;
		}
	}
	return 0;
}

/* sg lets HTTPS out to 0.0.0.0/0 (all traffic, or TCP covering 443). */
static int has_https_egress(const cJSON *sg)
{
	const cJSON *perm, *r;

	cJSON_ArrayForEach(perm, hp_json_arr(sg, "ipPermissionsEgress")) {
		const char *p = hp_json_str(perm, "ipProtocol") ? hp_json_str(perm, "ipProtocol") : "";
		int fits = perm_all_traffic(perm) ||
			   ((!strcmp(p, "tcp") || !strcmp(p, "6")) &&
			    hp_json_num(perm, "fromPort", 99999) <= 443 &&
			    hp_json_num(perm, "toPort", -1) >= 443);

		if (!fits)
			continue;
		cJSON_ArrayForEach(r, hp_json_arr(perm, "ipRanges")) {
			const char *cidr = hp_json_str(r, "cidrIp");

			if (cidr && !strcmp(cidr, "0.0.0.0/0"))
				return 1;
		}
	}
	return 0;
}

/*
 * Whether one shell command (a line and its continuations) of a block adds
 * a security group rule that the snapshot shows already exists; what it
 * is goes into *what.
 */
static int rule_exists(const struct hp_suggest *s, const struct hp_finding *f, const char *cmd,
		       char **what)
{
	int egress = strstr(cmd, "authorize-security-group-egress") != NULL;
	int ingress = strstr(cmd, "authorize-security-group-ingress") != NULL;
	char *sg = NULL, *target = NULL, *why = NULL;
	const char *tname;
	int found = 0;

	if (!egress && !ingress)
		return 0;
	/* The group the rule is added to, and the group it names. */
	tname = strstr(cmd, "--group-id <EKS_CLUSTER_SG>") ? "EKS_CLUSTER_SG" : "SG_ID";
	target = hp_suggest_value(s, f, tname, &why);
	free(why);
	why = NULL;
	if (!target)
		return 0;
	if (strstr(cmd, "\"GroupId\":\"<SG_ID>\"")) {
		sg = hp_suggest_value(s, f, "SG_ID", &why);
		free(why);
		if (sg && has_group_rule(sg_of(s, target), egress ? "ipPermissionsEgress" :
					 "ipPermissions", sg)) {
			found = 1;
			*what = xasprintf("%s already has the all-traffic %s rule %s %s", target,
					  egress ? "outbound" : "inbound", egress ? "to" : "from",
					  !strcmp(sg, target) ? "itself" : sg);
		}
	} else if (egress && strstr(cmd, "\"CidrIp\":\"0.0.0.0/0\"") && strstr(cmd, "443")) {
		if (has_https_egress(sg_of(s, target))) {
			found = 1;
			*what = xasprintf("%s already lets HTTPS out to 0.0.0.0/0", target);
		}
	}
	free(sg);
	free(target);
	return found;
}

/*
 * The block's command with the commands that do not fit the snapshot taken
 * out (caller frees), or NULL when none is left; every reason lands in *why
 * (caller frees), NULL when everything fits.
 */
static char *fit_command(const struct hp_suggest *s, const struct hp_finding *f,
			 const char *command, char **why)
{
	struct hp_buf keep = HP_BUF_INIT(HP_MAX_FILE), reasons = HP_BUF_INIT(HP_MAX_LINE);
	const char *p = command;
	const char *rec = s->snap ? hp_json_str(s->snap->root, "cluster.NodeRecovery") : NULL;
	size_t kept = 0, i;

	*why = NULL;
	if (strstr(command, "--node-recovery Automatic") && rec && !strcmp(rec, "Automatic")) {
		*why = xstrdup("NodeRecovery is already Automatic");
		hp_buf_release(&keep);
		hp_buf_release(&reasons);
		return NULL;
	}
	if ((strstr(command, "batch-reboot-cluster-nodes") ||
	     strstr(command, "batch-replace-cluster-nodes") ||
	     strstr(command, "scontrol update nodename")) && f->node && s->snap) {
		const cJSON *n;

		cJSON_ArrayForEach(n, hp_json_arr(s->snap->root, "nodes")) {
			const char *id = hp_json_str(n, "InstanceId");
			const char *st = hp_json_str(n, "InstanceStatus.Status");

			if (!id || strcmp(id, f->node) || !st)
				continue;
			for (i = 0; i < HP_ARRAY_LEN(busy_states); i++) {
				if (strcmp(st, busy_states[i]))
					continue;
				*why = xasprintf("%.40s is %s: HyperPod is still provisioning or "
						 "handling it; look again once it is Running or "
						 "Failure", f->node, st);
				hp_buf_release(&keep);
				hp_buf_release(&reasons);
				return NULL;
			}
		}
	}
	/* One shell command at a time: a line and the indented lines continuing it. */
	while (*p) {
		const char *end = p;
		char *one, *what = NULL;

		do {
			end = strchr(end, '\n');
			end = end ? end + 1 : p + strlen(p);
		} while (*end == ' ' || *end == '\t');
		one = xstrndup(p, (size_t)(end - p));
		if (rule_exists(s, f, one, &what)) {
			hp_buf_printf(&reasons, "%s%s", reasons.len ? "; " : "", what);
			free(what);
		} else {
			hp_buf_puts(&keep, one);
			kept++;
		}
		free(one);
		p = end;
	}
	if (reasons.len)
		*why = hp_buf_detach(&reasons, NULL);
	hp_buf_release(&reasons);
	if (!kept) {
		hp_buf_release(&keep);
		return NULL;
	}
	/* No trailing newline: the block's command never ends with one. */
	while (keep.len && keep.buf[keep.len - 1] == '\n')
		keep.buf[--keep.len] = '\0';
	return hp_buf_detach(&keep, NULL);
}

static void note_unfit(struct hp_suggestions *out, const char *section, char *why)
{
	out->unfit = hp_array_grow(out->unfit, &out->unfit_alloc, out->nunfit, 1,
				   sizeof(*out->unfit));
	out->unfit[out->nunfit++] = xasprintf(SECT " %s: %s", section, why);
	free(why);
}

/* Next id of a '+'-joined section list, copied into id; 0 at the end. */
static int next_part(const char **sp, char *id, size_t size)
{
	const char *s = *sp;
	size_t n;

	while (*s == '+')
		s++;
	if (!*s)
		return 0;
	n = strcspn(s, "+");
	hp_strlcpy(id, s, n + 1 < size ? n + 1 : size);
	*sp = s + n;
	return 1;
}

/* Every block under each of the finding's sections, once, filled in. */
void hp_suggest_finding(const struct hp_suggest *s, const struct hp_finding *f,
			struct hp_suggestions *out)
{
	const char *name = hp_check_doc(f->check);
	const struct hp_refdoc *d = !strcmp(name, HP_REFDOC_DETAIL) ? &s->doc
				    : !strcmp(name, HP_REFDOC_NCCL) ? &s->nccl : NULL;
	const char *p = f->section ? f->section : "";
	unsigned char *taken;
	char id[32], *cmd, *why;
	size_t k;

	memset(out, 0, sizeof(*out));
	out->doc = d;
	/* A check pointing into a document without suggested commands (the catalog) gets none. */
	if (!d || !d->nblk)
		return;
	taken = xcalloc(d->nblk, 1);
	while (next_part(&p, id, sizeof(id))) {
		size_t root = hp_refdoc_find(d, id);

		if (root == HP_REFDOC_NONE)
			continue;
		for (k = 0; k < d->nblk; k++) {
			const struct hp_refdoc_block *b = &d->blk[k];
			struct hp_suggestion *sg;

			if (taken[k] || !hp_refdoc_within(d, b->section, root))
				continue;
			taken[k] = 1;
			if (b->orch != HP_ORCH_ANY && s->orch != HP_ORCH_ANY && b->orch != s->orch) {
				out->skipped++;
				continue;
			}
			cmd = fit_command(s, f, b->command, &why);
			if (why)
				note_unfit(out, d->sec[b->section].id, why);
			if (!cmd)
				continue;
			sg = hp_array_push(out);
			sg->block = k;
			sg->section = b->section;
			sg->command = fill(s, f, cmd, sg);
			free(cmd);
			sg->intro = fill(s, f, b->intro, sg);
			sg->blast = b->blast ? fill(s, f, b->blast, sg) : NULL;
			sg->iac = b->iac ? fill(s, f, b->iac, sg) : NULL;
		}
	}
	free(taken);
}

/* Frees a list made by hp_suggest_finding(). */
void hp_suggestions_release(struct hp_suggestions *v)
{
	size_t i, j;

	for (i = 0; i < v->n; i++) {
		struct hp_suggestion *sg = &v->v[i];

		free(sg->intro);
		free(sg->command);
		free(sg->blast);
		free(sg->iac);
		for (j = 0; j < sg->nunfilled; j++) {
			free(sg->unfilled[j].name);
			free(sg->unfilled[j].why);
		}
		free(sg->unfilled);
	}
	hp_array_release(v);
	for (i = 0; i < v->nunfit; i++)
		free(v->unfit[i]);
	free(v->unfit);
	memset(v, 0, sizeof(*v));
}

/* ---- rendering ---- */

static int wants_suggestions(const struct hp_finding *f)
{
	return (f->tag == HP_TAG_FAIL || f->tag == HP_TAG_WARN) && f->section && *f->section;
}

static void put_line(struct hp_buf *out, const char *indent, const char *text)
{
	hp_buf_puts(out, indent);
	hp_sanitize(text, out, MAX_LINE);
	hp_buf_putc(out, '\n');
}

static const char *orch_other(const struct hp_suggest *s)
{
	return s->orch == HP_ORCH_EKS ? "Slurm" : "EKS";
}

/* The lines under a FAIL/WARN finding in the text report. */
void hp_suggest_text(const struct hp_suggest *s, const struct hp_finding *f, int color,
		     struct hp_buf *out)
{
	struct hp_suggestions v;
	size_t i, j;

	if (!wants_suggestions(f))
		return;
	hp_suggest_finding(s, f, &v);
	for (i = 0; i < v.n; i++) {
		const struct hp_suggestion *sg = &v.v[i];
		const char *line = sg->command;

		hp_buf_puts(out, "    ");
		if (color)
			hp_buf_puts(out, C_YELLOW);
		hp_buf_puts(out, "Suggested command (run this yourself)");
		if (color)
			hp_buf_puts(out, C_RESET);
		hp_buf_printf(out, ", " SECT " %s", v.doc->sec[sg->section].id);
		if (*sg->intro) {
			hp_buf_puts(out, ": ");
			hp_sanitize(sg->intro, out, MAX_LINE);
		}
		hp_buf_putc(out, '\n');
		/* One output line per command line, so continuations still paste. */
		while (line) {
			const char *nl = strchr(line, '\n');
			char *one = nl ? xstrndup(line, (size_t)(nl - line)) : xstrdup(line);

			put_line(out, "      ", one);
			free(one);
			line = nl ? nl + 1 : NULL;
		}
		hp_buf_puts(out, "      Blast radius: ");
		if (sg->blast)
			hp_sanitize(sg->blast, out, MAX_LINE);
		else
			hp_buf_printf(out, "not stated; read " SECT " %s before running it",
				      v.doc->sec[sg->section].id);
		hp_buf_putc(out, '\n');
		if (sg->iac) {
			hp_buf_puts(out, "      IaC note: ");
			hp_sanitize(sg->iac, out, MAX_LINE);
			hp_buf_putc(out, '\n');
		}
		for (j = 0; j < sg->nunfilled; j++) {
			hp_buf_printf(out, "      Not filled in: <%s> (", sg->unfilled[j].name);
			hp_sanitize(sg->unfilled[j].why, out, MAX_LINE);
			hp_buf_puts(out, ")\n");
		}
	}
	if (v.skipped)
		hp_buf_printf(out, "    (%zu suggested command%s for %s clusters left out)\n", v.skipped,
			      v.skipped == 1 ? "" : "s", orch_other(s));
	for (i = 0; i < v.nunfit; i++) {
		hp_buf_puts(out, "    (Not suggested, it does not fit this cluster: ");
		hp_sanitize(v.unfit[i], out, MAX_LINE);
		hp_buf_puts(out, ")\n");
	}
	if (!v.n && !v.skipped && !v.nunfit) {
		struct hp_buf ids = HP_BUF_INIT(MAX_LINE);
		const char *p = f->section;
		char id[32];

		while (next_part(&p, id, sizeof(id)))
			hp_buf_printf(&ids, "%s%s", ids.len ? " " : "", id);
		hp_buf_puts(out, "    No command to suggest; read the section: hpnode explain ");
		hp_sanitize(ids.buf, out, MAX_LINE);
		hp_buf_putc(out, '\n');
		hp_buf_release(&ids);
	}
	hp_suggestions_release(&v);
}

static void add_clean(cJSON *obj, const char *key, const char *s)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_FILE);

	if (!s) {
		cJSON_AddNullToObject(obj, key);
		return;
	}
	/* Sanitise line by line: the command keeps its newlines. */
	while (s) {
		const char *nl = strchr(s, '\n');
		char *one = nl ? xstrndup(s, (size_t)(nl - s)) : xstrdup(s);

		hp_sanitize(one, &b, MAX_LINE);
		free(one);
		if (nl)
			hp_buf_putc(&b, '\n');
		s = nl ? nl + 1 : NULL;
	}
	cJSON_AddStringToObject(obj, key, b.buf);
	hp_buf_release(&b);
}

/* The finding's "suggestions" and "suggestions_skipped" members. */
void hp_suggest_json(const struct hp_suggest *s, const struct hp_finding *f, cJSON *obj)
{
	cJSON *list = cJSON_CreateArray();
	struct hp_suggestions v = { 0 };
	size_t i, j;

	if (wants_suggestions(f))
		hp_suggest_finding(s, f, &v);
	for (i = 0; i < v.n; i++) {
		const struct hp_suggestion *sg = &v.v[i];
		cJSON *o = cJSON_CreateObject(), *un = cJSON_CreateArray();

		add_clean(o, "section", v.doc->sec[sg->section].id);
		add_clean(o, "title", v.doc->sec[sg->section].title);
		add_clean(o, "intro", sg->intro);
		add_clean(o, "command", sg->command);
		add_clean(o, "blast_radius", sg->blast);
		add_clean(o, "iac_note", sg->iac);
		for (j = 0; j < sg->nunfilled; j++) {
			cJSON *u = cJSON_CreateObject();
			char *ph = xasprintf("<%s>", sg->unfilled[j].name);

			add_clean(u, "placeholder", ph);
			add_clean(u, "reason", sg->unfilled[j].why);
			free(ph);
			cJSON_AddItemToArray(un, u);
		}
		cJSON_AddItemToObject(o, "unfilled", un);
		cJSON_AddTrueToObject(o, "run_this_yourself");
		cJSON_AddItemToArray(list, o);
	}
	cJSON_AddItemToObject(obj, "suggestions", list);
	cJSON_AddNumberToObject(obj, "suggestions_skipped", (double)v.skipped);
	{
		cJSON *unfit = cJSON_CreateArray();

		for (i = 0; i < v.nunfit; i++) {
			struct hp_buf clean = HP_BUF_INIT(MAX_LINE);

			hp_sanitize(v.unfit[i], &clean, MAX_LINE);
			cJSON_AddItemToArray(unfit, cJSON_CreateString(clean.buf));
			hp_buf_release(&clean);
		}
		cJSON_AddItemToObject(obj, "suggestions_unfit", unfit);
	}
	hp_suggestions_release(&v);
}
