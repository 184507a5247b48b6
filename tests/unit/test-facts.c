/*
 * The facts cache and the core decoders around it: every decoder runs
 * once per snapshot however many checks read its result (counted by the
 * cache), facts a collector hands over give the same findings as facts
 * decoded from the raw output, replacing a key drops what was decoded
 * from it, a repeated node key keeps each entry's own facts, the
 * Kubernetes node index, and the VpcConfig walk.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks-t.h"
#include "../../src/checks/node.h"
#include "../../src/core/facts/facts-int.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/nccl-facts.h"
#include "probe-t.h"
#include "t.h"

#define I1 "i-0000000000000000a"
#define I2 "i-0000000000000000b"
#define I3 "i-0000000000000000c"

/* An EKS cluster of three Running nodes, all three known to Kubernetes. */
#define EKS_SIDE                                                                               \
	"'meta':{'region':'us-west-2'},"                                                       \
	"'cluster':{'ClusterName':'c','ClusterArn':'arn:aws:sagemaker:us-west-2:1:cluster/abcdefabcdef'," \
	"'Orchestrator':{'Eks':{'ClusterArn':'arn:aws:eks:us-west-2:1:cluster/ml-eks'}}},"    \
	"'nodes':[{'InstanceId':'" I1 "','InstanceGroupName':'gpu','InstanceStatus':{'Status':'Running'}}," \
	"{'InstanceId':'" I2 "','InstanceGroupName':'gpu','InstanceStatus':{'Status':'Running'}}," \
	"{'InstanceId':'" I3 "','InstanceGroupName':'sys','InstanceStatus':{'Status':'Running'}}]," \
	"'kube':{'kubectl':{'server':'https://x','context':'ctx','verified_by':'endpoint'},"   \
	"'namespaces':['aws-hyperpod'],'nodes':["                                              \
	"{'name':'hyperpod-" I1 "','labels':{'sagemaker.amazonaws.com/node-health-status':'Schedulable'}," \
	"'ready':{'status':'True'}},"                                                          \
	"{'name':'ip-10-1-2-3','provider_id':'aws:///us-west-2a/" I2 "','ready':{'status':'False'," \
	"'reason':'KubeletNotReady','message':'cni plugin not initialized'}},"                 \
	"{'name':'other','ready':{'status':'True'}}]}"

/* A snapshot of the EKS cluster whose first two nodes sent out (the third: unreachable). */
static void eks_probed(struct ck *c, const char *out, int with_stdout)
{
	cJSON *probes, *e;
	const char *ids[] = { I1, I2 };
	size_t i;

	ck_load(c, "{" EKS_SIDE "}");
	probes = cJSON_AddObjectToObject(c->snap.root, "probes");
	for (i = 0; i < 2; i++) {
		e = cJSON_AddObjectToObject(probes, ids[i]);
		cJSON_AddStringToObject(e, "state", "probed");
		if (with_stdout)
			cJSON_AddStringToObject(e, "stdout", out);
		cJSON_AddStringToObject(e, "stderr", "");
		cJSON_AddNumberToObject(e, "exit_code", 0);
		cJSON_AddNumberToObject(e, "duration_ms", 2100);
	}
	e = cJSON_AddObjectToObject(probes, I3);
	cJSON_AddStringToObject(e, "state", "unreachable");
	cJSON_AddStringToObject(e, "reason", "TargetNotConnected");
}

/* Every check, keeping what the cache holds (ck_run_all starts afresh). */
static void run_cached(struct ck *c)
{
	hp_findings_release(&c->f);
	hp_checks_run(&c->snap, &c->f);
}

/* The findings as one comparable text: check, tag, priority, section, node, message, evidence. */
static char *findings_text(const struct hp_findings *f)
{
	struct hp_buf b = HP_BUF_INIT((size_t)16 << 20);
	size_t i;

	for (i = 0; i < f->n; i++) {
		const cJSON *e;

		hp_buf_printf(&b, "%s %d %d %s %s %s\n", f->v[i].check->id, f->v[i].tag, f->v[i].prio,
			      f->v[i].section, f->v[i].node ? f->v[i].node : "-", f->v[i].message);
		cJSON_ArrayForEach(e, f->v[i].evidence)
			hp_buf_printf(&b, "  %s\n", e->valuestring);
	}
	return hp_buf_detach(&b, NULL);
}

