/*
 * The on-node checks of the NCCL probe over snapshots with "nccl_probes"
 * entries: the fixture's healthy and broken p5 nodes (their probe run in the
 * fixture sandbox, tests/data/nccl/), published tool outputs framed as the
 * probe frames them, and hand-written blocks; the node probe's facts where a
 * check needs them (kernel, driver). Several cases are the original tool's
 * bugs (seed-nccl.md § 5), named where they are tested.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks-t.h"
#include "hp/json.h"
#include "t.h"

#define NODE_A "i-0aaaaaaaaaaaaaaa1"
#define NODE_B "i-0bbbbbbbbbbbbbbb2"

static char *data_file(const char *name)
{
	return t_data("nccl", name, NULL);
}

/* One framed block ("@@HP@@ BEGIN name", content, END with rc) appended to out. */
static void block(struct hp_buf *out, const char *name, int rc, const char *content)
{
	hp_buf_printf(out, "@@HP@@ BEGIN %s\n%s%s@@HP@@ END %s %d\n", name, content,
		      *content && content[strlen(content) - 1] != '\n' ? "\n" : "", name, rc);
}

#define TYPES "'instance_types':{'p5.48xlarge':{'gpuInfo':{'gpus':[{'count':'8'}]}," \
	"'networkInfo':{'efaSupported':'true','efaInfo':{'maximumEfaInterfaces':'32'}}}}"

/* A snapshot of a p5 cluster (EKS unless slurm) with no node probed yet. */
static void snap_init(struct ck *c, int slurm)
{
	memset(c, 0, sizeof(*c));
	ck_load(c, slurm ? "{'cluster':{},'nccl':{}," TYPES "}"
			 : "{'cluster':{'Orchestrator':{'Eks':{'ClusterArn':'arn:aws:eks:us-west-2:1:cluster/k'}}},"
			   "'nccl':{}," TYPES "}");
}


/* Add node id with NCCL probe output nccl_out and (optionally) node probe output. */
static void add_node(struct ck *c, const char *id, const char *nccl_out, const char *node_out)
{
	cJSON *np = cJSON_GetObjectItem(c->snap.root, "nccl_probes"), *e;

	if (!np)
		np = cJSON_AddObjectToObject(c->snap.root, "nccl_probes");
	e = cJSON_AddObjectToObject(np, id);
	cJSON_AddStringToObject(e, "state", "probed");
	cJSON_AddStringToObject(e, "instance_type", "ml.p5.48xlarge");
	cJSON_AddStringToObject(e, "stdout", nccl_out);
	if (node_out) {
		cJSON *p = cJSON_GetObjectItem(c->snap.root, "probes");

		if (!p)
			p = cJSON_AddObjectToObject(c->snap.root, "probes");
		e = cJSON_AddObjectToObject(p, id);
		cJSON_AddStringToObject(e, "state", "probed");
		cJSON_AddStringToObject(e, "instance_type", "ml.p5.48xlarge");
		cJSON_AddStringToObject(e, "stdout", node_out);
	}
}

/* The node probe's kernel and driver blocks, for the checks that read them. */
static char *node_probe(const char *kernel, const char *driver)
{
	struct hp_buf b = HP_BUF_INIT(1 << 16);
	char line[256];

	snprintf(line, sizeof(line), "probe=hpnode\nkernel=%s\n", kernel);
	block(&b, "node", 0, line);
	snprintf(line, sizeof(line), "0, 00000000:53:00.0, NVIDIA H100 80GB HBM3, GPU-01, %s\n", driver);
	block(&b, "nvidia_gpu", 0, line);
	hp_buf_puts(&b, "@@HP@@ DONE\n");
	return hp_buf_detach(&b, NULL);
}

static const char *const node_checks[] = {
	"nccl.node-probe", "nccl.topology", "nccl.p2p", "nccl.peermem", "nccl.ofi-plugin",
	"nccl.efa-software", "nccl.nccl-lib", "nccl.mtu", "nccl.limits", "nccl.hugepages",
	"nccl.shm-stale", "nccl.numa", "nccl.firewall",
};

static void run_all(struct ck *c)
{
	size_t i;

	hp_facts_prepare(&c->snap);
	hp_findings_release(&c->f);
	for (i = 0; i < HP_ARRAY_LEN(node_checks); i++)
		hp_check_run(hp_check_find(node_checks[i]), &c->snap, &c->f);
}

