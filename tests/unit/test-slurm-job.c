/*
 * hpnode nccl --job on Slurm: the controller probe's job blocks decoded
 * from real scontrol output (one-line, array job in the default layout,
 * a job slurmctld forgot), hostlists expanded, the job's output files
 * scanned and dropped from the stored output by the collector, and the
 * checks that judge the job and its files (a GPU_ECC line pulls in the
 * node's own ECC view).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks-t.h"
#include "hp/check.h"
#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/slurm.h"
#include "t.h"

/* The probe's job block holding data file name, then DONE. */
static cJSON *parse_job_file(const char *name, int rc)
{
	size_t len = 0;
	char *body = t_data("nccl", name, &len), *text;
	cJSON *facts;

	text = xmalloc(len + 128);
	snprintf(text, len + 128, "@@HP@@ BEGIN job\n%s@@HP@@ END job %d\n@@HP@@ DONE\n", body, rc);
	facts = hp_slurm_parse(text, strlen(text));
	free(text);
	free(body);
	return facts;
}

static void t_oneline_record(void)
{
	cJSON *f = parse_job_file("scontrol-job-oneline.txt", 0);
	const cJSON *r = cJSON_GetArrayItem(hp_json_get(f, "job.records"), 0);

	T_ASSERT(hp_json_bool(hp_json_get(f, "job"), "found", 0));
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "job.records")), 1);
	T_STREQ(hp_json_str(r, "JobId"), "1");
	T_STREQ(hp_json_str(r, "JobState"), "COMPLETED");
	T_STREQ(hp_json_str(r, "NodeList"), "node01");
	T_STREQ(hp_json_str(r, "StdOut"), "/root/slurm-1.out");
	T_STREQ(hp_json_str(r, "StdErr"), "/root/slurm-1.out");
	T_STREQ(hp_json_str(r, "ExitCode"), "0:0");
	/* Keys beside: AllocNode:Sid= and CPUs/Task= are keys, never part of a value. */
	T_STREQ(hp_json_str(r, "BatchHost"), "node01");
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "job.nodes")), 1);
	T_STREQ(cJSON_GetArrayItem(hp_json_get(f, "job.nodes"), 0)->valuestring, "node01");
	cJSON_Delete(f);
}

static void t_array_job(void)
{
	cJSON *f = parse_job_file("scontrol-job-array.txt", 0);
	const cJSON *recs = hp_json_get(f, "job.records"), *nodes = hp_json_get(f, "job.nodes");

	T_EQ(cJSON_GetArraySize(recs), 3);
	T_STREQ(hp_json_str(cJSON_GetArrayItem(recs, 0), "ArrayJobId"), "1673301");
	T_STREQ(hp_json_str(cJSON_GetArrayItem(recs, 0), "ArrayTaskId"), "3");
	T_STREQ(hp_json_str(cJSON_GetArrayItem(recs, 2), "JobId"), "1673302");
	T_STREQ(hp_json_str(cJSON_GetArrayItem(recs, 1), "StdOut"),
		"/projects/trans_scratch/validations/workspace/creisle/temp/slurm-1673301_2.out");
	T_STREQ(hp_json_str(cJSON_GetArrayItem(recs, 1), "JobState"), "RUNNING");
	/* Every task's node once, in record order. */
	T_EQ(cJSON_GetArraySize(nodes), 3);
	T_STREQ(cJSON_GetArrayItem(nodes, 0)->valuestring, "n245");
	T_STREQ(cJSON_GetArrayItem(nodes, 2)->valuestring, "n137");
	cJSON_Delete(f);
}

static void t_unknown_job(void)
{
	cJSON *f = parse_job_file("scontrol-job-unknown.txt", 1);

	T_ASSERT(!hp_json_bool(hp_json_get(f, "job"), "found", 1));
	T_STREQ(hp_json_str(f, "job.error"), "unknown");
	T_EQ(hp_json_num(f, "job.exit", 0), 1);
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "job.nodes")), 0);
	cJSON_Delete(f);
}

static void t_value_with_blank_and_garbage(void)
{
	const char *text = "@@HP@@ BEGIN job\nJobId=5 JobState=PENDING Reason=launch failed requeued "
			   "held NodeList=(null) StdOut=/fsx/a b.out\nnot a record\n=x ==y JobId=\n"
			   "@@HP@@ END job 0\n";
	cJSON *f = hp_slurm_parse(text, strlen(text));
	const cJSON *r = cJSON_GetArrayItem(hp_json_get(f, "job.records"), 0);

	T_STREQ(hp_json_str(r, "Reason"), "launch failed requeued held");
	T_STREQ(hp_json_str(r, "StdOut"), "/fsx/a b.out");
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "job.nodes")), 0);
	cJSON_Delete(f);
}

