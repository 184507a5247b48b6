/*
 * The snapshot document: building it, saving and loading it (round trip and
 * every load error), and the getters checks use.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fake-sys.h"
#include "hp/json.h"
#include "hp/snapshot.h"
#include "checks-t.h"
#include "t.h"

static void t_init_has_version(void)
{
	struct hp_snapshot s;

	hp_snapshot_init(&s);
	T_ASSERT(cJSON_IsObject(s.root));
	T_EQ(hp_json_num(s.root, "version", -1), 1);
	T_ASSERT(hp_snapshot_get(&s, "cluster") == NULL);
	T_STREQ(hp_snap_orchestrator(&s), "Unknown");
	hp_snapshot_release(&s);
	T_ASSERT(s.root == NULL);
}

static void t_set_replaces(void)
{
	struct hp_snapshot s;

	hp_snapshot_init(&s);
	hp_snapshot_set(&s, "events_truncated", cJSON_CreateFalse());
	hp_snapshot_set(&s, "events_truncated", cJSON_CreateTrue());
	T_ASSERT(cJSON_IsTrue(hp_snapshot_get(&s, "events_truncated")));
	/* Replaced, not added twice. */
	T_EQ(cJSON_GetArraySize(s.root), 2);
	hp_snapshot_release(&s);
}

static void t_add_call(void)
{
	struct hp_snapshot s;
	const cJSON *calls, *c;

	hp_snapshot_init(&s);
	hp_snapshot_add_call(&s, "sagemaker", "ListClusterNodes", "denied",
			     "AccessDeniedException", "not authorized", 400);
	hp_snapshot_add_call(&s, "ec2", "DescribeSubnets", "network", NULL, NULL, 0);
	calls = hp_snapshot_get(&s, "calls");
	T_EQ(cJSON_GetArraySize(calls), 2);
	c = cJSON_GetArrayItem(calls, 0);
	T_STREQ(hp_json_str(c, "service"), "sagemaker");
	T_STREQ(hp_json_str(c, "action"), "ListClusterNodes");
	T_STREQ(hp_json_str(c, "class"), "denied");
	T_STREQ(hp_json_str(c, "code"), "AccessDeniedException");
	T_STREQ(hp_json_str(c, "message"), "not authorized");
	T_EQ(hp_json_num(c, "status", -1), 400);
	c = cJSON_GetArrayItem(calls, 1);
	T_STREQ(hp_json_str(c, "code"), "");
	T_STREQ(hp_json_str(c, "message"), "");
	hp_snapshot_release(&s);
}

static void t_round_trip(void)
{
	char path[] = "/tmp/hpnode-snap-XXXXXX";
	struct hp_error e = HP_ERROR_INIT;
	struct hp_sys sys = ck_disk_sys();
	struct hp_snapshot a, b;
	int fd = mkstemp(path);

	T_ASSERT(fd >= 0);
	close(fd);
	hp_snapshot_init(&a);
	hp_snapshot_set(&a, "cluster",
			cJSON_Parse("{\"ClusterName\":\"c1\",\"ClusterArn\":\"arn:aws:sagemaker:us-east-1:"
				    "111122223333:cluster/abcdefabcdef\",\"InstanceGroups\":[]}"));
	hp_snapshot_set(&a, "nodes_truncated", cJSON_CreateTrue());
	hp_snapshot_set(&a, "note", cJSON_CreateString("caf\xC3\xA9 \"quoted\"\n"));
	hp_snapshot_add_call(&a, "logs", "DescribeLogGroups", "throttled", "ThrottlingException",
			     "Rate exceeded", 400);
	T_EQ(hp_snapshot_save(&a, path, &e), 0);

	b.root = NULL;
	T_EQ(hp_snapshot_load(&b, &sys, path, &e), 0);
	T_ASSERT(cJSON_Compare(a.root, b.root, 1));
	T_STREQ(hp_snap_cluster_name(&b), "c1");
	T_STREQ(hp_snap_orchestrator(&b), "Slurm");
	unlink(path);
	hp_snapshot_release(&a);
	hp_snapshot_release(&b);
}

static void t_save_error(void)
{
	struct hp_error e = HP_ERROR_INIT;
	struct hp_snapshot s;

	hp_snapshot_init(&s);
	T_EQ(hp_snapshot_save(&s, "/nonexistent-hpnode-dir/snap.json", &e), -1);
	T_EQ(e.code, HP_ERR_FILE);
	T_CONTAINS(e.msg, "cannot write snapshot '/nonexistent-hpnode-dir/snap.json'");
	hp_snapshot_release(&s);
}