static void t_fixture_nodes(void)
{
	struct ck c;
	char *ok = data_file("probe-p5-fixture-ok.txt"), *bad = data_file("probe-p5-fixture-broken.txt");
	char *np = node_probe("6.1.119-129.201.amzn2023.x86_64", "550.127.05");
	const struct hp_finding *f;

	snap_init(&c, 0);
	add_node(&c, NODE_A, ok, np);
	run_all(&c);
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_PASS, "All 28 GPU pairs of node " NODE_A " are connected by NVLink (NV18)");
	ck_one(&c, HP_TAG_PASS, "nvidia_peermem is loaded on node " NODE_A);
	ck_one(&c, HP_TAG_PASS, "aws-ofi-nccl plugin present on node " NODE_A);
	ck_one(&c, HP_TAG_PASS, "NCCL 2.21.5 (CUDA 12.4) on node " NODE_A ", driver 550.127.05");
	ck_one(&c, HP_TAG_PASS, "memlock 8.0 GiB, stack 8 MiB for training process 4242");
	ck_one(&c, HP_TAG_PASS, "No DROP/REJECT rule outside kube-proxy's and the CNI's chains");
	ck_free(&c);

	snap_init(&c, 0);
	add_node(&c, NODE_B, bad, np);
	run_all(&c);
	f = ck_one(&c, HP_TAG_FAIL, "aws-ofi-nccl plugin (libnccl-net.so) not found on node " NODE_B
		   ", an EFA node: NCCL falls back to TCP");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "NC13");
	T_STREQ(f->node, NODE_B);
	/* EKS: RemoveIPC matters less than on Slurm (no logind session under a pod). */
	f = ck_one(&c, HP_TAG_WARN, "RemoveIPC=yes on node " NODE_B " (default)");
	T_EQ(f->prio, HP_P2);
	/* Seed bug C9: stale segments only count when no training process runs. */
	f = ck_one(&c, HP_TAG_WARN, "3 stale /dev/shm/nccl-* segments on node " NODE_B ", where no "
		   "training process runs");
	T_ASSERT(ck_evidence_has(f, "/dev/shm/nccl-"));
	ck_one(&c, HP_TAG_PASS, "memlock unlimited, stack 8 MiB for the probe's shell (no training "
	       "process runs)");
	ck_free(&c);

	snap_init(&c, 1);
	add_node(&c, NODE_B, bad, NULL);
	run_all(&c);
	T_EQ(ck_one(&c, HP_TAG_WARN, "RemoveIPC=yes on node " NODE_B)->prio, HP_P1);
	ck_free(&c);
	free(ok);
	free(bad);
	free(np);
}

/* Four nodes alike become one finding. */
static void t_fold(void)
{
	struct ck c;
	char *bad = data_file("probe-p5-fixture-broken.txt");
	const struct hp_finding *f;
	char id[32];
	int i;

	snap_init(&c, 0);
	for (i = 0; i < 5; i++) {
		snprintf(id, sizeof(id), "i-0ccccccccccccccc%d", i);
		add_node(&c, id, bad, NULL);
	}
	ck_run(&c, "nccl.ofi-plugin");
	T_EQ(c.f.n, 1);
	f = ck_one(&c, HP_TAG_FAIL, "aws-ofi-nccl plugin not found on 5 nodes");
	T_EQ((int)f->nnodes, 5);
	ck_free(&c);
	free(bad);
}

static void t_topology(void)
{
	struct ck c;
	struct hp_buf b = HP_BUF_INIT(1 << 16);
	char *lost = data_file("topo-h100-lost-nvlink.txt"), *pcie = data_file("topo-pcie-4090.txt");
	const struct hp_finding *f;

	block(&b, "topo", 0, lost);
	hp_buf_puts(&b, "@@HP@@ DONE\n");
	snap_init(&c, 0);
	add_node(&c, NODE_A, b.buf, NULL);
	ck_run(&c, "nccl.topology");
	f = ck_one(&c, HP_TAG_FAIL, "1 of 28 GPU pairs of node " NODE_A " are on a PCIe path although "
		   "its other pairs use NVLink");
	T_ASSERT(ck_evidence_has(f, "GPU3-GPU5 SYS"));
	T_STREQ(f->section, "NC14.1");
	ck_free(&c);

	hp_buf_reset(&b);
	block(&b, "topo", 0, pcie);
	hp_buf_puts(&b, "@@HP@@ DONE\n");
	snap_init(&c, 0);
	add_node(&c, NODE_A, b.buf, NULL);
	ck_run(&c, "nccl.topology");
	ck_one(&c, HP_TAG_INFO, "GPUs of node " NODE_A " connect over PCIe only");
	ck_free(&c);
	hp_buf_release(&b);
	free(lost);
	free(pcie);
}

