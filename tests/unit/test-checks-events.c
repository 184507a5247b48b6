/*
 * events.signals: each rule of the table, first-rule-wins, folding of
 * repeated events, evidence, and the no-events / truncated notes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks-t.h"
#include "t.h"

/* One event on i-0aaaaaaaaaaaaaaa1 in group 'gpu' with this description. */
static void load_one(struct ck *c, const char *desc)
{
	char json[1024];

	snprintf(json, sizeof(json),
		 "{'events':[{'EventId':'e1','ResourceType':'Instance','InstanceGroupName':'gpu',"
		 "'InstanceId':'i-0aaaaaaaaaaaaaaa1','EventTime':1735732800,'EventLevel':'Error',"
		 "'Description':'%s'}]}",
		 desc);
	ck_load(c, json);
}

static void t_each_rule(void)
{
	static const struct {
		const char *desc;
		const char *title;   /* NULL: no signal */
		enum hp_prio prio;
		const char *section;
	} cases[] = {
		/* The canonical text has none of failed/error/timeout/fault/unhealthy. */
		{ "EFA health checks did not run successfully on the instance", "EFA health check failure",
		  HP_P0, "A" },
		{ "Instance EFA HEALTH verification pending", "EFA health check failure", HP_P0, "A" },
		{ "Node bootstrap failed: network unreachable to EKS API", "Node bootstrap / network "
		  "misconfiguration", HP_P1, "A+B" },
		{ "Detected network misconfiguration in subnet", "Node bootstrap / network misconfiguration",
		  HP_P1, "A+B" },
		{ "Lifecycle script on_create.sh exited with exit code 1", "Lifecycle script failure",
		  HP_P1, "D" },
		{ "LifeCycleConfig execution timed out after 3600 seconds", "Lifecycle script failure",
		  HP_P1, "D" },
		{ "Lifecycle config download error from S3", "Lifecycle script failure", HP_P1, "D" },
		{ "Instance replaced due to hardware failure", "Hardware failure", HP_P1, "F" },
		{ "Unhealthy hardware detected by health monitoring agent", "Hardware failure", HP_P1, "F" },
		{ "We currently do not have sufficient capacity for ml.p5.48xlarge",
		  "Insufficient capacity", HP_P1, "C" },
		{ "InsufficientInstanceCapacity when launching", "Insufficient capacity", HP_P1, "C" },
		{ "Instance type is not supported in the requested Availability Zone", "AZ mismatch",
		  HP_P1, "C" },
		{ "Availability zone mismatch between subnet and capacity reservation", "AZ mismatch",
		  HP_P1, "C" },
		{ "Failed to provision instance", "Node provisioning failure", HP_P1, "C+F" },
		/* Not signals. */
		{ "Lifecycle scripts completed successfully", NULL, HP_PNONE, "" },
		{ "Lifecycle script on_create.sh finished with exit code 0", NULL, HP_PNONE, "" },
		{ "Instance failed health check (NVLink errors on GPU 3); marked for replacement",
		  "Hardware failure", HP_P1, "F" },
		{ "Bootstrap failed to reach the metadata service", NULL, HP_PNONE, "" },
		{ "Instance is now Running", NULL, HP_PNONE, "" },
		{ "Availability zone us-west-2a selected", NULL, HP_PNONE, "" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct hp_finding *f;
		struct ck c;

		load_one(&c, cases[i].desc);
		ck_run(&c, "events.signals");
		ck_one(&c, HP_TAG_INFO, "Read 1 cluster event (newest 2025-01-01T12:00:00Z)");
		if (!cases[i].title) {
			if (c.f.n != 1)
				T_FAILF("'%s' fired: %s", cases[i].desc, ck_dump(&c));
			ck_free(&c);
			continue;
		}
		T_EQ(c.f.n, 2);
		f = ck_one(&c, HP_TAG_FAIL, cases[i].title);
		if (f->prio != cases[i].prio || strcmp(f->section, cases[i].section))
			T_FAILF("'%s': P%d section '%s'", cases[i].desc, f->prio, f->section);
		T_STREQ(f->node, "i-0aaaaaaaaaaaaaaa1");
		T_CONTAINS(f->message, "on i-0aaaaaaaaaaaaaaa1 (group 'gpu'): 1 event, newest "
				       "2025-01-01T12:00:00Z");
		T_ASSERT(ck_evidence_has(f, cases[i].desc));
		ck_free(&c);
	}
}

static void t_first_rule_wins(void)
{
	struct ck c;

	load_one(&c, "EFA health checks did not run successfully; hardware failure suspected");
	ck_run(&c, "events.signals");
	ck_one(&c, HP_TAG_FAIL, "EFA health check failure");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 1);
	ck_free(&c);
}

static void t_dedup_ten_events(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	const struct hp_finding *f;
	struct ck c;
	int i;

	hp_buf_puts(&b, "{'events':[");
	for (i = 0; i < 10; i++)
		hp_buf_printf(&b, "%s{'ResourceType':'Instance','InstanceGroupName':'gpu',"
			      "'InstanceId':'i-0aaaaaaaaaaaaaaa1','EventTime':%d.5,"
			      "'Description':'EFA health checks did not run successfully'}",
			      i ? "," : "", 1735732800 + i * 60);
	hp_buf_puts(&b, "]}");
	ck_load(&c, b.buf);
	hp_buf_release(&b);
	ck_run(&c, "events.signals");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 1);
	f = ck_one(&c, HP_TAG_FAIL, "EFA health check failure on i-0aaaaaaaaaaaaaaa1 (group 'gpu'): "
				    "10 events, newest 2025-01-01T12:09:00Z");
	T_EQ(f->prio, HP_P0);
	T_STREQ(f->node, "i-0aaaaaaaaaaaaaaa1");
	/* Identical texts are shown once, with the newest time. */
	T_EQ(ck_evidence_len(f), 1);
	T_ASSERT(ck_evidence_has(f, "2025-01-01T12:09:00Z EFA health checks did not run"));
	ck_one(&c, HP_TAG_INFO, "Read 10 cluster events");
	ck_free(&c);
}