/* n probed nodes with the same output (ids i-00000000000000001…). */
static void many_probed(struct ck *c, const char *out, size_t n)
{
	cJSON *probes, *e;
	char id[32];
	size_t i;

	ck_load(c, "{" EKS_SIDE "}");
	probes = cJSON_AddObjectToObject(c->snap.root, "probes");
	for (i = 1; i <= n; i++) {
		snprintf(id, sizeof(id), "i-%017zx", i);
		e = cJSON_AddObjectToObject(probes, id);
		cJSON_AddStringToObject(e, "state", "probed");
		cJSON_AddStringToObject(e, "stdout", out);
		cJSON_AddStringToObject(e, "stderr", "");
		cJSON_AddNumberToObject(e, "exit_code", 0);
		cJSON_AddNumberToObject(e, "duration_ms", 2100);
	}
}

/*
 * The node pass holds every on-node check's results until the last node:
 * what it holds per result must not grow with the nodes (a row each would
 * be 30 checks x 20,000 nodes at once). 150 and 600 alike nodes: the same
 * peak, and the same folded findings but for the count.
 */
static void t_node_pass_rows_bounded(void)
{
	char *out = pt_file("probe-debian-vm.txt");
	size_t peak150, peak600;
	struct ck c;

	many_probed(&c, out, 150);
	ck_run_all(&c);
	peak150 = hp_node_rows_peak();
	T_ASSERT(ck_count_msg(&c, HP_TAG_INFO, "on 150 nodes") >= 1);
	ck_free(&c);
	many_probed(&c, out, 600);
	ck_run_all(&c);
	peak600 = hp_node_rows_peak();
	T_ASSERT(ck_count_msg(&c, HP_TAG_INFO, "on 600 nodes") >= 1);
	ck_free(&c);
	if (peak600 != peak150)
		T_FAILF("the node pass held %zu result rows for 600 nodes, %zu for 150", peak600,
			peak150);
	T_ASSERT(peak150 < 150);
	free(out);
}

static void t_each_decoder_runs_once(void)
{
	char *out = pt_file("probe-debian-vm.txt"), *first, *second;
	struct hp_facts_counts n0, n, all0, all;
	struct ck c;

	eks_probed(&c, out, 1);
	hp_facts_counts(&c.snap, &n0);
	T_EQ(n0.probe, 0);
	hp_facts_counts_all(&all0);
	ck_run_all(&c);
	/*
	 * 29 node checks and 10 Kubernetes checks read them: two decodes, one
	 * index, in the cache and in the whole process (no check decodes itself).
	 */
	hp_facts_counts(&c.snap, &n);
	T_EQ(n.probe - n0.probe, 2);
	T_EQ(n.kube - n0.kube, 1);
	T_EQ(n.slurm, 0);
	hp_facts_counts_all(&all);
	T_EQ(all.probe - all0.probe, 2);
	T_EQ(all.kube - all0.kube, 1);
	T_EQ(all.slurm - all0.slurm, 0);
	/*
	 * The node pass: each probed node's facts unpacked once for all 30 on-node
	 * checks; node.version-drift, which compares the nodes of a group, reads
	 * them once more (29 walks each would unpack them 58 times).
	 */
	T_EQ(all.unpacks - all0.unpacks, 4);
	T_ASSERT(ck_count_msg(&c, HP_TAG_INFO, "On-node probe output received from node " I1) == 1);
	T_ASSERT(ck_count_msg(&c, HP_TAG_FAIL, "NotReady") == 1);
	first = findings_text(&c.f);
	/* A second run reads the cache: nothing decoded again, the same findings. */
	run_cached(&c);
	hp_facts_counts(&c.snap, &n);
	T_EQ(n.probe - n0.probe, 2);
	T_EQ(n.kube - n0.kube, 1);
	second = findings_text(&c.f);
	T_STREQ(second, first);
	hp_facts_counts_all(&all);
	T_EQ(all.probe - all0.probe, 2);
	T_EQ(all.kube - all0.kube, 1);
	free(first);
	free(second);
	ck_free(&c);
	free(out);
}