static void expect_list(const char *list, const char *want, int want_bad)
{
	char **names = NULL;
	int bad = 0;
	size_t n = hp_slurm_hostlist(list, &names, 0, &bad), i;
	struct hp_buf got = HP_BUF_INIT(HP_MAX_LINE);

	for (i = 0; i < n; i++)
		hp_buf_printf(&got, "%s%s", i ? " " : "", names[i]);
	T_STREQ(got.buf, want);
	T_EQ(bad, want_bad);
	hp_buf_release(&got);
	hp_slurm_hostlist_free(names, n);
}

static void t_hostlist(void)
{
	expect_list("ip-10-1-0-[12-13,20]", "ip-10-1-0-12 ip-10-1-0-13 ip-10-1-0-20", 0);
	expect_list("node01", "node01", 0);
	expect_list("a[08-10],b7", "a08 a09 a10 b7", 0);
	expect_list("rack[1-2]-n[1-2]", "rack1-n1 rack1-n2 rack2-n1 rack2-n2", 0);
	expect_list("ip-10-3-0-12,ip-10-3-1-7", "ip-10-3-0-12 ip-10-3-1-7", 0);
	expect_list("(null)", "", 0);
	expect_list("None assigned", "", 0);
	expect_list("", "", 0);
	expect_list("n[3-1]", "", 1);
	expect_list("n[1-", "", 1);
	expect_list("n[a-b]", "", 1);
	expect_list("n1,n[2", "n1", 1);
	/* Larger than the cap: refused, never allocated. */
	expect_list("n[1-99999999999]", "", 1);
}

static void t_joblogs(void)
{
	const char *text = "@@HP@@ BEGIN joblog\npath /fsx/t.out\nstatus read\nlines 42\n"
			   "@@HP@@ END joblog 0\n@@HP@@ BEGIN joblog\npath /tmp/x-%j.out\nstatus pattern\n"
			   "@@HP@@ END joblog 0\n@@HP@@ BEGIN joblog\npath /fsx/cut\nstatus read\n";
	cJSON *f = hp_slurm_parse(text, strlen(text));
	const cJSON *l = hp_json_get(f, "joblogs");

	T_EQ(cJSON_GetArraySize(l), 3);
	T_STREQ(hp_json_str(cJSON_GetArrayItem(l, 0), "path"), "/fsx/t.out");
	T_EQ(hp_json_num(cJSON_GetArrayItem(l, 0), "lines", 0), 42);
	T_STREQ(hp_json_str(cJSON_GetArrayItem(l, 1), "status"), "pattern");
	T_ASSERT(!hp_json_bool(cJSON_GetArrayItem(l, 2), "ended", 1));
	cJSON_Delete(f);
}

static void t_command_job(void)
{
	struct hp_buf cmd = HP_BUF_INIT(HP_MAX_LINE);

	T_ASSERT(hp_slurm_job_id_ok("1234"));
	T_ASSERT(hp_slurm_job_id_ok("1673301_3"));
	T_ASSERT(!hp_slurm_job_id_ok("12_3_4"));
	T_ASSERT(!hp_slurm_job_id_ok("_3"));
	T_ASSERT(!hp_slurm_job_id_ok("3_"));
	T_ASSERT(!hp_slurm_job_id_ok("llama-pretrain"));
	T_ASSERT(!hp_slurm_job_id_ok("1;reboot"));
	T_EQ(hp_slurm_probe_command_job("1;reboot", &cmd), -1);
	T_EQ(cmd.len, 0);
	T_EQ(hp_slurm_probe_command_job("1234", &cmd), 0);
	T_CONTAINS(cmd.buf, "base64 -d | sh");
	hp_buf_release(&cmd);
}