static void t_acs_iommu(void)
{
	struct ck c;
	struct hp_buf b = HP_BUF_INIT(1 << 16);
	char *acs = data_file("lspci-acs.txt"), *noroot = data_file("lspci-notroot.txt");

	block(&b, "acs", 0, acs);
	block(&b, "iommu", 0, "unit dmar0\nunit dmar1\ncmdline intel_iommu=on\n");
	block(&b, "environment", 0, "NCCL_P2P_DISABLE=1\n");
	hp_buf_puts(&b, "@@HP@@ DONE\n");
	snap_init(&c, 0);
	add_node(&c, NODE_A, b.buf, NULL);
	ck_run(&c, "nccl.p2p");
	T_EQ(ck_one(&c, HP_TAG_FAIL, "ACS is enabled on 1 of")->prio, HP_P1);
	ck_one(&c, HP_TAG_WARN, "IOMMU in translation mode on node " NODE_A);
	ck_one(&c, HP_TAG_WARN, "NCCL_P2P_DISABLE=1 in /etc/environment on node " NODE_A);
	ck_free(&c);

	/* Not root: not readable is said, never "no ACS". */
	hp_buf_reset(&b);
	block(&b, "acs", 0, noroot);
	hp_buf_puts(&b, "@@HP@@ DONE\n");
	snap_init(&c, 0);
	add_node(&c, NODE_A, b.buf, NULL);
	ck_run(&c, "nccl.p2p");
	ck_one(&c, HP_TAG_INFO, "PCIe ACS of node " NODE_A " not readable");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
	hp_buf_release(&b);
	free(acs);
	free(noroot);
}

/* Seed bug A5: kernel 6.1 has DMA-BUF (the original compared minor >= 12 alone). */
static void t_peermem(void)
{
	struct ck c;
	struct hp_buf b = HP_BUF_INIT(1 << 12);
	char *k61 = node_probe("6.1.119", "550.127.05"), *k510 = node_probe("5.10.225", "550.127.05");

	block(&b, "peermem", 1, "");
	hp_buf_puts(&b, "@@HP@@ DONE\n");
	snap_init(&c, 0);
	add_node(&c, NODE_A, b.buf, k61);
	ck_run(&c, "nccl.peermem");
	ck_one(&c, HP_TAG_INFO, "nvidia_peermem is not loaded on node " NODE_A "; kernel 6.1 supports "
	       "DMA-BUF");
	T_EQ(ck_count(&c, HP_TAG_WARN), 0);
	ck_free(&c);

	snap_init(&c, 0);
	add_node(&c, NODE_A, b.buf, k510);
	ck_run(&c, "nccl.peermem");
	T_EQ(ck_one(&c, HP_TAG_WARN, "kernel 5.10 has no DMA-BUF")->prio, HP_P1);
	ck_free(&c);
	hp_buf_release(&b);
	free(k61);
	free(k510);
}

/* Seed bug C8: kube-proxy's and the CNI's DROP/REJECT rules are expected; others are not. */
static void t_firewall(void)
{
	struct ck c;
	struct hp_buf b = HP_BUF_INIT(1 << 16);
	char *eks = data_file("iptables-save-eks.txt");
	const struct hp_finding *f;

	block(&b, "firewall", 0, eks);
	hp_buf_puts(&b, "@@HP@@ DONE\n");
	snap_init(&c, 0);
	add_node(&c, NODE_A, b.buf, NULL);
	ck_run(&c, "nccl.firewall");
	f = ck_one(&c, HP_TAG_WARN, "1 DROP/REJECT rules and 0 DROP policies outside kube-proxy's and "
		   "the CNI's chains on node " NODE_A);
	T_ASSERT(ck_evidence_has(f, "--dport 29500 -j REJECT"));
	T_ASSERT(!ck_evidence_has(f, "KUBE-FIREWALL"));
	T_STREQ(f->section, "NC16");
	ck_free(&c);
	hp_buf_release(&b);
	free(eks);
}