static void t_slurm_decoded_once(void)
{
	struct hp_facts_counts n, all0, all;
	struct ck c;

	hp_facts_counts_all(&all0);
	ck_load(&c, "{'cluster':{'ClusterName':'s','ClusterArn':'arn:aws:sagemaker:us-west-2:1:"
		    "cluster/abcdefabcdef','Orchestrator':{'Slurm':{}},'InstanceGroups':["
		    "{'InstanceGroupName':'ctl','SlurmConfig':{'NodeType':'Controller'}}]},"
		    "'nodes':[{'InstanceId':'" I1 "','InstanceGroupName':'ctl',"
		    "'PrivateDnsHostname':'ip-10-0-0-1.ec2.internal','InstanceStatus':{'Status':'Running'}}],"
		    "'slurm':{'controller':'" I1 "','group':'ctl','how':'SlurmConfig','probe':{"
		    "'state':'probed','stdout':'@@HP@@ BEGIN ping\\nSlurmctld(primary) at ip-10-0-0-1 is UP\\n"
		    "@@HP@@ END ping 0\\n@@HP@@ BEGIN sinfo\\nip-10-0-0-1|idle|none\\n@@HP@@ END sinfo 0\\n"
		    "@@HP@@ DONE\\n'}}}");
	/* Loaded and prepared; the checks read what was prepared. */
	run_cached(&c);
	hp_facts_counts(&c.snap, &n);
	/* Five Slurm checks read the controller probe; it was decoded once. */
	T_EQ(n.slurm, 1);
	hp_facts_counts_all(&all);
	T_EQ(all.slurm - all0.slurm, 1);
	ck_one(&c, HP_TAG_PASS, "slurmctld responding");
	ck_one(&c, HP_TAG_PASS, "All 1 Slurm nodes are up");
	ck_free(&c);
}

static const cJSON *entry_of(const struct ck *c, const char *id)
{
	return cJSON_GetObjectItemCaseSensitive(hp_json_get(c->snap.root, "probes"), id);
}

/* node.hostname of a node's facts (a copy in a static buffer). */
static const char *host_of(const struct ck *c, const char *id)
{
	static char out[64];
	cJSON *f = hp_facts_node(&c->snap, entry_of(c, id));

	hp_strlcpy(out, hp_json_str(f, "node.hostname") ? hp_json_str(f, "node.hostname") : "(none)",
		   sizeof(out));
	cJSON_Delete(f);
	return out;
}

/* Facts handed over by a collector read exactly like facts decoded from the text. */
static void t_collector_set_facts_read_the_same(void)
{
	char *out = pt_file("probe-debian-vm.txt"), *decoded, *handed;
	struct hp_facts_counts n;
	struct ck a, b;

	eks_probed(&a, out, 1);
	ck_run_all(&a);
	decoded = findings_text(&a.f);

	eks_probed(&b, out, 0);
	hp_facts_set_node(&b.snap, I1, hp_probe_parse(out, strlen(out)));
	hp_facts_set_node(&b.snap, I2, hp_probe_parse(out, strlen(out)));
	ck_run_all(&b);
	handed = findings_text(&b.f);
	T_STREQ(handed, decoded);
	hp_facts_counts(&b.snap, &n);
	T_EQ(n.probe, 0);
	/* They survive a later key (what a collector sets is not derived from the document). */
	hp_snapshot_set(&b.snap, "note", cJSON_CreateString("x"));
	T_STREQ(host_of(&b, I1), "vm");
	hp_facts_counts(&b.snap, &n);
	T_EQ(n.probe, 0);
	free(decoded);
	free(handed);
	ck_free(&a);
	ck_free(&b);
	free(out);
}


static void t_replaced_key_is_decoded_again(void)
{
	struct hp_facts_counts n;
	struct ck c;
	cJSON *probes, *f;

	ck_load(&c, "{'probes':{'" I1 "':{'state':'probed','stdout':'@@HP@@ BEGIN node\\n"
		    "hostname=first\\n@@HP@@ END node 0\\n@@HP@@ DONE\\n'}}}");
	T_STREQ(host_of(&c, I1), "first");
	T_STREQ(host_of(&c, I1), "first");
	hp_facts_counts(&c.snap, &n);
	T_EQ(n.probe, 1);
	probes = cJSON_Parse("{\"" I1 "\":{\"state\":\"probed\",\"stdout\":\"@@HP@@ BEGIN node\\n"
			     "hostname=second\\n@@HP@@ END node 0\\n\"}}");
	hp_snapshot_set(&c.snap, "probes", probes);
	hp_facts_prepare(&c.snap);
	T_STREQ(host_of(&c, I1), "second");
	f = hp_facts_node(&c.snap, entry_of(&c, I1));
	T_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(f, "truncated")));
	cJSON_Delete(f);
	hp_facts_counts(&c.snap, &n);
	T_EQ(n.probe, 2);
	/* An entry without output decodes as empty output: no blocks, truncated. */
	cJSON_DeleteItemFromObject(cJSON_GetObjectItem(probes, I1), "stdout");
	hp_facts_forget(&c.snap);
	f = hp_facts_node(&c.snap, entry_of(&c, I1));
	T_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(f, "blocks")), 0);
	cJSON_Delete(f);
	T_ASSERT(hp_facts_node(&c.snap, NULL) == NULL);
	ck_free(&c);
}

