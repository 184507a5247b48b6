/*
 * node.version-drift: versions compared within each instance group, the
 * majority named, the odd nodes listed; the driver differing between
 * nodes of one training job is a FAIL; unknown versions never agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks-t.h"
#include "hp/json.h"
#include "t.h"

/* A probed node of group with this kernel and driver (NULL: the block is missing). */
static void node(struct ck *c, const char *id, const char *group, const char *kernel,
		 const char *driver)
{
	cJSON *p = cJSON_GetObjectItem(c->snap.root, "probes"), *e;
	struct hp_buf b = HP_BUF_INIT(1 << 16);

	if (!p)
		p = cJSON_AddObjectToObject(c->snap.root, "probes");
	hp_buf_printf(&b, "@@HP@@ BEGIN node\nprobe=hpnode\n");
	if (kernel)
		hp_buf_printf(&b, "kernel=%s\n", kernel);
	hp_buf_puts(&b, "@@HP@@ END node 0\n");
	if (driver)
		hp_buf_printf(&b, "@@HP@@ BEGIN nvidia_gpu\n0, 00000000:53:00.0, NVIDIA H100 80GB HBM3, "
			      "GPU-01, %s\n@@HP@@ END nvidia_gpu 0\n", driver);
	hp_buf_puts(&b, "@@HP@@ DONE\n");
	e = cJSON_AddObjectToObject(p, id);
	cJSON_AddStringToObject(e, "state", "probed");
	cJSON_AddStringToObject(e, "group", group);
	cJSON_AddStringToObject(e, "stdout", b.buf);
	hp_buf_release(&b);
}

#define K1 "6.1.119-129.201.amzn2023.x86_64"
#define K2 "6.1.128-136.201.amzn2023.x86_64"

static void t_odd_node_out(void)
{
	struct ck c;
	const struct hp_finding *f;
	struct hp_buf key = HP_BUF_INIT(4096);

	memset(&c, 0, sizeof(c));
	ck_load(&c, "{'cluster':{}}");
	node(&c, "i-01", "gpu", K1, "550.127.05");
	node(&c, "i-02", "gpu", K1, "550.127.05");
	node(&c, "i-03", "gpu", K1, "535.183.01");
	node(&c, "i-04", "cpu", K1, NULL);
	node(&c, "i-05", "cpu", K2, NULL);
	ck_run(&c, "node.version-drift");
	f = ck_one(&c, HP_TAG_WARN, "Instance group 'gpu': NVIDIA driver differs on 1 of 3 probed "
		   "nodes (2 versions; majority 550.127.05 on 2)");
	T_EQ(f->prio, HP_P2);
	T_STREQ(f->section, "E.1");
	T_ASSERT(ck_evidence_has(f, "535.183.01               1 node: i-03"));
	T_ASSERT(ck_evidence_has(f, "550.127.05               2 nodes (majority)"));
	T_EQ(f->nnodes, 1);
	hp_finding_key(f, &key);
	T_STREQ(key.buf, "node.version-drift/gpu#driver");
	/* A tie: the lower version is the reference, the other is the odd one. */
	f = ck_one(&c, HP_TAG_WARN, "Instance group 'cpu': kernel differs on 1 of 2 probed nodes");
	T_ASSERT(ck_evidence_has(f, K2 " 1 node: i-05"));
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	hp_buf_release(&key);
	ck_free(&c);
}

static void t_agreeing_and_unknown(void)
{
	struct ck c;

	memset(&c, 0, sizeof(c));
	ck_load(&c, "{'cluster':{}}");
	node(&c, "i-01", "gpu", K1, "550.127.05");
	node(&c, "i-02", "gpu", K1, "550.127.05");
	node(&c, "i-03", "gpu", NULL, NULL);   /* unread: never counted as agreeing */
	ck_run(&c, "node.version-drift");
	ck_one(&c, HP_TAG_PASS, "Software versions agree within every instance group (3 probed nodes");
	T_EQ(ck_count(&c, HP_TAG_WARN) + ck_count(&c, HP_TAG_FAIL), 0);
	ck_free(&c);

	/* One node with a known version has nothing to be compared with: silent. */
	memset(&c, 0, sizeof(c));
	ck_load(&c, "{'cluster':{}}");
	node(&c, "i-01", "gpu", K1, "550.127.05");
	node(&c, "i-02", "gpu", NULL, NULL);
	ck_run(&c, "node.version-drift");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

/* The driver differing between nodes of one training job is a FAIL P1. */
static void t_within_one_job(void)
{
	struct ck c;
	const struct hp_finding *f;

	memset(&c, 0, sizeof(c));
	ck_load(&c, "{'cluster':{},'nccl':{'pods':[{'name':'w-0','node':'hyperpod-i-0aaaaaaaaaaaaaaa1'},"
		    "{'name':'w-1','node':'hyperpod-i-0ccccccccccccccc3'}]}}");
	node(&c, "i-0aaaaaaaaaaaaaaa1", "gpu", K1, "550.127.05");
	node(&c, "i-0bbbbbbbbbbbbbbb2", "gpu", K1, "550.127.05");
	node(&c, "i-0ccccccccccccccc3", "gpu", K1, "535.183.01");
	ck_run(&c, "node.version-drift");
	f = ck_one(&c, HP_TAG_FAIL, "NVIDIA driver differs on 1 of 3 probed nodes");
	T_EQ(f->prio, HP_P1);
	T_CONTAINS(f->message, "within one training job");
	ck_free(&c);
}

T_MAIN(T(t_odd_node_out), T(t_agreeing_and_unknown), T(t_within_one_job))