/* A snapshot of a two-node Slurm job whose output file the probe read. */
static const char job_snap[] =
	"{'cluster':{'ClusterArn':'arn:aws:sagemaker:us-west-2:1:cluster/c1','ClusterName':'c',"
	"'Orchestrator':{'Slurm':{}},'InstanceGroups':[{'InstanceGroupName':'ctl','SlurmConfig':"
	"{'NodeType':'Controller'}},{'InstanceGroupName':'gpu','SlurmConfig':{'NodeType':'Compute'}}]},"
	"'nodes':[{'InstanceId':'i-0c','InstanceGroupName':'ctl','PrivateDnsHostname':'ip-10-0-0-5.ec2',"
	"'InstanceStatus':{'Status':'Running'}},{'InstanceId':'i-0a','InstanceGroupName':'gpu',"
	"'PrivateDnsHostname':'ip-10-0-1-12.ec2','InstanceStatus':{'Status':'Running'}},"
	"{'InstanceId':'i-0b','InstanceGroupName':'gpu','PrivateDnsHostname':'ip-10-0-1-13.ec2',"
	"'InstanceStatus':{'Status':'Running'}}],'nccl':{'options':{'job':'77'}},"
	"'slurm':{'controller':'i-0c','group':'ctl','how':'SlurmConfig','probe':{'state':'probed',"
	"'stdout':'@@HP@@ BEGIN job\\nJobId=77 JobName=train JobState=FAILED Reason=NonZeroExitCode "
	"ExitCode=1:0 NodeList=ip-10-0-1-[12-13] BatchHost=ip-10-0-1-12 StdOut=/fsx/t.out "
	"StdErr=/fsx/t.out\\n@@HP@@ END job 0\\n@@HP@@ BEGIN joblog\\npath /fsx/t.out\\nstatus read\\n"
	"ip-10-0-1-13:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI fi_getinfo() "
	"call failed: No data available\\nsecret training text\\n"
	"[E ProcessGroupNCCL.cpp:916] [Rank 1] NCCL watchdog thread terminated with exception: CUDA "
	"error: uncorrectable ECC error encountered\\n@@HP@@ END joblog 0\\n@@HP@@ DONE\\n'}}}";

static const struct hp_finding *find(const struct ck *c, const char *check, const char *text)
{
	size_t i;

	for (i = 0; i < c->f.n; i++)
		if (!strcmp(c->f.v[i].check->id, check) && strstr(c->f.v[i].message, text))
			return &c->f.v[i];
	return NULL;
}

static void t_collect_and_judge(void)
{
	struct ck c;
	const struct hp_finding *f;
	const char *out;

	ck_load(&c, job_snap);
	hp_nccl_collect_slurm_job(&c.snap, "77");
	out = hp_json_str(hp_snapshot_get(&c.snap, "slurm"), "probe.stdout");
	/* The file's lines are gone from the stored output; their count stays. */
	T_NOT_CONTAINS(out, "secret training text");
	T_NOT_CONTAINS(out, "fi_getinfo");
	T_CONTAINS(out, "status read\nlines 3\n@@HP@@ END joblog 0");
	T_EQ(hp_json_num(hp_snapshot_get(&c.snap, "nccl"), "slurm_job.log_scan.lines", 0), 3);
	ck_run(&c, "nccl.slurm-job");
	f = find(&c, "nccl.slurm-job", "Slurm job 77 (train) ended FAILED, exit code 1:0");
	T_ASSERT(f);
	T_EQ(f->tag, HP_TAG_FAIL);
	ck_run(&c, "nccl.slurm-logs");
	/* The line names its node: the finding is that node's. */
	f = find(&c, "nccl.slurm-logs", "EFA_INIT_FAIL in /fsx/t.out (ip-10-0-1-13) of Slurm job 77");
	T_ASSERT(f);
	T_STREQ(f->node, "i-0b");
	/* The ECC line names no node of the two: said, with what to run. */
	f = find(&c, "nccl.slurm-logs", "GPU_ECC in /fsx/t.out of Slurm job 77");
	T_ASSERT(f);
	T_EQ(f->prio, HP_P0);
	T_CONTAINS(f->message, "node.gpu-ecc");
	ck_free(&c);
}

static void t_job_unknown_and_bad_id(void)
{
	struct ck c;
	char *snap = xstrdup(job_snap), *p = strstr(snap, "JobId=77"), *end = strstr(snap, "\\n@@HP@@ END job 0");
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);

	hp_buf_putn(&b, snap, (size_t)(p - snap));
	hp_buf_puts(&b, "slurm_load_jobs error: Invalid job id specified");
	hp_buf_puts(&b, end);
	ck_load(&c, b.buf);
	hp_nccl_collect_slurm_job(&c.snap, "77");
	ck_run(&c, "nccl.slurm-job");
	T_ASSERT(find(&c, "nccl.slurm-job", "Slurm job 77 is not known to slurmctld"));
	ck_free(&c);

	ck_load(&c, job_snap);
	hp_nccl_collect_slurm_job(&c.snap, "llama");
	ck_run(&c, "nccl.slurm-job");
	T_ASSERT(find(&c, "nccl.slurm-job", "--job llama on a Slurm cluster: not a Slurm job id"));
	ck_free(&c);
	hp_buf_release(&b);
	free(snap);
}

T_MAIN(T(t_oneline_record), T(t_array_job), T(t_unknown_job), T(t_value_with_blank_and_garbage),
       T(t_hostlist), T(t_joblogs), T(t_command_job), T(t_collect_and_judge),
       T(t_job_unknown_and_bad_id))