static void t_keys_and_evidence_cap(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{'events':["
		    "{'InstanceId':'i-0aaaaaaaaaaaaaaa1','InstanceGroupName':'gpu','EventTime':100,"
		    "'Description':'hardware failure: GPU 0 fell off the bus'},"
		    "{'InstanceId':'i-0aaaaaaaaaaaaaaa1','InstanceGroupName':'gpu','EventTime':400,"
		    "'Description':'hardware failure: GPU 1 fell off the bus'},"
		    "{'InstanceId':'i-0aaaaaaaaaaaaaaa1','InstanceGroupName':'gpu','EventTime':300,"
		    "'Description':'hardware failure: GPU 2 fell off the bus'},"
		    "{'InstanceId':'i-0aaaaaaaaaaaaaaa1','InstanceGroupName':'gpu','EventTime':200,"
		    "'Description':'hardware failure: GPU 3 fell off the bus'},"
		    "{'InstanceId':'i-0bbbbbbbbbbbbbbb2','InstanceGroupName':'gpu','EventTime':50,"
		    "'Description':'hardware failure: NVLink down'},"
		    "{'ResourceType':'InstanceGroup','InstanceGroupName':'gpu','EventTime':60,"
		    "'Description':'Insufficient capacity for ml.p5.48xlarge'},"
		    "{'ResourceType':'InstanceGroup','InstanceGroupName':'gpu','EventTime':70,"
		    "'Description':'Insufficient capacity for ml.p5.48xlarge'},"
		    "{'ResourceType':'Cluster','EventTime':80,"
		    "'Description':'Failed to provision cluster resources'}]}");
	ck_run(&c, "events.signals");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 4);

	f = ck_one(&c, HP_TAG_FAIL, "Hardware failure on i-0aaaaaaaaaaaaaaa1 (group 'gpu'): 4 events, "
				    "newest 1970-01-01T00:06:40Z");
	T_EQ(ck_evidence_len(f), 3);
	/* The three newest: GPU 1 (400), GPU 2 (300), GPU 3 (200); GPU 0 is left out. */
	T_CONTAINS(cJSON_GetArrayItem(f->evidence, 0)->valuestring, "GPU 1");
	T_CONTAINS(cJSON_GetArrayItem(f->evidence, 1)->valuestring, "GPU 2");
	T_CONTAINS(cJSON_GetArrayItem(f->evidence, 2)->valuestring, "GPU 3");
	T_ASSERT(!ck_evidence_has(f, "GPU 0"));

	f = ck_one(&c, HP_TAG_FAIL, "Hardware failure on i-0bbbbbbbbbbbbbbb2");
	T_STREQ(f->node, "i-0bbbbbbbbbbbbbbb2");

	f = ck_one(&c, HP_TAG_FAIL, "Insufficient capacity on instance group 'gpu': 2 events");
	T_ASSERT(f->node == NULL);
	T_STREQ(f->section, "C");

	f = ck_one(&c, HP_TAG_FAIL, "Node provisioning failure on the cluster: 1 event");
	T_ASSERT(f->node == NULL);
	T_STREQ(f->section, "C+F");
	ck_free(&c);
}

static void t_long_description_clipped(void)
{
	char desc[700];
	const struct hp_finding *f;
	struct ck c;

	memset(desc, 'x', sizeof(desc) - 1);
	desc[sizeof(desc) - 1] = '\0';
	memcpy(desc, "hardware failure ", 17);
	load_one(&c, desc);
	ck_run(&c, "events.signals");
	f = ck_one(&c, HP_TAG_FAIL, "Hardware failure");
	T_CONTAINS(cJSON_GetArrayItem(f->evidence, 0)->valuestring, "xxx\xE2\x80\xA6");
	T_ASSERT(strlen(cJSON_GetArrayItem(f->evidence, 0)->valuestring) < 260);
	ck_free(&c);
}

static void t_no_events(void)
{
	struct ck c;
	const struct hp_finding *f;

	ck_load(&c, "{'cluster':{'ClusterStatus':'InService'},'events':[]}");
	ck_run(&c, "events.signals");
	T_EQ(c.f.n, 1);
	f = ck_one(&c, HP_TAG_INFO, "only reports events when NodeProvisioningMode is Continuous");
	T_CONTAINS(f->message, "this cluster's mode is legacy (not Continuous)");
	ck_free(&c);

	ck_load(&c, "{'cluster':{'NodeProvisioningMode':'Continuous'},'events':[]}");
	ck_run(&c, "events.signals");
	ck_one(&c, HP_TAG_INFO, "this cluster's mode is Continuous");
	ck_free(&c);

	/* Not collected (the call failed): silence, the api check explains. */
	ck_load(&c, "{'cluster':{'ClusterStatus':'InService'}}");
	ck_run(&c, "events.signals");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

static void t_truncated(void)
{
	struct ck c;

	ck_load(&c, "{'events':[{'EventTime':1,'Description':'ok'}],'events_truncated':true}");
	ck_run(&c, "events.signals");
	ck_one(&c, HP_TAG_INFO, "Only the newest 500 cluster events were read");
	ck_free(&c);
}

T_MAIN(T(t_each_rule), T(t_first_rule_wins), T(t_dedup_ten_events), T(t_keys_and_evidence_cap),
       T(t_long_description_clipped), T(t_no_events), T(t_truncated))
