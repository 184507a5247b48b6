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
			/* An Error event no rule claims is shown as it is, never dropped. */
			if (c.f.n != 2 || ck_count(&c, HP_TAG_FAIL))
				T_FAILF("'%s' fired: %s", cases[i].desc, ck_dump(&c));
			f = ck_one(&c, HP_TAG_WARN, "that no rule recognises");
			T_CONTAINS(f->message, cases[i].desc);
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

/*
 * Every cluster-event wording the guide quotes (references/node-issue-catalog.md
 * § 2, the seed's exact strings), in the sentences HyperPod writes them in.
 */
static void t_guide_wordings(void)
{
	static const struct {
		const char *desc;
		const char *title;
		const char *section;
	} cases[] = {
		{ "EFA health checks did not run successfully", "EFA health check failure", "A" },
		{ "Instance bootstrap failed\xE2\x80\xA6network misconfiguration",
		  "Node bootstrap / network misconfiguration", "A+B" },
		{ "Instance bootstrap failed...network misconfiguration",
		  "Node bootstrap / network misconfiguration", "A+B" },
		{ "Lifecycle scripts did not run successfully", "Lifecycle script failure", "D" },
		{ "Lifecycle scripts did not run successfully on instance i-0aaaaaaaaaaaaaaa1",
		  "Lifecycle script failure", "D" },
		{ "timed out", "Lifecycle script failure", "D" },
		{ "Instance i-0aaaaaaaaaaaaaaa1 timed out waiting for the on-create script",
		  "Lifecycle script failure", "D" },
		{ "Insufficient capacity", "Insufficient capacity", "C" },
		{ "InsufficientInstanceCapacity", "Insufficient capacity", "C" },
		{ "No subnets in the capacity AZ", "AZ mismatch", "C" },
		{ "Instance type ml.p5.48xlarge is not supported in availability zone usw2-az4",
		  "AZ mismatch", "C" },
		{ "Instance likely experienced a hardware failure", "Hardware failure", "F" },
		{ "Unhealthy hardware detected", "Hardware failure", "F" },
		{ "Failed to provision EC2 Instance", "Node provisioning failure", "C+F" },
		{ "Node is scheduled for replacement", "Node repair activity", "F" },
		{ "Instance reboot initiated by HyperPod health monitoring", "Node repair activity", "F" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct hp_finding *f = NULL;
		struct ck c;
		size_t j;

		load_one(&c, cases[i].desc);
		ck_run(&c, "events.signals");
		for (j = 0; j < c.f.n; j++)
			if (strstr(c.f.v[j].message, cases[i].title))
				f = &c.f.v[j];
		if (!f)
			T_FAILF("'%s' not matched to '%s': %s", cases[i].desc, cases[i].title,
				ck_dump(&c));
		else if (strcmp(f->section, cases[i].section))
			T_FAILF("'%s': section '%s', want '%s'", cases[i].desc, f->section,
				cases[i].section);
		ck_free(&c);
	}
}

/* Repair words on an Info event are routine: neither a signal nor an unclaimed error. */
static void t_repair_info_is_quiet(void)
{
	struct ck c;

	ck_load(&c, "{'events':[{'EventId':'e1','ResourceType':'Instance','InstanceId':'i-0aaaaaaaaaaaaaaa1',"
		    "'EventTime':100,'EventLevel':'Info','Description':'Node reboot completed'}]}");
	ck_run(&c, "events.signals");
	T_EQ(c.f.n, 1);
	ck_free(&c);
}

/*
 * AWS's documented DescribeClusterEvent example: the description only says
 * that instance creation failed; the reason is the FailureMessage in the
 * event's metadata (here insufficient capacity).
 */
static void t_failure_message_in_details(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{'events':[{'EventId':'2d4c3d2e-0c4e-4a4f-9a53-3a8e1c0f7b11',"
		    "'ClusterName':'my-cluster','ResourceType':'Instance','InstanceGroupName':'worker-group',"
		    "'InstanceId':'i-0aaaaaaaaaaaaaaa1','EventTime':1735732800,'EventLevel':'Error',"
		    "'Description':'Instance creation in Cluster my-cluster and InstanceGroup worker-group failed',"
		    "'EventDetails':{'EventMetadata':{'Instance':{'FailureMessage':"
		    "'We currently do not have sufficient ml.p5.48xlarge capacity in the Availability Zone "
		    "you requested (us-west-2a). Our system will be working on provisioning additional "
		    "capacity.','NodeLogicalId':'worker-group-1'}}}}]}");
	ck_run(&c, "events.signals");
	f = ck_one(&c, HP_TAG_FAIL, "Insufficient capacity on i-0aaaaaaaaaaaaaaa1 (group 'worker-group')");
	T_STREQ(f->section, "C");
	T_ASSERT(ck_evidence_has(f, "Instance creation in Cluster my-cluster"));
	T_ASSERT(ck_evidence_has(f, "do not have sufficient ml.p5.48xlarge capacity"));
	T_EQ(ck_count(&c, HP_TAG_WARN), 0);
	ck_free(&c);

	/* The same with the InstanceGroupScaling and Cluster members of the union. */
	ck_load(&c, "{'events':[{'EventId':'e2','ResourceType':'InstanceGroup','InstanceGroupName':'gpu',"
		    "'EventTime':100,'EventLevel':'Error','Description':'Scaling of InstanceGroup gpu failed',"
		    "'EventDetails':{'EventMetadata':{'InstanceGroupScaling':{'InstanceCount':2,"
		    "'TargetCount':4,'FailureMessage':'No subnets in the capacity AZ usw2-az4'}}}},"
		    "{'EventId':'e3','ResourceType':'Cluster','EventTime':90,'EventLevel':'Error',"
		    "'Description':'Cluster update failed','EventDetails':{'EventMetadata':{'Cluster':"
		    "{'FailureMessage':'Lifecycle scripts did not run successfully'}}}}]}");
	ck_run(&c, "events.signals");
	ck_one(&c, HP_TAG_FAIL, "AZ mismatch on instance group 'gpu'");
	ck_one(&c, HP_TAG_FAIL, "Lifecycle script failure on the cluster");
	ck_free(&c);
}

/* Error events no rule claims: one WARN per distinct text, instance ids folded. */
static void t_unclaimed_grouped(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{'events':["
		    "{'EventId':'a','InstanceId':'i-0aaaaaaaaaaaaaaa1','InstanceGroupName':'gpu','EventTime':100,"
		    "'EventLevel':'Error','Description':'Instance i-0aaaaaaaaaaaaaaa1 could not join the cluster'},"
		    "{'EventId':'b','InstanceId':'i-0bbbbbbbbbbbbbbb2','InstanceGroupName':'gpu','EventTime':200,"
		    "'EventLevel':'Error','Description':'Instance i-0bbbbbbbbbbbbbbb2 could not join the cluster'},"
		    "{'EventId':'c','InstanceId':'i-0bbbbbbbbbbbbbbb2','InstanceGroupName':'gpu','EventTime':150,"
		    "'EventLevel':'Error','Description':'Instance i-0bbbbbbbbbbbbbbb2 could not join the cluster'},"
		    "{'EventId':'d','ResourceType':'Cluster','EventTime':300,'EventLevel':'Error',"
		    "'Description':'Cluster quota exceeded for ml.p5.48xlarge'},"
		    "{'EventId':'e','ResourceType':'Cluster','EventTime':310,'EventLevel':'Warn',"
		    "'Description':'Something unusual'},"
		    "{'EventId':'f','ResourceType':'Cluster','EventTime':320,'EventLevel':'Info',"
		    "'Description':'Cluster is InService'}]}");
	ck_run(&c, "events.signals");
	T_EQ(ck_count(&c, HP_TAG_WARN), 2);
	f = ck_one(&c, HP_TAG_WARN, "could not join the cluster");
	T_CONTAINS(f->message, "instance group 'gpu'");
	T_CONTAINS(f->message, "(3 events, newest 1970-01-01T00:03:20Z)");
	T_STREQ(f->section, "L");
	T_EQ(f->prio, HP_P1);
	T_EQ(ck_evidence_len(f), 3);
	f = ck_one(&c, HP_TAG_WARN, "Cluster quota exceeded");
	T_CONTAINS(f->message, "on the cluster");
	ck_free(&c);
}

/* The cap of DescribeClusterEvent calls, and calls that failed, are said. */
static void t_details_cap(void)
{
	struct ck c;

	ck_load(&c, "{'events':[{'EventTime':1,'Description':'ok'}],'events_details_capped':7,"
		    "'events_details_cap':50,'events_details_failed':2}");
	ck_run(&c, "events.signals");
	ck_one(&c, HP_TAG_WARN, "Details of 7 older Error/Warn cluster events not read");
	ck_one(&c, HP_TAG_WARN, "Details of 2 Error/Warn cluster events could not be read");
	ck_free(&c);
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
	T_CONTAINS(ck_line(f, 0), "GPU 1");
	T_CONTAINS(ck_line(f, 1), "GPU 2");
	T_CONTAINS(ck_line(f, 2), "GPU 3");
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
	T_CONTAINS(ck_line(f, 0), "xxx\xE2\x80\xA6");
	T_ASSERT(strlen(ck_line(f, 0)) < 260);
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

T_MAIN(T(t_each_rule), T(t_guide_wordings), T(t_repair_info_is_quiet),
       T(t_failure_message_in_details), T(t_unclaimed_grouped), T(t_details_cap),
       T(t_first_rule_wins), T(t_dedup_ten_events), T(t_keys_and_evidence_cap),
       T(t_long_description_clipped), T(t_no_events), T(t_truncated))