/* A document that repeats a node key: each entry keeps its own facts. */
static void t_repeated_key_keeps_each_entry(void)
{
	struct hp_facts_counts n;
	struct ck c;
	const cJSON *p;
	cJSON *a, *b;

	ck_load(&c, "{'probes':{'" I1 "':{'state':'probed','stdout':'@@HP@@ BEGIN node\\nhostname=a\\n"
		    "@@HP@@ END node 0\\n'},'" I1 "':{'state':'probed','stdout':'@@HP@@ BEGIN node\\n"
		    "hostname=b\\n@@HP@@ END node 0\\n'}}}");
	p = hp_json_get(c.snap.root, "probes");
	a = hp_facts_node(&c.snap, p->child);
	b = hp_facts_node(&c.snap, p->child->next);
	T_STREQ(hp_json_str(a, "node.hostname"), "a");
	T_STREQ(hp_json_str(b, "node.hostname"), "b");
	cJSON_Delete(a);
	cJSON_Delete(b);
	/* Cached: the same facts again, nothing decoded anew. */
	a = hp_facts_node(&c.snap, p->child);
	T_STREQ(hp_json_str(a, "node.hostname"), "a");
	cJSON_Delete(a);
	hp_facts_counts(&c.snap, &n);
	T_EQ(n.probe, 2);
	ck_free(&c);
}

/* Many nodes: the table grows and every node finds its own facts. */
static void t_many_nodes(void)
{
	struct hp_facts_counts n;
	struct ck c;
	cJSON *probes;
	const cJSON *e;
	int i;

	ck_load(&c, "{}");
	probes = cJSON_AddObjectToObject(c.snap.root, "probes");
	for (i = 0; i < 3000; i++) {
		char id[32], out[128];
		cJSON *x;

		snprintf(id, sizeof(id), "i-%017d", i);
		snprintf(out, sizeof(out), "@@HP@@ BEGIN node\nhostname=h%d\n@@HP@@ END node 0\n", i);
		x = cJSON_AddObjectToObject(probes, id);
		cJSON_AddStringToObject(x, "state", "probed");
		cJSON_AddStringToObject(x, "stdout", out);
	}
	hp_facts_prepare(&c.snap);
	for (i = 0; i < 2; i++) {
		int k = 0;

		cJSON_ArrayForEach(e, probes) {
			char want[32];
			cJSON *f = hp_facts_node(&c.snap, e);

			snprintf(want, sizeof(want), "h%d", k++);
			T_STREQ(hp_json_str(f, "node.hostname"), want);
			cJSON_Delete(f);
		}
	}
	hp_facts_counts(&c.snap, &n);
	T_EQ(n.probe, 3000);
	ck_free(&c);
}

static void t_kube_index(void)
{
	const struct hp_kube_index *x;
	struct ck c;

	ck_load(&c, "{" EKS_SIDE "}");
	x = hp_facts_kube(&c.snap);
	T_ASSERT(x == hp_facts_kube(&c.snap));
	T_EQ(hp_kube_index_count(x), 3);
	/* In kube.nodes order, with the instance id from the name, providerID or nothing. */
	T_STREQ(hp_kube_index_at(x, 0)->iid, I1);
	T_STREQ(hp_kube_index_at(x, 1)->iid, I2);
	T_STREQ(hp_kube_index_at(x, 2)->iid, "");
	T_STREQ(hp_kube_index_at(x, 1)->name, "ip-10-1-2-3");
	T_ASSERT(hp_kube_index_at(x, 3) == NULL);
	T_STREQ(hp_kube_index_iid(x, "ip-10-1-2-3"), I2);
	T_ASSERT(hp_kube_index_iid(x, "other") == NULL);
	T_ASSERT(hp_kube_index_iid(x, "nope") == NULL);
	T_ASSERT(hp_kube_index_iid(x, NULL) == NULL);
	T_STREQ(hp_json_str(hp_kube_index_cluster_node(x, I3), "InstanceGroupName"), "sys");
	T_ASSERT(hp_kube_index_cluster_node(x, "i-0000000000000000f") == NULL);
	ck_free(&c);

	/* No Kubernetes view at all: an empty index, never NULL. */
	ck_load(&c, "{}");
	T_EQ(hp_kube_index_count(hp_facts_kube(&c.snap)), 0);
	ck_free(&c);
}

