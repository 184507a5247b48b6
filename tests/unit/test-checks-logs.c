/*
 * logs.group, logs.lifecycle and logs.health-agent: which log lines count
 * as failures, one finding per node, stream-name parsing, and when a PASS
 * is (and is not) earned.
 */
#include <stdio.h>
#include <string.h>

#include "checks-t.h"
#include "t.h"

static void t_group(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{'logs':{'group':'/aws/sagemaker/Clusters/c/abc123def456','group_found':false}}");
	ck_run(&c, "logs.group");
	T_EQ(c.f.n, 1);
	f = ck_one(&c, HP_TAG_WARN, "No CloudWatch log group /aws/sagemaker/Clusters/c/abc123def456 "
				    "\xE2\x80\x94 logging may not be configured, or the cluster is new");
	T_EQ(f->prio, HP_P2);
	T_STREQ(f->section, "L");
	ck_free(&c);

	ck_load(&c, "{'logs':{'group':'/aws/sagemaker/Clusters/c/abc123def456','group_found':true}}");
	ck_run(&c, "logs.group");
	T_EQ(c.f.n, 1);
	ck_one(&c, HP_TAG_PASS, "Log group exists: /aws/sagemaker/Clusters/c/abc123def456");
	ck_free(&c);

	/* Lookup failed (denied, throttled): no verdict here. */
	ck_load(&c, "{'logs':{'group':'/aws/sagemaker/Clusters/c/abc123def456'}}");
	ck_run(&c, "logs.group");
	T_EQ(c.f.n, 0);
	ck_free(&c);
	ck_load(&c, "{'cluster':{}}");
	ck_run(&c, "logs.group");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

/* Runs check id over one line in one well-named stream; returns the FAIL count. */
static size_t one_line(const char *id, const char *prefix, const char *line)
{
	char json[1024];
	struct ck c;
	size_t n;

	snprintf(json, sizeof(json),
		 "{'logs':{'group_found':true,'%s':[{'logStreamName':'%s/gpu/i-0aaaaaaaaaaaaaaa1',"
		 "'timestamp':1735732800000,'message':'%s'}]}}",
		 strcmp(id, "logs.lifecycle") ? "hma" : "lifecycle", prefix, line);
	ck_load(&c, json);
	ck_run(&c, id);
	n = ck_count(&c, HP_TAG_FAIL);
	ck_free(&c);
	return n;
}

static void t_lifecycle_line_judgement(void)
{
	static const struct {
		const char *line;
		int fail;
	} cases[] = {
		{ "ERROR: could not mount /fsx", 1 },
		{ "mount.lustre: mount failed", 1 },
		{ "Provisioning failure in on_create.sh", 1 },
		{ "Traceback (most recent call last):", 1 },
		{ "on_create.sh exited with exit code 2", 1 },
		{ "script finished, exit code: 127", 1 },
		{ "curl: (28) Operation timed out after 30000 milliseconds", 1 },
		{ "bash: /opt/ml/start.sh: No such file or directory", 1 },
		{ "cp: cannot open file: Permission denied", 1 },
		{ "setup.sh: line 4: docker: command not found", 1 },
		{ "10 errors during package install", 1 },
		{ "apt summary: 0 errors, 2 warnings", 0 },
		{ "validation done: no errors found", 0 },
		{ "errors=0 warnings=3", 0 },
		{ "failed: 0", 0 },
		{ "on_create.sh finished with exit code 0", 0 },
		{ "all steps completed", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if ((int)one_line("logs.lifecycle", "LifecycleConfig", cases[i].line) != cases[i].fail)
			T_FAILF("lifecycle line '%s': expected %s", cases[i].line,
				cases[i].fail ? "a failure" : "no failure");
}

static void t_hma_line_judgement(void)
{
	static const struct {
		const char *line;
		int fail;
	} cases[] = {
		{ "NVRM: Xid (PCI:0000:53:00): 79, GPU has fallen off the bus", 1 },
		{ "GPU 3 ECC uncorrectable error count 2", 1 },
		{ "NVLink link 4 down", 1 },
		{ "node marked unhealthy, requesting reboot", 1 },
		{ "Instance scheduled to replace", 1 },
		{ "hardware fault detected on GPU 1", 1 },
		{ "using default config", 0 },
		{ "no faults detected", 0 },
		{ "checks passed: errors=0", 0 },
		{ "speccheck complete", 0 },
		{ "xidx parser ready", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if ((int)one_line("logs.health-agent", "SagemakerHealthMonitoringAgent",
				  cases[i].line) != cases[i].fail)
			T_FAILF("agent line '%s': expected %s", cases[i].line,
				cases[i].fail ? "a fault" : "no fault");
}

static void t_lifecycle_per_node(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{'logs':{'group':'g','group_found':true,'lifecycle':["
		    "{'logStreamName':'LifecycleConfig/gpu/i-0aaaaaaaaaaaaaaa1','timestamp':1735732800000,"
		    "'message':'ERROR: step 1'},"
		    "{'logStreamName':'LifecycleConfig/gpu/i-0aaaaaaaaaaaaaaa1','timestamp':1735732801000,"
		    "'message':'0 errors in summary'},"
		    "{'logStreamName':'LifecycleConfig/gpu/i-0aaaaaaaaaaaaaaa1','timestamp':1735732802000,"
		    "'message':'ERROR: step 2'},"
		    "{'logStreamName':'LifecycleConfig/gpu/i-0aaaaaaaaaaaaaaa1','timestamp':1735732803000,"
		    "'message':'ERROR: step 3'},"
		    "{'logStreamName':'LifecycleConfig/gpu/i-0aaaaaaaaaaaaaaa1','timestamp':1735732804000,"
		    "'message':'ERROR: step 4'},"
		    "{'logStreamName':'LifecycleConfig/ctrl/i-0bbbbbbbbbbbbbbb1','timestamp':1735732805000,"
		    "'message':'Traceback (most recent call last):'},"
		    "{'logStreamName':'LifecycleConfig/weird-name','timestamp':1735732806000,"
		    "'message':'mount failed'}]}}");
	ck_run(&c, "logs.lifecycle");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 3);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);

	f = ck_one(&c, HP_TAG_FAIL, "Lifecycle script errors on i-0aaaaaaaaaaaaaaa1 (gpu): 4 matching "
				    "lines");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "D");
	T_STREQ(f->node, "i-0aaaaaaaaaaaaaaa1");
	T_EQ(ck_evidence_len(f), 3);
	T_CONTAINS(ck_line(f, 0),
		   "2025-01-01T12:00:00Z ERROR: step 1");
	T_ASSERT(!ck_evidence_has(f, "0 errors"));
	T_ASSERT(!ck_evidence_has(f, "step 4"));

	f = ck_one(&c, HP_TAG_FAIL, "Lifecycle script errors on i-0bbbbbbbbbbbbbbb1 (ctrl): 1 "
				    "matching line");
	T_STREQ(f->node, "i-0bbbbbbbbbbbbbbb1");

	/* A name without group/instance: no node, named by its stream. */
	f = ck_one(&c, HP_TAG_FAIL, "Lifecycle script errors on log stream 'LifecycleConfig/weird-name'");
	T_ASSERT(f->node == NULL);
	ck_free(&c);
}

static void t_stream_names(void)
{
	static const struct {
		const char *stream;
		const char *where;   /* expected in the message */
		int has_node;
	} cases[] = {
		{ "LifecycleConfig/gpu/i-0123abcd", "on i-0123abcd (gpu)", 1 },
		{ "LifecycleConfig/gpu/i-0123ABCD", "on log stream", 0 },
		{ "LifecycleConfig/gpu/i-0123", "on log stream", 0 },
		{ "LifecycleConfig//i-0123abcd", "on log stream", 0 },
		{ "LifecycleConfig/a/b/i-0123abcd", "on log stream", 0 },
		{ "", "on log stream", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char json[512];
		const struct hp_finding *f;
		struct ck c;

		snprintf(json, sizeof(json),
			 "{'logs':{'lifecycle':[{'logStreamName':'%s','timestamp':0,'message':'error'}]}}",
			 cases[i].stream);
		ck_load(&c, json);
		ck_run(&c, "logs.lifecycle");
		f = ck_one(&c, HP_TAG_FAIL, cases[i].where);
		T_EQ(f->node != NULL, cases[i].has_node);
		ck_free(&c);
	}
}

static void t_lifecycle_pass_needs_group(void)
{
	struct ck c;

	ck_load(&c, "{'logs':{'group_found':true,'lifecycle':[]}}");
	ck_run(&c, "logs.lifecycle");
	T_EQ(c.f.n, 1);
	ck_one(&c, HP_TAG_PASS, "No lifecycle script errors in LifecycleConfig streams");
	ck_free(&c);

	/* Benign lines only: still a PASS. */
	ck_load(&c, "{'logs':{'group_found':true,'lifecycle':[{'logStreamName':"
		    "'LifecycleConfig/g/i-0123abcd','timestamp':0,'message':'0 errors'}]}}");
	ck_run(&c, "logs.lifecycle");
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_PASS, "No lifecycle script errors");
	ck_free(&c);

	ck_load(&c, "{'logs':{'group_found':false,'lifecycle':[]}}");
	ck_run(&c, "logs.lifecycle");
	T_EQ(c.f.n, 0);
	ck_free(&c);

	/* Not searched at all. */
	ck_load(&c, "{'logs':{'group_found':true}}");
	ck_run(&c, "logs.lifecycle");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

static void t_truncated(void)
{
	struct ck c;

	ck_load(&c, "{'logs':{'group_found':true,'lifecycle':[],'lifecycle_truncated':true,"
		    "'hma':[],'hma_truncated':true}}");
	ck_run(&c, "logs.lifecycle");
	ck_one(&c, HP_TAG_INFO, "The lifecycle log search stopped at its cap");
	ck_free(&c);
	ck_load(&c, "{'logs':{'group_found':true,'hma':[],'hma_truncated':true}}");
	ck_run(&c, "logs.health-agent");
	ck_one(&c, HP_TAG_INFO, "The health monitoring agent log search stopped at its cap");
	ck_free(&c);
}

static void t_health_agent(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{'logs':{'group_found':true,'hma':["
		    "{'logStreamName':'SagemakerHealthMonitoringAgent/gpu/i-0aaaaaaaaaaaaaaa1',"
		    "'timestamp':1735732800000,'message':'Xid 79 detected on GPU 2; node will be "
		    "replaced'},"
		    "{'logStreamName':'SagemakerHealthMonitoringAgent/gpu/i-0aaaaaaaaaaaaaaa1',"
		    "'timestamp':1735732860000,'message':'no faults detected'},"
		    "{'logStreamName':'SagemakerHealthMonitoringAgent/gpu/i-0aaaaaaaaaaaaaaa2',"
		    "'timestamp':1735732900000,'message':'all checks passed'}]}}");
	ck_run(&c, "logs.health-agent");
	T_EQ(c.f.n, 1);
	f = ck_one(&c, HP_TAG_FAIL, "Health monitoring agent reported faults on i-0aaaaaaaaaaaaaaa1 "
				    "(gpu): 1 matching line");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "F");
	T_STREQ(f->node, "i-0aaaaaaaaaaaaaaa1");
	T_ASSERT(ck_evidence_has(f, "Xid 79 detected"));
	ck_free(&c);

	ck_load(&c, "{'logs':{'group_found':true,'hma':[]}}");
	ck_run(&c, "logs.health-agent");
	T_EQ(c.f.n, 1);
	ck_one(&c, HP_TAG_PASS, "No faults in SagemakerHealthMonitoringAgent streams");
	ck_free(&c);

	ck_load(&c, "{'logs':{'group_found':true}}");
	ck_run(&c, "logs.health-agent");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

T_MAIN(T(t_group), T(t_lifecycle_line_judgement), T(t_hma_line_judgement), T(t_lifecycle_per_node),
       T(t_stream_names), T(t_lifecycle_pass_needs_group), T(t_truncated), T(t_health_agent))