/* Each bad file: the error code and a piece of its message; s keeps its old root. */
static void t_load_errors(void)
{
	static const struct {
		const char *content;   /* NULL: the file does not exist */
		enum hp_err code;
		const char *msg;
	} cases[] = {
		{ "{\"version\": 1,", HP_ERR_PARSE, "is not valid JSON" },
		{ "", HP_ERR_PARSE, "is not valid JSON" },
		{ "[1, 2]", HP_ERR_PARSE, "is not a JSON object" },
		{ "{\"version\": 2}", HP_ERR_PARSE, "has version 2; this hpnode reads version 1" },
		{ "{\"cluster\": {}}", HP_ERR_PARSE, "has version none" },
		{ "{\"version\": \"1\"}", HP_ERR_PARSE, "has version not a number" },
		{ NULL, HP_ERR_FILE, "cannot read snapshot 'snap.json'" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake_sys f;
		struct hp_error e = HP_ERROR_INIT;
		struct hp_snapshot s;
		const cJSON *before;

		fake_sys_init(&f);
		if (cases[i].content)
			fake_file(&f, "snap.json", cases[i].content);
		hp_snapshot_init(&s);
		before = s.root;
		T_EQ(hp_snapshot_load(&s, &f.sys, "snap.json", &e), -1);
		T_EQ(e.code, cases[i].code);
		T_CONTAINS(e.msg, cases[i].msg);
		T_ASSERT(s.root == before);
		hp_snapshot_release(&s);
		fake_sys_release(&f);
	}
}

static int too_big(struct hp_sys *sys, const char *path, struct hp_buf *out)
{
	(void)sys;
	(void)path;
	(void)out;
	errno = EFBIG;
	return -1;
}

static void t_load_too_big(void)
{
	struct hp_error e = HP_ERROR_INIT;
	struct hp_sys sys = ck_disk_sys();
	struct hp_snapshot s = { NULL };

	sys.read_file = too_big;
	T_EQ(hp_snapshot_load(&s, &sys, "huge.json", &e), -1);
	T_EQ(e.code, HP_ERR_FILE);
	T_CONTAINS(e.msg, "larger than 256 MB");
	T_ASSERT(s.root == NULL);
}

static void t_load_data_file(void)
{
	struct ck c;

	ck_load_file(&c, "healthy-eks.json");
	T_STREQ(hp_snap_cluster_name(&c.snap), "ml-cluster");
	T_STREQ(hp_snap_orchestrator(&c.snap), "EKS");
	ck_free(&c);
}

static void t_getters(void)
{
	static const struct {
		const char *json;
		const char *name, *arn, *id, *orch;
	} cases[] = {
		{ "{'cluster':{'ClusterName':'a','ClusterArn':'arn:aws:sagemaker:us-west-2:123456789012:"
		  "cluster/abc123def456','Orchestrator':{'Eks':{'ClusterArn':'x'}}}}",
		  "a", "arn:aws:sagemaker:us-west-2:123456789012:cluster/abc123def456", "abc123def456",
		  "EKS" },
		/* No Orchestrator at all is Slurm (older Slurm clusters omit it). */
		{ "{'cluster':{'ClusterArn':'arn:aws:sagemaker:us-west-2:1:cluster/ABC123DEF456'},"
		  "'meta':{'cluster_arg':'from-flag'}}",
		  "from-flag", "arn:aws:sagemaker:us-west-2:1:cluster/ABC123DEF456", "", "Slurm" },
		{ "{'cluster':{'ClusterArn':'arn:aws:sagemaker:r:1:cluster/abc123def45',"
		  "'Orchestrator':{'Slurm':{}}}}",
		  "", "arn:aws:sagemaker:r:1:cluster/abc123def45", "", "Slurm" },
		{ "{'cluster':{'ClusterArn':'arn:aws:sagemaker:r:1:cluster/abc123def4567'}}", "",
		  "arn:aws:sagemaker:r:1:cluster/abc123def4567", "", "Slurm" },
		{ "{'cluster':{'ClusterArn':'abc123def456'}}", "", "abc123def456", "", "Slurm" },
		{ "{'meta':{'cluster_arg':'only-arg'}}", "only-arg", "", "", "Unknown" },
		{ "{'cluster':'not an object'}", "", "", "", "Unknown" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ck c;
		char id[64];

		ck_load(&c, cases[i].json);
		T_STREQ(hp_snap_cluster_name(&c.snap), cases[i].name);
		T_STREQ(hp_snap_cluster_arn(&c.snap), cases[i].arn);
		hp_snap_cluster_id(&c.snap, id);
		T_STREQ(id, cases[i].id);
		T_STREQ(hp_snap_orchestrator(&c.snap), cases[i].orch);
		ck_free(&c);
	}
}

T_MAIN(T(t_init_has_version), T(t_set_replaces), T(t_add_call), T(t_round_trip),
       T(t_save_error), T(t_load_errors), T(t_load_too_big), T(t_load_data_file), T(t_getters))