/* The first string of an array, or NULL. */
static const char *first(const cJSON *arr)
{
	const cJSON *v = cJSON_GetArrayItem(arr, 0);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The names of the configs the walk visits, "cluster" or the group's name, joined by ",". */
static void walk_names(const cJSON *cluster, char *out, size_t n)
{
	struct hp_vpc_walk w;
	const cJSON *vpc;

	out[0] = '\0';
	for (vpc = hp_vpc_first(&w, cluster); vpc; vpc = hp_vpc_next(&w)) {
		size_t len = strlen(out);

		snprintf(out + len, n - len, "%s%s:%s", len ? "," : "",
			 w.group ? hp_json_str(w.group, "InstanceGroupName") : "cluster",
			 first(cJSON_GetObjectItem(vpc, "Subnets")) ? "" : "-");
	}
}

static void t_vpc_walk(void)
{
	cJSON *cluster = cJSON_Parse(
		"{\"VpcConfig\":{\"SecurityGroupIds\":[\"sg-c\"],\"Subnets\":[\"subnet-c\"]},"
		"\"InstanceGroups\":[{\"InstanceGroupName\":\"a\"},"
		"{\"InstanceGroupName\":\"b\",\"OverrideVpcConfig\":{\"SecurityGroupIds\":[\"sg-b\"],"
		"\"Subnets\":[\"subnet-b\"]}},"
		"{\"InstanceGroupName\":\"c\",\"OverrideVpcConfig\":\"not an object\"},"
		"{\"InstanceGroupName\":\"d\",\"OverrideVpcConfig\":{\"SecurityGroupIds\":[\"sg-d\"],"
		"\"Subnets\":[]}}]}");
	cJSON *groups = cJSON_GetObjectItem(cluster, "InstanceGroups");
	const cJSON *a = cJSON_GetArrayItem(groups, 0), *b = cJSON_GetArrayItem(groups, 1);
	const cJSON *d = cJSON_GetArrayItem(groups, 3);
	struct hp_vpc_walk w;
	char names[256];

	T_ASSERT(cluster);
	walk_names(cluster, names, sizeof(names));
	T_STREQ(names, "cluster:,b:,d:-");
	/* After the end the walk stays ended. */
	T_ASSERT(hp_vpc_first(&w, cluster) != NULL);
	while (hp_vpc_next(&w))
		;
	T_ASSERT(hp_vpc_next(&w) == NULL);
	/* The ids that apply to a group: its override's when it lists any, else the cluster's. */
	T_STREQ(first(hp_vpc_ids(cluster, b, "Subnets")), "subnet-b");
	T_STREQ(first(hp_vpc_ids(cluster, a, "Subnets")), "subnet-c");
	T_STREQ(first(hp_vpc_ids(cluster, d, "Subnets")), "subnet-c");
	T_STREQ(first(hp_vpc_ids(cluster, d, "SecurityGroupIds")), "sg-d");
	T_STREQ(first(hp_vpc_ids(cluster, NULL, "SecurityGroupIds")), "sg-c");

	/* Without a cluster VpcConfig the walk starts at the first override. */
	cJSON_DeleteItemFromObject(cluster, "VpcConfig");
	walk_names(cluster, names, sizeof(names));
	T_STREQ(names, "b:,d:-");
	T_ASSERT(hp_vpc_ids(cluster, a, "Subnets") == NULL);
	cJSON_Delete(cluster);
	walk_names(NULL, names, sizeof(names));
	T_STREQ(names, "");
}


/* Packed values read back equal, bit for bit, whatever their shape. */
static void t_pack_round_trip(void)
{
	static const char *const docs[] = {
		"{}", "[]", "null", "true", "false", "0", "-1", "239", "240", "245", "246", "-0.5",
		"\"\"", "\"caf\\u00e9 \\u4e2d\"",
		"{\"a\":1,\"a\":2,\"b\":[1,[2,[3,{}]]],\"c\":{\"d\":null,\"e\":\"x\"}}",
		"[9007199254740992,9007199254740993,-9007199254740992,1e300,-1e-300,3.25,123456789012]",
		"{\"throttle\":511265503807956000,\"small\":[0,1,2,3],\"neg\":-123456}",
	};
	struct hp_pack *p = hp_pack_new();
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(docs); i++) {
		cJSON *v = cJSON_Parse(docs[i]), *back;
		char *a, *b;

		T_ASSERT(v);
		back = hp_pack_get(p, hp_pack_put(p, v));
		T_ASSERT(back);
		/* (cJSON_Compare cannot tell objects with a repeated key apart: the text can.) */
		T_ASSERT(cJSON_Compare(v, back, 1) || strstr(docs[i], "\"a\":1,\"a\":2"));
		a = cJSON_PrintUnformatted(v);
		b = cJSON_PrintUnformatted(back);
		T_STREQ(b, a);
		free(a);
		free(b);
		cJSON_Delete(back);
		cJSON_Delete(v);
	}
	{
		/* Doubles keep every bit (JSON text with 15 digits lost the low bits of this one). */
		double odd[] = { (double)0x0718614454626422ULL, -0.0, 0.1, 1.0 / 3.0, 1e-310 };
		cJSON *arr = cJSON_CreateDoubleArray(odd, (int)HP_ARRAY_LEN(odd)), *back, *x;
		size_t k = 0;

		back = hp_pack_get(p, hp_pack_put(p, arr));
		cJSON_ArrayForEach(x, back) {
			T_ASSERT(!memcmp(&x->valuedouble, &odd[k], sizeof(double)));
			k++;
		}
		T_EQ(k, HP_ARRAY_LEN(odd));
		cJSON_Delete(back);
		cJSON_Delete(arr);
	}
	T_ASSERT(hp_pack_get(p, HP_PACK_NONE) == NULL);
	T_EQ(hp_pack_put(p, NULL), HP_PACK_NONE);
	hp_pack_free(p);
}