static void t_limits(void)
{
	struct ck c;
	struct hp_buf b = HP_BUF_INIT(1 << 12);

	/* The training process's own limits, not the probe's shell. */
	block(&b, "limits", 0, "Max locked memory         unlimited            unlimited            bytes\n"
			       "Max stack size            8388608              unlimited            bytes\n");
	block(&b, "procs", 0, "pid 77 python train.py\n"
			      "limit Max locked memory         65536                65536                bytes\n"
			      "limit Max stack size            8388608              unlimited            bytes\n"
			      "env RANK=0\n");
	hp_buf_puts(&b, "@@HP@@ DONE\n");
	snap_init(&c, 0);
	add_node(&c, NODE_A, b.buf, NULL);
	ck_run(&c, "nccl.limits");
	T_EQ(ck_one(&c, HP_TAG_FAIL, "memlock is 64 KiB for training process 77 on node " NODE_A
		    ": EFA memory registration fails")->prio, HP_P1);
	ck_free(&c);

	hp_buf_reset(&b);
	block(&b, "limits", 0, "Max locked memory         unlimited            unlimited            bytes\n"
			       "Max stack size            unlimited            unlimited            bytes\n");
	block(&b, "procs", 0, "none\n");
	hp_buf_puts(&b, "@@HP@@ DONE\n");
	snap_init(&c, 0);
	add_node(&c, NODE_A, b.buf, NULL);
	ck_run(&c, "nccl.limits");
	T_STREQ(ck_one(&c, HP_TAG_WARN, "memlock and stack are both unlimited")->section, "NC17.2");
	ck_free(&c);

	hp_buf_reset(&b);
	block(&b, "limits", 0, "Max locked memory         unlimited            unlimited            bytes\n"
			       "Max stack size            1048576              unlimited            bytes\n");
	hp_buf_puts(&b, "@@HP@@ DONE\n");
	snap_init(&c, 0);
	add_node(&c, NODE_A, b.buf, NULL);
	ck_run(&c, "nccl.limits");
	ck_one(&c, HP_TAG_FAIL, "stack is 1024 KiB for the probe's shell");
	ck_free(&c);
	hp_buf_release(&b);
}

/* Seed bug C12: a CUDA 12 build of NCCL needs driver 525 (not "any NCCL 2.x"). */
static void t_nccl_lib_driver(void)
{
	struct ck c;
	struct hp_buf b = HP_BUF_INIT(1 << 12);
	char *old = node_probe("6.1.1", "470.223.02");

	block(&b, "nccl_lib", 0, "lib /usr/local/cuda-12.4/lib64/libnccl.so.2.21.5\n"
				 "version NCCL version 2.21.5+cuda12.4\n");
	hp_buf_puts(&b, "@@HP@@ DONE\n");
	snap_init(&c, 0);
	add_node(&c, NODE_A, b.buf, old);
	ck_run(&c, "nccl.nccl-lib");
	if (!ck_count(&c, HP_TAG_WARN))
		T_FAILF("no WARN: %s", ck_dump(&c));
	else
		T_EQ(ck_one(&c, HP_TAG_WARN, "needs driver 525.00 or later; the driver is 470.223.02")->prio,
		     HP_P1);
	ck_free(&c);
	hp_buf_release(&b);
	free(old);
}

static void t_node_versions(void)
{
	struct ck c;
	char *ok = data_file("probe-p5-fixture-ok.txt"), *other;
	char *p;
	const struct hp_finding *f;

	other = xstrdup(ok);
	/* The same node with NCCL 2.18.1. */
	while ((p = strstr(other, "2.21.5")) != NULL)
		memcpy(p, "2.18.1", 6);
	snap_init(&c, 0);
	add_node(&c, NODE_A, ok, NULL);
	add_node(&c, NODE_B, other, NULL);
	ck_run(&c, "nccl.node-versions");
	f = ck_one(&c, HP_TAG_WARN, "NCCL library versions differ across the 2 probed nodes: 2 versions");
	T_ASSERT(ck_evidence_has(f, "2.18.1 on 1 node (e.g. " NODE_B ")"));
	T_STREQ(f->section, "NC10");
	ck_free(&c);

	snap_init(&c, 0);
	add_node(&c, NODE_A, ok, NULL);
	add_node(&c, NODE_B, ok, NULL);
	ck_run(&c, "nccl.node-versions");
	ck_one(&c, HP_TAG_PASS, "The 2 probed nodes run one NCCL library (2.21.5)");
	ck_free(&c);
	free(ok);
	free(other);
}

static void t_probe_output(void)
{
	struct ck c;

	snap_init(&c, 0);
	add_node(&c, NODE_A, "", NULL);
	ck_run(&c, "nccl.node-probe");
	ck_one(&c, HP_TAG_WARN, "NCCL probe gave no output on node " NODE_A);
	ck_free(&c);

	snap_init(&c, 0);
	add_node(&c, NODE_A, "@@HP@@ BEGIN nccl\nprobe=nccl\nuid=1000\n@@HP@@ END nccl 0\n", NULL);
	ck_run(&c, "nccl.node-probe");
	ck_one(&c, HP_TAG_WARN, "NCCL probe output cut short on node " NODE_A);
	ck_one(&c, HP_TAG_INFO, "NCCL probe ran as uid 1000 on node " NODE_A ", not root");
	ck_free(&c);
}

T_MAIN(T(t_fixture_nodes), T(t_fold), T(t_topology), T(t_acs_iommu), T(t_peermem),
       T(t_firewall), T(t_limits), T(t_nccl_lib_driver), T(t_node_versions), T(t_probe_output))