/* What is put twice is kept once: an equal value (or part of one) costs nothing more. */
static void t_pack_shares_equal_values(void)
{
	char *out = pt_file("probe-debian-vm.txt");
	struct hp_pack *p = hp_pack_new();
	cJSON *a = hp_probe_parse(out, strlen(out)), *b = hp_probe_parse(out, strlen(out));
	uint32_t ra, rb;
	size_t values, bytes;
	cJSON *back;

	ra = hp_pack_put(p, a);
	values = hp_pack_count(p);
	bytes = hp_pack_bytes(p);
	rb = hp_pack_put(p, b);
	T_EQ(rb, ra);
	T_EQ(hp_pack_count(p), values);
	T_EQ(hp_pack_bytes(p), bytes);
	/* One member changed: a new value for each object above it (node, the root), the rest shared. */
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(b, "node"), "hostname", cJSON_CreateString("other"));
	rb = hp_pack_put(p, b);
	T_ASSERT(rb != ra);
	T_EQ(hp_pack_count(p), values + 2);
	back = hp_pack_get(p, rb);
	T_STREQ(hp_json_str(back, "node.hostname"), "other");
	T_ASSERT(cJSON_Compare(back, b, 1));
	cJSON_Delete(back);
	back = hp_pack_get(p, ra);
	T_ASSERT(cJSON_Compare(back, a, 1));
	cJSON_Delete(back);
	cJSON_Delete(a);
	cJSON_Delete(b);
	hp_pack_free(p);
	free(out);
}

/* A probes entry of a sweep or a file: the store's view of it. */
static cJSON *store_entry(const char *state, const char *stdout_text, const char *stderr_text)
{
	cJSON *e = cJSON_CreateObject();

	cJSON_AddStringToObject(e, "state", state);
	cJSON_AddStringToObject(e, "reason", "");
	cJSON_AddNumberToObject(e, "exit_code", 0);
	if (stdout_text)
		cJSON_AddStringToObject(e, "stdout", stdout_text);
	cJSON_AddStringToObject(e, "stderr", stderr_text ? stderr_text : "");
	cJSON_AddNumberToObject(e, "duration_ms", 2100);
	return e;
}

/* The store: entries without raw output, their facts, order, lookup, and the document's precedence. */
static void t_store_entries(void)
{
	char *out = pt_file("probe-debian-vm.txt"), *err = xmalloc(5001);
	static const char *const order[] = { I3, "i-unknown", I1, I3 };
	struct hp_snapshot s;
	struct hp_probe_iter it;
	const cJSON *e;
	cJSON *ent, *f;
	size_t n = 0;

	memset(err, 'x', 5000);
	err[5000] = '\0';
	hp_snapshot_init(&s);
	T_EQ(hp_probes_count(&s, "probes"), 0);
	T_ASSERT(hp_probes_first(&s, "probes", &it) == NULL);
	T_ASSERT(!hp_probes_stored(&s, "probes"));
	hp_probes_reset(&s, "probes");
	T_ASSERT(hp_probes_stored(&s, "probes"));
	ent = store_entry("probed", out, err);
	hp_probes_add(&s, "probes", I1, ent, hp_probe_parse(out, strlen(out)));
	cJSON_Delete(ent);
	ent = store_entry("unreachable", NULL, NULL);
	hp_probes_add(&s, "probes", I2, ent, NULL);
	cJSON_Delete(ent);
	ent = store_entry("probed", "", "sh: 1: base64: not found");
	hp_probes_add(&s, "probes", I3, ent, hp_probe_parse("", 0));
	cJSON_Delete(ent);
	T_EQ(hp_probes_count(&s, "probes"), 3);
	/* Nothing went to the document. */
	T_ASSERT(hp_snapshot_get(&s, "probes") == NULL);
	for (e = hp_probes_first(&s, "probes", &it); e; e = hp_probes_next(&it)) {
		static const char *const ids[] = { I1, I2, I3 };
		const cJSON *se = cJSON_GetObjectItem(e, "stderr");

		T_STREQ(e->string, ids[n]);
		T_ASSERT(!cJSON_GetObjectItem(e, "stdout"));
		T_ASSERT(cJSON_IsString(se));
		T_ASSERT(strlen(se->valuestring) < HP_FACTS_STDERR_SIZE);
		f = hp_probes_facts(&it);
		if (n == 0) {
			/* 5,000 bytes of stderr: the 200 characters a finding quotes, and "…". */
			T_EQ(strlen(se->valuestring), HP_FACTS_STDERR_CHARS + 3);
			T_ASSERT(!strncmp(se->valuestring, err, HP_FACTS_STDERR_CHARS));
			T_STREQ(se->valuestring + HP_FACTS_STDERR_CHARS, "\xE2\x80\xA6");
			T_STREQ(hp_json_str(f, "node.hostname"), "vm");
		}
		if (n == 1)
			T_ASSERT(f == NULL);
		if (n == 2)
			T_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(f, "blocks")), 0);
		cJSON_Delete(f);
		n++;
	}
	T_EQ(n, 3);
	/* The sweep's order: named ids first (each once; unknown ones skipped), the rest after. */
	hp_probes_order(&s, "probes", order, HP_ARRAY_LEN(order));
	e = hp_probes_first(&s, "probes", &it);
	T_STREQ(e->string, I3);
	e = hp_probes_next(&it);
	T_STREQ(e->string, I1);
	/* hp_facts_node on an entry the iterator handed out reads the store too. */
	f = hp_facts_node(&s, e);
	T_STREQ(hp_json_str(f, "node.hostname"), "vm");
	cJSON_Delete(f);
	e = hp_probes_next(&it);
	T_STREQ(e->string, I2);
	T_ASSERT(hp_probes_next(&it) == NULL);
	/* Lookup by id, and facts a collector set win there too. */
	e = hp_probes_find(&s, "probes", I1, &it);
	T_ASSERT(e && !strcmp(e->string, I1));
	hp_facts_set_node(&s, I1, cJSON_Parse("{\"node\":{\"hostname\":\"set\"}}"));
	f = hp_probes_facts(&it);
	T_STREQ(hp_json_str(f, "node.hostname"), "set");
	cJSON_Delete(f);
	hp_probes_end(&it);
	T_ASSERT(hp_probes_find(&s, "probes", "i-none", &it) == NULL);
	/* A later key keeps the store (it is not derived from the document). */
	hp_snapshot_set(&s, "note", cJSON_CreateString("x"));
	T_EQ(hp_probes_count(&s, "probes"), 3);
	/* A document member of the key wins over the store; reset drops it again. */
	hp_snapshot_set(&s, "probes", cJSON_Parse("{\"i-doc\":{\"state\":\"probed\",\"stdout\":\"\"}}"));
	T_EQ(hp_probes_count(&s, "probes"), 1);
	e = hp_probes_first(&s, "probes", &it);
	T_STREQ(e->string, "i-doc");
	T_ASSERT(hp_probes_next(&it) == NULL);
	hp_probes_reset(&s, "probes");
	T_ASSERT(hp_snapshot_get(&s, "probes") == NULL);
	T_EQ(hp_probes_count(&s, "probes"), 0);
	hp_snapshot_release(&s);
	free(out);
	free(err);
}

/* The checks read the store and the document alike: the same findings, word for word. */
static void t_store_and_document_judge_alike(void)
{
	char *out = pt_file("probe-debian-vm.txt"), *doc, *stored;
	struct hp_facts_counts n;
	struct hp_probe_iter it;
	const cJSON *e;
	struct ck a, b;

	eks_probed(&a, out, 1);
	ck_run_all(&a);
	doc = findings_text(&a.f);

	eks_probed(&b, out, 1);
	{
		cJSON *probes = cJSON_DetachItemFromObject(b.snap.root, "probes");

		hp_probes_reset(&b.snap, "probes");
		cJSON_ArrayForEach(e, probes) {
			const char *o = hp_json_str(e, "stdout");

			hp_probes_add(&b.snap, "probes", e->string, e,
				      o ? hp_probe_parse(o, strlen(o)) : NULL);
		}
		cJSON_Delete(probes);
	}
	T_EQ(hp_probes_count(&b.snap, "probes"), 3);
	for (e = hp_probes_first(&b.snap, "probes", &it); e; e = hp_probes_next(&it))
		T_ASSERT(!cJSON_GetObjectItem(e, "stdout"));
	ck_run_all(&b);
	stored = findings_text(&b.f);
	T_STREQ(stored, doc);
	/* The checks decoded nothing: the facts came with the entries. */
	hp_facts_counts(&b.snap, &n);
	T_EQ(n.probe, 0);
	T_ASSERT(n.bytes > 0);
	free(doc);
	free(stored);
	ck_free(&a);
	ck_free(&b);
	free(out);
}

/*
 * The NCCL probe's entries ("nccl_probes"): a document entry's facts are
 * its own stdout decoded (once), never the node probe's facts a collector
 * set for the same id; from the store they are the facts decoded when the
 * entry came (a sweep or a replayed file), read through the iterator and
 * hp_facts_nccl_node alike.
 */
static void t_nccl_entries(void)
{
	char *out = t_data("nccl", "probe-p5-fixture-broken.txt", NULL);
	cJSON *want = hp_nccl_probe_parse(out, strlen(out)), *f, *g, *ent;
	char *want_text = cJSON_PrintUnformatted(want), *text;
	struct hp_facts_counts c;
	struct hp_snapshot s;
	struct hp_probe_iter it;
	const cJSON *e;

	hp_snapshot_init(&s);
	ent = store_entry("probed", out, "");
	hp_snapshot_set(&s, "nccl_probes", cJSON_CreateObject());
	cJSON_AddItemToObject((cJSON *)hp_snapshot_get(&s, "nccl_probes"), I1, ent);
	hp_facts_set_node(&s, I1, cJSON_Parse("{\"node\":{\"hostname\":\"set\"}}"));
	hp_facts_prepare(&s);
	e = cJSON_GetObjectItem(hp_snapshot_get(&s, "nccl_probes"), I1);
	f = hp_facts_nccl_node(&s, e);
	g = hp_facts_nccl_node(&s, e);
	text = cJSON_PrintUnformatted(f);
	T_STREQ(text, want_text);
	cJSON_free(text);
	T_ASSERT(cJSON_Compare(f, g, 1));
	hp_facts_counts(&s, &c);
	T_EQ(c.nccl, 1);
	cJSON_Delete(f);
	cJSON_Delete(g);
	/* The same entry in the store, as a replayed file puts it. */
	ent = cJSON_Duplicate(e, 1);
	free(ent->string);
	ent->string = xstrdup(I2);
	hp_probes_reset(&s, "nccl_probes");
	T_ASSERT(hp_snapshot_get(&s, "nccl_probes") == NULL);
	hp_probes_add_raw(&s, "nccl_probes", ent);
	cJSON_Delete(ent);
	hp_facts_counts(&s, &c);
	T_EQ(c.nccl, 2);
	e = hp_probes_first(&s, "nccl_probes", &it);
	T_STREQ(e->string, I2);
	T_ASSERT(!cJSON_GetObjectItem(e, "stdout"));
	f = hp_probes_facts(&it);
	g = hp_facts_nccl_node(&s, e);
	text = cJSON_PrintUnformatted(f);
	T_STREQ(text, want_text);
	cJSON_free(text);
	T_ASSERT(cJSON_Compare(f, g, 1));
	T_ASSERT(hp_probes_next(&it) == NULL);
	cJSON_Delete(f);
	cJSON_Delete(g);
	cJSON_Delete(want);
	cJSON_free(want_text);
	hp_snapshot_release(&s);
	free(out);
}

T_MAIN(T(t_each_decoder_runs_once), T(t_node_pass_rows_bounded), T(t_slurm_decoded_once),
       T(t_collector_set_facts_read_the_same), T(t_replaced_key_is_decoded_again),
       T(t_repeated_key_keeps_each_entry), T(t_many_nodes), T(t_kube_index), T(t_vpc_walk),
       T(t_pack_round_trip), T(t_pack_shares_equal_values), T(t_store_entries),
       T(t_store_and_document_judge_alike), T(t_nccl_entries))
