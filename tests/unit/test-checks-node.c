/*
 * The on-node checks over snapshots with a "probes" entry: each check's
 * thresholds, sections and priorities on captured and sample probe
 * outputs, absent tools reported as absent, the instance type as the
 * source of expected counts, and the summary of identical results on
 * many nodes.
 */
#include <stdio.h>
#include <string.h>

#include "checks-t.h"
#include "probe-t.h"
#include "t.h"

#define NODE_A "i-0aaaaaaaaaaaaaaa1"
#define NODE_B "i-0bbbbbbbbbbbbbbb2"

/* ec2 DescribeInstanceTypes items as the collector stores them (XML names, text values). */
static const char *const types_json =
	"{\"p5.48xlarge\":{\"instanceType\":\"p5.48xlarge\","
	"\"gpuInfo\":{\"gpus\":[{\"name\":\"H100\",\"manufacturer\":\"NVIDIA\",\"count\":\"8\"}]},"
	"\"networkInfo\":{\"efaSupported\":\"true\",\"efaInfo\":{\"maximumEfaInterfaces\":\"32\"}},"
	"\"instanceStorageInfo\":{\"totalSizeInGB\":\"30400\",\"nvmeSupport\":\"required\"}},"
	"\"trn1.32xlarge\":{\"instanceType\":\"trn1.32xlarge\","
	"\"neuronInfo\":{\"neuronDevices\":[{\"count\":\"16\",\"name\":\"Trainium\"}]},"
	"\"networkInfo\":{\"efaSupported\":\"true\",\"efaInfo\":{\"maximumEfaInterfaces\":\"8\"}},"
	"\"instanceStorageInfo\":{\"totalSizeInGB\":\"7600\"}},"
	"\"m5.2xlarge\":{\"instanceType\":\"m5.2xlarge\","
	"\"networkInfo\":{\"efaSupported\":\"false\"}}}";

struct snap {
	struct ck c;
	cJSON *probes;
};

/* cluster_json: NULL for none, or a DescribeCluster reply. */
static void snap_init(struct snap *s, const char *cluster_json, int with_types)
{
	memset(s, 0, sizeof(*s));
	s->c.snap.root = cJSON_CreateObject();
	if (cluster_json)
		cJSON_AddItemToObject(s->c.snap.root, "cluster", cJSON_Parse(cluster_json));
	if (with_types)
		cJSON_AddItemToObject(s->c.snap.root, "instance_types", cJSON_Parse(types_json));
	s->probes = cJSON_AddObjectToObject(s->c.snap.root, "probes");
}

static cJSON *snap_node(struct snap *s, const char *id, const char *type, const char *state,
			const struct hp_buf *out)
{
	cJSON *e = cJSON_AddObjectToObject(s->probes, id);

	cJSON_AddStringToObject(e, "state", state);
	if (out)
		cJSON_AddStringToObject(e, "stdout", out->buf);
	cJSON_AddStringToObject(e, "stderr", "");
	cJSON_AddNumberToObject(e, "exit_code", 0);
	cJSON_AddBoolToObject(e, "truncated", 0);
	cJSON_AddNumberToObject(e, "duration_ms", 2100);
	if (type)
		cJSON_AddStringToObject(e, "instance_type", type);
	return e;
}

#define EKS_CLUSTER "{\"ClusterName\":\"c\",\"Orchestrator\":{\"Eks\":{\"ClusterArn\":\"arn:x\"}}}"
#define SLURM_CLUSTER "{\"ClusterName\":\"c\",\"Orchestrator\":{\"Slurm\":{}}}"

/* Node clock: 2026-11-29T20:40:00Z, up ten hours. */
#define NODE_BLOCK "probe=1\nepoch=1795984800\nhostname=ip-10-1-7-21\nuptime=36000.00 1000.00"

/* GPU queries of eight healthy H100s. */
static void healthy_gpus(struct hp_buf *out, int n)
{
	static const char *const bus[] = { "53", "64", "75", "86", "97", "A8", "B9", "CA" };
	int i;

	hp_buf_puts(out, "@@HP@@ BEGIN nvidia_gpu\n");
	for (i = 0; i < n; i++)
		hp_buf_printf(out, "%d, 00000000:%s:00.0, NVIDIA H100 80GB HBM3, GPU-%d, 550.127.05\n", i,
			      bus[i], i);
	hp_buf_puts(out, "@@HP@@ END nvidia_gpu 0\n@@HP@@ BEGIN nvidia_ecc\n");
	for (i = 0; i < n; i++)
		hp_buf_printf(out, "%d, Enabled, 3, 0, 10, 0\n", i);
	hp_buf_puts(out, "@@HP@@ END nvidia_ecc 0\n@@HP@@ BEGIN nvidia_clocks\n");
	for (i = 0; i < n; i++)
		hp_buf_printf(out, "%d, 35, 1980, 1980, 0x0000000000000000\n", i);
	hp_buf_puts(out, "@@HP@@ END nvidia_clocks 0\n@@HP@@ BEGIN nvidia_remap\n");
	for (i = 0; i < n; i++)
		hp_buf_printf(out, "00000000:%s:00.0, 0, 0, No, No\n", bus[i]);
	hp_buf_puts(out, "@@HP@@ END nvidia_remap 0\n@@HP@@ BEGIN nvidia_recovery\n");
	for (i = 0; i < n; i++)
		hp_buf_printf(out, "%d, None\n", i);
	hp_buf_puts(out, "@@HP@@ END nvidia_recovery 0\n");
}

/* n uverbs devices and their ports (all ACTIVE unless ports is given). */
static void efa_devices(struct hp_buf *out, int n, const char *ports)
{
	int i;

	hp_buf_puts(out, "@@HP@@ BEGIN ib_devices\nrdma_cm\n");
	for (i = 0; i < n; i++)
		hp_buf_printf(out, "uverbs%d\n", i);
	hp_buf_puts(out, "@@HP@@ END ib_devices 0\n");
	if (ports) {
		pt_block(out, "ib_ports", 0, ports);
		return;
	}
	hp_buf_puts(out, "@@HP@@ BEGIN ib_ports\n");
	for (i = 0; i < n; i++)
		hp_buf_printf(out, "rdmap%ds0 1 4: ACTIVE\n", i);
	hp_buf_puts(out, "@@HP@@ END ib_ports 0\n");
}

#define ACTIVE(u) "Id=" u ".service\nLoadState=loaded\nActiveState=active\nSubState=running\n\n"
#define MISSING(u) "Id=" u ".service\nLoadState=not-found\nActiveState=inactive\nSubState=dead\n\n"

/* A whole healthy p5 EKS node (every block the probe sends). */
static void healthy_p5(struct hp_buf *out)
{
	pt_block(out, "node", 0, NODE_BLOCK);
	pt_block(out, "df", 0,
		 "Filesystem     1024-blocks      Used   Available Capacity Mounted on\n"
		 "/dev/nvme0n1p1   104845292  41938116    62907176      41% /\n"
		 "/dev/nvme1n1     524032000 112345678   411686322      22% /opt/sagemaker\n"
		 "/dev/md0       29878222848 412345678 29465877170       2% /opt/dlami/nvme\n"
		 "tmpfs           1006560784   8123456   998437328       1% /dev/shm");
	pt_block(out, "df_inodes", 0,
		 "Filesystem Inodes IUsed IFree IUse% Mounted on\n"
		 "/dev/nvme0n1p1 52428288 611234 51817054 2% /\n"
		 "/dev/nvme1n1 262144000 1234567 260909433 1% /opt/sagemaker");
	pt_block_file(out, "mountinfo", 0, "mountinfo-hyperpod.txt");
	pt_block_file(out, "meminfo", 0, "meminfo.txt");
	pt_block(out, "hugepages", 0, "0");
	pt_block(out, "environment", 0, "FI_EFA_USE_HUGE_PAGE=0");
	pt_block(out, "systemd", 0, ACTIVE("amazon-ssm-agent") MISSING("snap.amazon-ssm-agent.amazon-ssm-agent")
		 ACTIVE("containerd") ACTIVE("kubelet") MISSING("slurmd") MISSING("slurmctld")
		 MISSING("munge") ACTIVE("chronyd") MISSING("chrony"));
	pt_block_file(out, "chrony", 0, "chronyc-tracking.txt");
	pt_block(out, "timedatectl", 0, "System clock synchronized: yes\nNTP service: active");
	pt_block(out, "dmesg", 0, "2026-11-29T12:00:01,000000+00:00 NMI watchdog: Enabled. Permanently consumes one hw-PMU counter.");
	pt_block_file(out, "pci", 0, "pci-p5.txt");
	healthy_gpus(out, 8);
	pt_block_file(out, "dcgm", 0, "dcgmi-health-healthy.json");
	pt_block(out, "neuron", 127, NULL);
	efa_devices(out, 32, NULL);
	pt_block_file(out, "fi_info", 0, "fi_info-efa.txt");
	pt_block(out, "modules", 0, "efa 163840 0 - Live 0x0\nib_uverbs 196608 2 efa, Live 0x0\nnvidia 1 0 - Live 0x0");
	pt_done(out);
}

/* One node of the given type with these blocks (node block first, DONE last). */
static void one_node(struct snap *s, const char *cluster, const char *type, const struct hp_buf *blocks)
{
	struct hp_buf out = HP_BUF_INIT(1 << 22);

	snap_init(s, cluster, 1);
	pt_block(&out, "node", 0, NODE_BLOCK);
	hp_buf_puts(&out, blocks->buf);
	pt_done(&out);
	snap_node(s, NODE_A, type, "probed", &out);
	hp_buf_release(&out);
}

static void snap_free(struct snap *s)
{
	ck_free(&s->c);
}

/* Every on-node check, in registry order (cluster checks have their own tests). */
static void run_node_checks(struct snap *s)
{
	size_t i;

	hp_facts_prepare(&s->c.snap);
	hp_findings_release(&s->c.f);
	for (i = 0; i < hp_checks_count; i++)
		if (hp_checks[i]->group == HP_GROUP_ONNODE)
			hp_check_run(hp_checks[i], &s->c.snap, &s->c.f);
}

static const struct hp_finding *expect(struct snap *s, enum hp_tag tag, enum hp_prio prio,
				       const char *section, const char *sub)
{
	const struct hp_finding *f = ck_one(&s->c, tag, sub);

	if (tag == HP_TAG_FAIL || tag == HP_TAG_WARN)
		T_EQ(f->prio, prio);
	if (section)
		T_STREQ(f->section, section);
	return f;
}

static void t_healthy_gpu_node_has_no_problem(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 22);
	struct snap s;

	snap_init(&s, EKS_CLUSTER, 1);
	healthy_p5(&out);
	snap_node(&s, NODE_A, "ml.p5.48xlarge", "probed", &out);
	run_node_checks(&s);
	CK_NO_PROBLEMS(&s.c);
	T_ASSERT(s.c.f.n >= 20);
	ck_one(&s.c, HP_TAG_PASS, "Root volume 41% used on node " NODE_A);
	ck_one(&s.c, HP_TAG_PASS, "8 of 8 GPUs visible on node " NODE_A);
	ck_one(&s.c, HP_TAG_PASS, "32 of 32 EFA devices present");
	ck_one(&s.c, HP_TAG_PASS, "NVMe instance store mounted at /opt/dlami/nvme on node " NODE_A " (/dev/md0");
	ck_one(&s.c, HP_TAG_PASS, "Time in sync on node " NODE_A " (chrony: offset +0.000012 s");
	ck_one(&s.c, HP_TAG_PASS, "containerd active");
	ck_one(&s.c, HP_TAG_PASS, "DCGM health Healthy");
	ck_one(&s.c, HP_TAG_PASS, "Row remapping healthy on 8 GPUs");
	ck_one(&s.c, HP_TAG_PASS, "No GPU Xid errors");
	ck_one(&s.c, HP_TAG_PASS, "No kernel panic");
	ck_one(&s.c, HP_TAG_PASS, "No OOM kills");
	ck_one(&s.c, HP_TAG_PASS, "libfabric EFA provider present");
	ck_one(&s.c, HP_TAG_INFO, "On-node probe output received from node " NODE_A);
	/* Every finding names its node. */
	T_STREQ(ck_one(&s.c, HP_TAG_PASS, "Root volume")->node, NODE_A);
	hp_buf_release(&out);
	snap_free(&s);
}

static void disk(struct snap *s, const char *cluster, const char *type, const char *df)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);

	pt_block(&b, "df", 0, df);
	pt_block_file(&b, "mountinfo", 0, "mountinfo-hyperpod.txt");
	one_node(s, cluster, type, &b);
	hp_buf_release(&b);
}

#define DF_HEAD "Filesystem 1024-blocks Used Available Capacity Mounted on\n"

static void t_root_thresholds(void)
{
	static const struct {
		const char *pct;
		enum hp_tag tag;
		enum hp_prio prio;
		const char *msg;
	} cases[] = {
		{ "93", HP_TAG_FAIL, HP_P0, "Root volume 93% full on node " NODE_A },
		{ "91", HP_TAG_FAIL, HP_P0, "Root volume 91% full" },
		{ "90", HP_TAG_WARN, HP_P1, "Root volume 90% used on node " NODE_A ", approaching full" },
		{ "81", HP_TAG_WARN, HP_P1, "Root volume 81% used" },
		{ "80", HP_TAG_PASS, HP_PNONE, "Root volume 80% used" },
		{ "3", HP_TAG_PASS, HP_PNONE, "Root volume 3% used" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		char df[256];
		struct snap s;
		const struct hp_finding *f;

		snprintf(df, sizeof(df), DF_HEAD "/dev/nvme0n1p1 100 50 50 %s%% /", cases[i].pct);
		disk(&s, NULL, "ml.p5.48xlarge", df);
		ck_run(&s.c, "node.disk-root");
		T_EQ(s.c.f.n, 1);
		f = expect(&s, cases[i].tag, cases[i].prio, "I.2", cases[i].msg);
		T_STREQ(f->node, NODE_A);
		snap_free(&s);
	}
}

static void t_root_unknown_is_not_a_failure(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	struct snap s;

	pt_block(&b, "df", 127, NULL);
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.disk-root");
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "Root volume usage unknown on node " NODE_A ": df is not installed");
	T_EQ(s.c.f.n, 1);
	snap_free(&s);
	hp_buf_release(&b);
}

static void t_sagemaker_volume(void)
{
	struct snap s;

	disk(&s, NULL, "ml.p5.48xlarge", DF_HEAD "/dev/nvme1n1 100 95 5 95% /opt/sagemaker");
	ck_run(&s.c, "node.disk-sagemaker");
	expect(&s, HP_TAG_FAIL, HP_P1, "I.6", "/opt/sagemaker 95% full on node " NODE_A);
	snap_free(&s);

	disk(&s, NULL, "ml.p5.48xlarge", DF_HEAD "/dev/nvme1n1 100 85 15 85% /opt/sagemaker");
	ck_run(&s.c, "node.disk-sagemaker");
	expect(&s, HP_TAG_WARN, HP_P2, "I.6", "/opt/sagemaker 85% used");
	snap_free(&s);

	/* mountinfo without /opt/sagemaker: not a volume of its own. */
	{
		struct hp_buf b = HP_BUF_INIT(1 << 20);

		pt_block_file(&b, "df", 0, "df-P.txt");
		pt_block_file(&b, "mountinfo", 0, "mountinfo.txt");
		one_node(&s, NULL, NULL, &b);
		ck_run(&s.c, "node.disk-sagemaker");
		expect(&s, HP_TAG_INFO, HP_PNONE, "", "/opt/sagemaker is not a separate volume on node " NODE_A);
		T_EQ(s.c.f.n, 1);
		snap_free(&s);
		hp_buf_release(&b);
	}
}

static void t_inodes(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	struct snap s;

	pt_block_file(&b, "df_inodes", 0, "df-Pi-hyperpod.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.inodes");
	expect(&s, HP_TAG_FAIL, HP_P1, "I.4", "Inode exhaustion 93% on / on node " NODE_A " (48611234 of 52428288");
	/* /opt/sagemaker at 1%: no line of its own. */
	T_EQ(s.c.f.n, 1);
	snap_free(&s);
	hp_buf_release(&b);
}

static void t_shm(void)
{
	static const struct {
		const char *row;
		enum hp_tag tag;
		enum hp_prio prio;
		const char *msg;
	} cases[] = {
		{ "tmpfs 10485760 10276044 209716 98% /dev/shm", HP_TAG_FAIL, HP_P1, "/dev/shm 98% full (size 10.0 GiB)" },
		{ "tmpfs 10485760 8912896 1572864 85% /dev/shm", HP_TAG_WARN, HP_P1, "/dev/shm 85% used (size 10.0 GiB)" },
		{ "tmpfs 65536 0 65536 0% /dev/shm", HP_TAG_WARN, HP_P1, "/dev/shm is only 64.0 MiB on node" },
		{ "tmpfs 10485760 0 10485760 0% /dev/shm", HP_TAG_PASS, HP_PNONE, "/dev/shm 0% used (size 10.0 GiB)" },
	};
	struct snap s;
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		char df[256];

		snprintf(df, sizeof(df), DF_HEAD "%s", cases[i].row);
		disk(&s, NULL, NULL, df);
		ck_run(&s.c, "node.shm");
		expect(&s, cases[i].tag, cases[i].prio, "I.1", cases[i].msg);
		T_EQ(s.c.f.n, 1);
		snap_free(&s);
	}
	{
		struct hp_buf b = HP_BUF_INIT(1 << 20);

		pt_block(&b, "df", 0, DF_HEAD "/dev/x 100 1 99 1% /");
		pt_block(&b, "mountinfo", 0, "1 0 8:1 / / rw - ext4 /dev/x rw");
		one_node(&s, NULL, NULL, &b);
		ck_run(&s.c, "node.shm");
		expect(&s, HP_TAG_WARN, HP_P1, "I.1", "/dev/shm is not mounted on node " NODE_A);
		snap_free(&s);
		hp_buf_release(&b);
	}
}

static void nvme_case(struct snap *s, const char *type, const char *mountinfo_file)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);

	pt_block_file(&b, "df", 0, "df-P-hyperpod.txt");
	pt_block_file(&b, "mountinfo", 0, mountinfo_file);
	one_node(s, NULL, type, &b);
	hp_buf_release(&b);
}

static void t_nvme_from_instance_type(void)
{
	struct snap s;

	/* The Debian mountinfo has no /opt/dlami/nvme, though df (a stale listing) would. */
	nvme_case(&s, "ml.p5.48xlarge", "mountinfo.txt");
	ck_run(&s.c, "node.nvme");
	expect(&s, HP_TAG_WARN, HP_P1, "I.7",
	       "NVMe instance store not mounted on node " NODE_A " (ml.p5.48xlarge): /opt/dlami/nvme is not a mount point");
	snap_free(&s);

	nvme_case(&s, "ml.p5.48xlarge", "mountinfo-hyperpod.txt");
	ck_run(&s.c, "node.nvme");
	expect(&s, HP_TAG_PASS, HP_PNONE, "I.7", "NVMe instance store mounted at /opt/dlami/nvme on node " NODE_A " (/dev/md0, 27.8 TiB, 2% used)");
	snap_free(&s);

	/* No instance store on the type: nothing to expect. */
	nvme_case(&s, "ml.m5.2xlarge", "mountinfo.txt");
	ck_run(&s.c, "node.nvme");
	T_EQ(s.c.f.n, 0);
	snap_free(&s);

	/* Type unknown: what is there, no verdict. */
	nvme_case(&s, "ml.x9.fictional", "mountinfo.txt");
	ck_run(&s.c, "node.nvme");
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "/opt/dlami/nvme is not mounted on node " NODE_A " (no instance type data");
	snap_free(&s);
}

static void t_memory(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	struct snap s;

	pt_block(&b, "meminfo", 0, "MemTotal: 2097152000 kB\nMemAvailable: 20971520 kB\nHugePages_Total: 0");
	pt_block(&b, "environment", 1, NULL);
	efa_devices(&b, 32, NULL);
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.memory");
	expect(&s, HP_TAG_WARN, HP_P2, "I.3", "Memory nearly exhausted on node " NODE_A ": 20.0 GiB of 2.0 TiB available (1.0%)");
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "FI_EFA_USE_HUGE_PAGE not set to 0 in /etc/environment on node " NODE_A);
	snap_free(&s);
	hp_buf_release(&b);

	hp_buf_init(&b, 1 << 20);
	pt_block_file(&b, "meminfo", 0, "meminfo.txt");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.memory");
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "Memory on node " NODE_A ": 23.5 GiB total, 22.7 GiB available (97%)");
	T_EQ(s.c.f.n, 1);
	snap_free(&s);
	hp_buf_release(&b);
}

static void kmsg_node(struct snap *s, const char *cluster, const char *type, const char *file,
		      const char *epoch_line)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	struct hp_buf out = HP_BUF_INIT(1 << 22);

	snap_init(s, cluster, 1);
	pt_block(&out, "node", 0, epoch_line);
	pt_block_file(&out, "dmesg", 0, file);
	hp_buf_puts(&out, b.buf);
	pt_done(&out);
	snap_node(s, NODE_A, type, "probed", &out);
	hp_buf_release(&out);
	hp_buf_release(&b);
}

static void t_oom(void)
{
	const struct hp_finding *f;
	struct snap s;

	kmsg_node(&s, NULL, NULL, "dmesg-kernel-faults.txt", NODE_BLOCK);
	ck_run(&s.c, "node.oom");
	f = expect(&s, HP_TAG_FAIL, HP_P1, "I.3",
		   "OOM events on node " NODE_A ": 2 processes killed since boot (1 by a container memory limit, 1 system-wide), latest 2026-11-29T19:47:30Z: pt_main_thread");
	T_EQ(ck_evidence_len(f), 2);
	T_ASSERT(ck_evidence_has(f, "Memory cgroup out of memory: Killed process 93811 (python3)"));
	snap_free(&s);

	/* Two days later, same boot: history, not an emergency. */
	kmsg_node(&s, NULL, NULL, "dmesg-kernel-faults.txt", "epoch=1796157600\nuptime=208800.0 1.0");
	ck_run(&s.c, "node.oom");
	expect(&s, HP_TAG_WARN, HP_P2, "I.3", "OOM events on node " NODE_A " earlier in this boot: 2 processes killed");
	snap_free(&s);

	kmsg_node(&s, NULL, NULL, "dmesg-iso-boot.txt", NODE_BLOCK);
	ck_run(&s.c, "node.oom");
	expect(&s, HP_TAG_PASS, HP_PNONE, "I.3", "No OOM kills on node " NODE_A " since boot");
	snap_free(&s);
}

static void t_kernel(void)
{
	const struct hp_finding *f;
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	struct snap s;

	kmsg_node(&s, NULL, NULL, "dmesg-kernel-faults.txt", NODE_BLOCK);
	ck_run(&s.c, "node.kernel");
	f = expect(&s, HP_TAG_FAIL, HP_P0, "N.1",
		   "Kernel panic / watchdog on node " NODE_A ": soft lockup \xC3\x97" "1, hung task \xC3\x97" "1, machine check \xC3\x97" "1 since boot, latest 2026-11-29T20:03:10Z");
	T_ASSERT(ck_evidence_has(f, "watchdog: BUG: soft lockup - CPU#17 stuck for 23s!"));
	T_ASSERT(ck_evidence_has(f, "INFO: task jbd2/nvme0n1p1-8:612 blocked for more than 122 seconds."));
	/* The benign boot line is never evidence. */
	T_ASSERT(!ck_evidence_has(f, "NMI watchdog: Enabled"));
	snap_free(&s);

	/* The benign "NMI watchdog" boot lines alone pass. */
	kmsg_node(&s, NULL, NULL, "dmesg-iso-boot.txt", NODE_BLOCK);
	ck_run(&s.c, "node.kernel");
	expect(&s, HP_TAG_PASS, HP_PNONE, NULL, "No kernel panic, lockup, hung-task or hardware-error messages on node " NODE_A);
	T_EQ(s.c.f.n, 1);
	snap_free(&s);

	/* Only a hung task: P1. */
	pt_block(&b, "dmesg", 0, "2026-11-29T19:52:09,000112+00:00 INFO: task kworker/u64:2:612 blocked for more than 122 seconds.");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.kernel");
	expect(&s, HP_TAG_FAIL, HP_P1, "N.1", "Kernel hung-task or machine-check messages on node " NODE_A ": hung task \xC3\x97" "1");
	snap_free(&s);
	hp_buf_release(&b);

	/* Unreadable kernel log: say so, judge nothing. */
	hp_buf_init(&b, 1 << 20);
	pt_block(&b, "dmesg", 1, "dmesg: read kernel buffer failed: Operation not permitted");
	pt_block(&b, "journal", 127, NULL);
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.kernel");
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "Kernel messages unreadable on node " NODE_A " (dmesg: read kernel buffer failed: Operation not permitted)");
	ck_run(&s.c, "node.oom");
	T_EQ(s.c.f.n, 0);
	snap_free(&s);
	hp_buf_release(&b);
}

static void time_node(struct snap *s, const char *chrony_file, int chrony_rc, const char *timedatectl,
		      int td_rc, const char *systemd)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);

	if (chrony_file)
		pt_block_file(&b, "chrony", chrony_rc, chrony_file);
	else
		pt_block(&b, "chrony", chrony_rc, NULL);
	pt_block(&b, "timedatectl", td_rc, timedatectl);
	if (systemd)
		pt_block(&b, "systemd", 0, systemd);
	one_node(s, NULL, NULL, &b);
	hp_buf_release(&b);
}

static void t_time(void)
{
	struct snap s;

	time_node(&s, "chronyc-tracking.txt", 0, NULL, 127, NULL);
	ck_run(&s.c, "node.time");
	expect(&s, HP_TAG_PASS, HP_PNONE, "I.5", "Time in sync on node " NODE_A " (chrony: offset +0.000012 s, stratum 4, leap status Normal)");
	snap_free(&s);

	time_node(&s, "chronyc-tracking-drift.txt", 0, NULL, 127, NULL);
	ck_run(&s.c, "node.time");
	expect(&s, HP_TAG_FAIL, HP_P1, "I.5", "Clock 2.482 s behind NTP time on node " NODE_A);
	snap_free(&s);

	time_node(&s, "chronyc-tracking-unsync.txt", 0, NULL, 127, NULL);
	ck_run(&s.c, "node.time");
	expect(&s, HP_TAG_FAIL, HP_P1, "I.5", "Time sync not healthy on node " NODE_A ": chrony reports 'Not synchronised' (stratum 0)");
	snap_free(&s);

	/* chronyc cannot reach chronyd, and chronyd is stopped. */
	time_node(&s, "chronyc-nodaemon.txt", 1, NULL, 127,
		  "Id=chronyd.service\nLoadState=loaded\nActiveState=inactive\nSubState=dead\n");
	ck_run(&s.c, "node.time");
	expect(&s, HP_TAG_FAIL, HP_P1, "I.5", "chronyd is not running (chronyc: 506 Cannot talk to daemon)");
	snap_free(&s);

	/* No chrony; timedatectl says not synchronised: unhealthy, no number. */
	time_node(&s, NULL, 127, "System clock synchronized: no\nNTP service: inactive", 0, NULL);
	ck_run(&s.c, "node.time");
	expect(&s, HP_TAG_WARN, HP_P1, "I.5", "timedatectl reports the clock is not synchronised");
	snap_free(&s);

	/* Neither tool answers: unknown, never unhealthy. */
	time_node(&s, NULL, 127, "Failed to connect to bus: Host is down", 1, NULL);
	ck_run(&s.c, "node.time");
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "Time sync state unknown on node " NODE_A " (chronyc not installed; timedatectl Failed to connect to bus: Host is down)");
	T_EQ(ck_count(&s.c, HP_TAG_FAIL) + ck_count(&s.c, HP_TAG_WARN), 0);
	snap_free(&s);
}

static void services_node(struct snap *s, const char *cluster, const char *file, int rc)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);

	pt_block_file(&b, "systemd", rc, file);
	one_node(s, cluster, "ml.p5.48xlarge", &b);
	hp_buf_release(&b);
}

static void t_services_by_orchestrator(void)
{
	struct snap s;

	services_node(&s, EKS_CLUSTER, "systemctl-show-eks.txt", 0);
	ck_run(&s.c, "node.containerd");
	expect(&s, HP_TAG_FAIL, HP_P0, "M.2", "containerd inactive on node " NODE_A " (ActiveState failed)");
	ck_run(&s.c, "node.ssm-agent");
	expect(&s, HP_TAG_PASS, HP_PNONE, "K.6", "amazon-ssm-agent active on node " NODE_A);
	/* Not a Slurm cluster: munge and slurmd are not judged. */
	ck_run(&s.c, "node.slurm");
	T_EQ(s.c.f.n, 0);
	snap_free(&s);

	/* The same node in a Slurm cluster: containerd does not matter, munge does. */
	services_node(&s, SLURM_CLUSTER, "systemctl-show-eks.txt", 0);
	ck_run(&s.c, "node.containerd");
	T_EQ(s.c.f.n, 0);
	ck_run(&s.c, "node.slurm");
	expect(&s, HP_TAG_WARN, HP_P1, "H.6", "munge is not installed on Slurm node " NODE_A);
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "No slurmd or slurmctld unit");
	snap_free(&s);

	/* No cluster at all (hpnode node): kubelet says EKS. */
	services_node(&s, NULL, "systemctl-show-eks.txt", 0);
	ck_run(&s.c, "node.containerd");
	expect(&s, HP_TAG_FAIL, HP_P0, "M.2", "containerd inactive");
	snap_free(&s);

	/* No systemd: one INFO, no verdicts. */
	services_node(&s, EKS_CLUSTER, "systemctl-no-systemd.txt", 1);
	ck_run(&s.c, "node.ssm-agent");
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "Services not checked on node " NODE_A ": System has not been booted with systemd");
	ck_run(&s.c, "node.containerd");
	T_EQ(s.c.f.n, 0);
	snap_free(&s);
}

static void t_slurm_units(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	struct snap s;

	pt_block(&b, "systemd", 0,
		 "Id=slurmd.service\nLoadState=loaded\nActiveState=failed\nSubState=failed\n\n"
		 "Id=munge.service\nLoadState=loaded\nActiveState=inactive\nSubState=dead\n\n"
		 "Id=slurmctld.service\nLoadState=not-found\nActiveState=inactive\nSubState=dead\n");
	one_node(&s, SLURM_CLUSTER, NULL, &b);
	ck_run(&s.c, "node.slurm");
	expect(&s, HP_TAG_FAIL, HP_P0, "H.6", "munge inactive on node " NODE_A " (ActiveState inactive)");
	expect(&s, HP_TAG_FAIL, HP_P1, "H.1", "slurmd inactive on node " NODE_A " (ActiveState failed)");
	snap_free(&s);
	hp_buf_release(&b);
}

static void gpu_node(struct snap *s, const char *type, const char *gpus_file, int ngpus_healthy,
		     const char *extra)
{
	struct hp_buf b = HP_BUF_INIT(1 << 22);

	if (gpus_file)
		pt_block_file(&b, "nvidia_gpu", 0, gpus_file);
	else
		healthy_gpus(&b, ngpus_healthy);
	if (extra)
		hp_buf_puts(&b, extra);
	one_node(s, NULL, type, &b);
	hp_buf_release(&b);
}

static void t_gpu_count(void)
{
	const struct hp_finding *f;
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	struct snap s;

	gpu_node(&s, "ml.p5.48xlarge", "nvidia-smi-gpus-lost.txt", 0, NULL);
	ck_run(&s.c, "node.gpu-count");
	f = expect(&s, HP_TAG_FAIL, HP_P0, "G.1", "GPU count 7 of 8 on node " NODE_A " (ml.p5.48xlarge has 8): 1 GPU missing");
	T_ASSERT(ck_evidence_has(f, "Unable to determine the device handle for GPU0000:A8:00.0"));
	snap_free(&s);

	gpu_node(&s, "ml.p5.48xlarge", NULL, 8, NULL);
	ck_run(&s.c, "node.gpu-count");
	expect(&s, HP_TAG_PASS, HP_PNONE, "G.1", "8 of 8 GPUs visible on node " NODE_A);
	snap_free(&s);

	/* A GPU type without nvidia-smi. */
	pt_block(&b, "nvidia_gpu", 127, NULL);
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-count");
	expect(&s, HP_TAG_FAIL, HP_P0, "G.1", "nvidia-smi not found on node " NODE_A " (ml.p5.48xlarge has 8 GPUs)");
	snap_free(&s);

	/* A CPU type without nvidia-smi: nothing to say. */
	one_node(&s, NULL, "ml.m5.2xlarge", &b);
	ck_run(&s.c, "node.gpu-count");
	T_EQ(s.c.f.n, 0);
	snap_free(&s);

	/* Type unknown, no GPU: absent, not failed. */
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.gpu-count");
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "No NVIDIA GPU on node " NODE_A " (nvidia-smi not installed)");
	snap_free(&s);
	hp_buf_release(&b);

	/* Type unknown: the PCI bus says how many GPUs there should be. */
	hp_buf_init(&b, 1 << 20);
	pt_block_file(&b, "pci", 0, "pci-p5.txt");
	pt_block_file(&b, "nvidia_gpu", 0, "nvidia-smi-gpus-lost.txt");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.gpu-count");
	expect(&s, HP_TAG_FAIL, HP_P0, "G.1", "GPU count 7 of 8 on node " NODE_A " (8 on the PCI bus)");
	snap_free(&s);
	hp_buf_release(&b);

	hp_buf_init(&b, 1 << 20);
	pt_block(&b, "nvidia_gpu", 124, NULL);
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-count");
	expect(&s, HP_TAG_FAIL, HP_P0, "G.1", "nvidia-smi did not answer within 10 s on node " NODE_A);
	snap_free(&s);
	hp_buf_release(&b);
}

static void t_xid_classes(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 22);
	const struct hp_finding *f;
	struct snap s;

	healthy_gpus(&b, 8);
	pt_block_file(&b, "dmesg", 0, "dmesg-gpu-faults.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-xid");
	/* Application Xids inform; they are not hardware failures. */
	f = expect(&s, HP_TAG_INFO, HP_PNONE, "", "Application Xid 13 (Graphics Engine Exception) on node " NODE_A ": 2 since boot on 0000:53:00");
	T_EQ(f->prio, HP_PNONE);
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "Application Xid 45 (Preemptive cleanup)");
	f = expect(&s, HP_TAG_FAIL, HP_P0, "G.1.c",
		   "GPU Xid 79 (GPU has fallen off the bus) on node " NODE_A ": 1 since boot on 0000:a8:00, latest 2026-11-29T20:12:47Z; reboot the node; replace it if it recurs");
	T_ASSERT(ck_evidence_has(f, "NVRM: Xid (PCI:0000:a8:00): 79"));
	expect(&s, HP_TAG_FAIL, HP_P0, "G.1.d", "GPU recovery action 'Node Reboot Required' required on node " NODE_A " (Xid 154 on 0000:97:00");
	T_EQ(ck_count(&s.c, HP_TAG_FAIL), 2);
	T_EQ(ck_count(&s.c, HP_TAG_WARN), 0);
	snap_free(&s);
	hp_buf_release(&b);

	/* A code hpnode does not know warns; 94 is contained (P1); 48 fails. */
	hp_buf_init(&b, 1 << 22);
	healthy_gpus(&b, 8);
	pt_block(&b, "dmesg", 0,
		 "2026-11-29T19:00:00,0+00:00 NVRM: Xid (PCI:0000:53:00): 999, pid=1, some new error\n"
		 "2026-11-29T19:00:01,0+00:00 NVRM: Xid (PCI:0000:64:00): 94, pid=2, Contained: SM (0x1)\n"
		 "2026-11-29T19:00:02,0+00:00 NVRM: Xid (PCI:0000:64:00): 48, pid=2, DBE (0x1)");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-xid");
	expect(&s, HP_TAG_WARN, HP_P1, "G.1.c", "GPU Xid 999 on node " NODE_A ": 1 since boot on 0000:53:00");
	expect(&s, HP_TAG_WARN, HP_P1, "G.1.c", "GPU Xid 94 (Contained memory error)");
	expect(&s, HP_TAG_FAIL, HP_P0, "G.1.c", "GPU Xid 48 (Double Bit ECC Error)");
	snap_free(&s);
	hp_buf_release(&b);

	/* No Xid on a GPU node passes; a CPU node is not judged. */
	hp_buf_init(&b, 1 << 22);
	healthy_gpus(&b, 8);
	pt_block_file(&b, "dmesg", 0, "dmesg-iso-boot.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-xid");
	expect(&s, HP_TAG_PASS, HP_PNONE, "G.1.c", "No GPU Xid errors on node " NODE_A " since boot");
	snap_free(&s);
	hp_buf_release(&b);
	hp_buf_init(&b, 1 << 22);
	pt_block(&b, "nvidia_gpu", 127, NULL);
	pt_block_file(&b, "dmesg", 0, "dmesg-gpu-faults.txt");
	one_node(&s, NULL, "ml.m5.2xlarge", &b);
	ck_run(&s.c, "node.gpu-xid");
	T_EQ(s.c.f.n, 0);
	snap_free(&s);
	hp_buf_release(&b);
}

/* The driver's texts without an Xid line, and PCIe AER, are hardware findings (G.1). */
static void t_gpu_driver_texts(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 22);
	const struct hp_finding *f;
	struct snap s;

	healthy_gpus(&b, 8);
	pt_block_file(&b, "dmesg", 0, "dmesg-nvrm-offbus-noxid.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-xid");
	f = expect(&s, HP_TAG_FAIL, HP_P0, "G.1",
		   "GPU fallen off the bus on node " NODE_A ": the NVIDIA driver reports 0000:b3:00.0 lost (1 message since boot");
	T_ASSERT(ck_evidence_has(f, "fallen off the bus and is not responding to commands"));
	expect(&s, HP_TAG_FAIL, HP_P0, "G.1", "NVIDIA driver could not initialise a GPU on node " NODE_A " (1 RmInitAdapter or probe failure");
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	ck_run(&s.c, "node.kernel");
	/* Not a clean kernel log either. */
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	snap_free(&s);
	hp_buf_release(&b);

	hp_buf_init(&b, 1 << 22);
	healthy_gpus(&b, 8);
	pt_block_file(&b, "dmesg", 0, "dmesg-nvrm-rminit.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-xid");
	expect(&s, HP_TAG_FAIL, HP_P0, "G.1", "NVIDIA driver could not initialise 0000:01:00.0 on node " NODE_A " (4 RmInitAdapter or probe failures");
	T_EQ(ck_count(&s.c, HP_TAG_FAIL), 1);
	snap_free(&s);
	hp_buf_release(&b);

	/* With Xid 79 the driver's own line is the same event: one finding. */
	hp_buf_init(&b, 1 << 22);
	healthy_gpus(&b, 8);
	pt_block_file(&b, "dmesg", 0, "dmesg-gpu-faults.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-xid");
	T_EQ(ck_count_msg(&s.c, HP_TAG_FAIL, "fallen off the bus"), 1);
	snap_free(&s);
	hp_buf_release(&b);

	hp_buf_init(&b, 1 << 22);
	pt_block_file(&b, "dmesg", 0, "dmesg-aer-uncorrected.txt");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.kernel");
	f = expect(&s, HP_TAG_FAIL, HP_P0, "G.1", "Uncorrectable PCIe errors on node " NODE_A ": 1 AER report since boot from 0000:00:03.0");
	T_ASSERT(ck_evidence_has(f, "PCIe Bus Error: severity=Uncorrected (Fatal)"));
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	snap_free(&s);
	hp_buf_release(&b);

	/* Corrected AER reports are not failures. */
	hp_buf_init(&b, 1 << 22);
	pt_block_file(&b, "dmesg", 0, "dmesg-aer-corrected.txt");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.kernel");
	expect(&s, HP_TAG_PASS, HP_PNONE, NULL, "No kernel panic, lockup, hung-task or hardware-error messages");
	snap_free(&s);
	hp_buf_release(&b);
}

/* One node with one dmesg sample (and the GPUs of a p5 when gpus). */
static void dmesg_node(struct snap *s, const char *file, int gpus)
{
	struct hp_buf b = HP_BUF_INIT(1 << 22);

	if (gpus)
		healthy_gpus(&b, 8);
	pt_block_file(&b, "dmesg", 0, file);
	one_node(s, NULL, gpus ? "ml.p5.48xlarge" : NULL, &b);
	hp_buf_release(&b);
}

/* Storage failures in the kernel log: FAIL naming the device, never a clean kernel log (I.8). */
static void t_storage_errors(void)
{
	const struct hp_finding *f;
	struct snap s;

	dmesg_node(&s, "dmesg-nvme-io-error-journal.txt", 0);
	ck_run(&s.c, "node.storage-errors");
	f = expect(&s, HP_TAG_FAIL, HP_P0, "I.8", "Storage failure on node " NODE_A
		   ": a filesystem stopped taking writes after errors (9 kernel messages since boot");
	T_ASSERT(strstr(f->message, "nvme0n1 (I/O errors)") != NULL);
	T_ASSERT(strstr(f->message, "nvme0n1p1 (ext4 journal aborted)") != NULL);
	T_ASSERT(ck_evidence_has(f, "Aborting journal on device nvme0n1p1-8."));
	ck_run(&s.c, "node.kernel");
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	snap_free(&s);

	dmesg_node(&s, "dmesg-ext4-remount-ro.txt", 0);
	ck_run(&s.c, "node.storage-errors");
	f = expect(&s, HP_TAG_FAIL, HP_P0, "I.8", "Storage failure on node " NODE_A);
	T_ASSERT(strstr(f->message, "dm-25 (ext4 journal aborted, remounted read-only)") != NULL);
	snap_free(&s);

	/* NVMe timeouts and a controller removed: the device is failing (P1). */
	dmesg_node(&s, "dmesg-nvme-timeout-reset.txt", 0);
	ck_run(&s.c, "node.storage-errors");
	f = expect(&s, HP_TAG_FAIL, HP_P1, "I.8", "Storage errors on node " NODE_A ": 4 kernel messages since boot");
	T_ASSERT(strstr(f->message, "nvme2 (NVMe timeouts/resets)") != NULL);
	snap_free(&s);

	dmesg_node(&s, "dmesg-xfs-shutdown-log.txt", 0);
	ck_run(&s.c, "node.storage-errors");
	f = expect(&s, HP_TAG_FAIL, HP_P0, "I.8", "Storage failure on node " NODE_A);
	T_ASSERT(strstr(f->message, "sdb6 (XFS shut down)") != NULL);
	snap_free(&s);

	/* Benign look-alikes pass, and so does the kernel log. */
	dmesg_node(&s, "dmesg-storage-benign.txt", 0);
	ck_run(&s.c, "node.storage-errors");
	expect(&s, HP_TAG_PASS, HP_PNONE, "I.8", "No block I/O errors, NVMe resets");
	ck_run(&s.c, "node.kernel");
	expect(&s, HP_TAG_PASS, HP_PNONE, NULL, "No kernel panic, lockup, hung-task or hardware-error messages");
	snap_free(&s);
}

/* Read-only root, NVMe and FSx mounts (the superblock's flag too) are FAILs (I.8). */
static void t_readonly_mounts(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	const struct hp_finding *f;
	struct snap s;

	pt_block_file(&b, "mountinfo", 0, "mountinfo-hyperpod-readonly.txt");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.readonly");
	f = expect(&s, HP_TAG_FAIL, HP_P0, "I.8", "Root filesystem read-only on node " NODE_A " (/dev/nvme0n1p1, ext4): the filesystem itself is read-only");
	T_STREQ(f->node, NODE_A);
	expect(&s, HP_TAG_FAIL, HP_P1, "I.8", "FSx for Lustre mount /fsx read-only on node " NODE_A);
	/* /mnt/with space is a tmpfs mounted ro on purpose: not judged. */
	T_EQ(ck_count(&s.c, HP_TAG_FAIL), 2);
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	snap_free(&s);
	hp_buf_release(&b);

	hp_buf_init(&b, 1 << 20);
	pt_block_file(&b, "mountinfo", 0, "mountinfo-hyperpod.txt");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.readonly");
	expect(&s, HP_TAG_PASS, HP_PNONE, "I.8", "No read-only root, NVMe or FSx mount on node " NODE_A " (5 mounts checked)");
	snap_free(&s);
	hp_buf_release(&b);

	/* No mountinfo: nothing is claimed. */
	hp_buf_init(&b, 1 << 20);
	pt_block(&b, "meminfo", 0, "MemTotal: 100 kB");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.readonly");
	T_EQ(s.c.f.n, 0);
	snap_free(&s);
	hp_buf_release(&b);
}

/* PCIe AER in the Linux 6.x wording, and its corrected form as a false-FAIL trap. */
static void t_aer_new_wording(void)
{
	const struct hp_finding *f;
	struct snap s;

	dmesg_node(&s, "dmesg-aer-uncorrectable-6x.txt", 0);
	ck_run(&s.c, "node.kernel");
	f = expect(&s, HP_TAG_FAIL, HP_P0, "G.1", "Uncorrectable PCIe errors on node " NODE_A ": 1 AER report since boot from 0000:80:1b.4");
	T_ASSERT(ck_evidence_has(f, "severity=Uncorrectable (Non-Fatal)"));
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	snap_free(&s);

	dmesg_node(&s, "dmesg-aer-correctable-6x.txt", 0);
	ck_run(&s.c, "node.kernel");
	expect(&s, HP_TAG_PASS, HP_PNONE, NULL, "No kernel panic, lockup, hung-task or hardware-error messages");
	T_EQ(ck_count(&s.c, HP_TAG_FAIL), 0);
	snap_free(&s);
}

/* NVLink Xids judged by the driver's words before the code's class (G.1.c). */
static void t_xid_driver_words(void)
{
	const struct hp_finding *f;
	struct snap s;

	dmesg_node(&s, "dmesg-xid-nvlink-words.txt", 1);
	ck_run(&s.c, "node.gpu-xid");
	/* A corrected NVLink error is no P0 "reboot/replace". */
	f = expect(&s, HP_TAG_WARN, HP_P2, "G.1.c", "GPU Xid 144 (NVLink error) on node " NODE_A
		   ": 1 since boot on 0000:01:00, latest time unknown; the driver reports it Nonfatal");
	T_ASSERT(ck_evidence_has(f, "SAW_MVB Nonfatal"));
	expect(&s, HP_TAG_WARN, HP_P2, "G.1.c", "GPU Xid 145 (NVLink error) on node " NODE_A);
	f = expect(&s, HP_TAG_FAIL, HP_P0, "G.1.c", "GPU Xid 149 (NVLink error) on node " NODE_A
		   ": 2 since boot on 0000:00:00, 0019:01:00");
	T_ASSERT(strstr(f->message, "the driver reports it Fatal") != NULL);
	T_EQ(ck_count(&s.c, HP_TAG_FAIL), 1);
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	snap_free(&s);

	/* The B200 report: Xid 145 Nonfatal beside an Xid 137 without a verdict. */
	dmesg_node(&s, "dmesg-xid-nvlink-nonfatal-b200.txt", 1);
	ck_run(&s.c, "node.gpu-xid");
	expect(&s, HP_TAG_WARN, HP_P2, "G.1.c", "GPU Xid 145 (NVLink error) on node " NODE_A);
	expect(&s, HP_TAG_WARN, HP_P1, "G.1.c", "GPU Xid 137 on node " NODE_A);
	T_EQ(ck_count(&s.c, HP_TAG_FAIL), 0);
	snap_free(&s);

	/* Xid 45 caused by NVLink Xids whose own lines are not in the log: no INFO shrug. */
	dmesg_node(&s, "dmesg-xid-caused-by-previous.txt", 1);
	ck_run(&s.c, "node.gpu-xid");
	f = expect(&s, HP_TAG_WARN, HP_P1, "G.1.c", "Xid 45 (Preemptive cleanup) on node " NODE_A
		   ": 5 since boot on 0000:ed:00, 0000:ba:00, 0000:97:00");
	T_ASSERT(strstr(f->message, "caused by a previous Xid 145 (NVLink error), whose own line is not in the kernel log") != NULL);
	expect(&s, HP_TAG_WARN, HP_P1, "G.1.c", "Xid 45 (Preemptive cleanup) on node " NODE_A ": 2 since boot on 0000:dc:00");
	T_EQ(ck_count(&s.c, HP_TAG_INFO), 0);
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	snap_free(&s);
}

/* With the cause's line in the log, the Xid 45 points at it. */
static void t_xid_caused_with_cause(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 22);
	struct snap s;
	char *a = pt_file("dmesg-xid-nvlink-words.txt"), *c = pt_file("dmesg-xid-caused-by-previous.txt");

	healthy_gpus(&b, 8);
	hp_buf_puts(&b, "@@HP@@ BEGIN dmesg\n");
	hp_buf_puts(&b, a);
	hp_buf_puts(&b, c);
	hp_buf_puts(&b, "@@HP@@ END dmesg 0\n");
	one_node(&s, NULL, "ml.p6-b200.48xlarge", &b);
	ck_run(&s.c, "node.gpu-xid");
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "Xid 45 (Preemptive cleanup) on node " NODE_A
	       ": 2 since boot on 0000:dc:00, latest time unknown; the driver reports it caused by the previous Xid 149 (NVLink error): judge by that one");
	expect(&s, HP_TAG_FAIL, HP_P0, "G.1.c", "GPU Xid 149 (NVLink error)");
	snap_free(&s);
	hp_buf_release(&b);
	free(a);
	free(c);
}

/* NVSwitch SXids by the driver's word; no word is no all-clear (G.5). */
static void t_nvswitch_sxid(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 22);
	const struct hp_finding *f;
	struct snap s;

	dmesg_node(&s, "dmesg-sxid-nonfatal.txt", 1);
	ck_run(&s.c, "node.nvswitch");
	f = expect(&s, HP_TAG_WARN, HP_P2, "G.5", "NVSwitch SXid 22013 on node " NODE_A
		   " (switch 0000:04:00.0): the driver reports it Non-fatal (6 lines since boot");
	T_ASSERT(ck_evidence_has(f, "Non-fatal, Link 45 Minion Link DLREQ interrupt"));
	T_EQ(s.c.f.n, 1);
	ck_run(&s.c, "node.kernel");
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	snap_free(&s);

	dmesg_node(&s, "dmesg-sxid-fatal.txt", 1);
	ck_run(&s.c, "node.nvswitch");
	expect(&s, HP_TAG_FAIL, HP_P0, "G.5", "NVSwitch SXid 22013 on node " NODE_A " (switch 0000:04:00.0): the driver reports it Fatal");
	snap_free(&s);

	dmesg_node(&s, "dmesg-sxid-data-only.txt", 1);
	ck_run(&s.c, "node.nvswitch");
	expect(&s, HP_TAG_WARN, HP_P1, "G.5", "NVSwitch SXid 12028 on node " NODE_A " (switch 0000:84:00.0): 1 line since boot");
	snap_free(&s);

	/* An NVSwitch type with a clean log passes; a g5 (no NVSwitch) is not judged. */
	dmesg_node(&s, "dmesg-iso-boot.txt", 1);
	ck_run(&s.c, "node.nvswitch");
	expect(&s, HP_TAG_PASS, HP_PNONE, "G.5", "No NVSwitch SXid errors in the kernel log of node " NODE_A);
	snap_free(&s);
	healthy_gpus(&b, 1);
	pt_block_file(&b, "dmesg", 0, "dmesg-iso-boot.txt");
	one_node(&s, NULL, "ml.g5.8xlarge", &b);
	ck_run(&s.c, "node.nvswitch");
	T_EQ(s.c.f.n, 0);
	snap_free(&s);
	hp_buf_release(&b);
}

#define FM(active, sub) "Id=nvidia-fabricmanager.service\nLoadState=loaded\nActiveState=" active "\nSubState=" sub "\n\n"

/* Fabric Manager on NVSwitch systems: a failed start is a FAIL P0 with its journal (G.5). */
static void t_fabric_manager(void)
{
	static const struct {
		const char *units, *journal, *want;
		enum hp_tag tag;
		enum hp_prio prio;
	} cases[] = {
		{ ACTIVE("amazon-ssm-agent") FM("failed", "failed"), "fabricmanager-journal-failed.txt",
		  "nvidia-fabricmanager is failed on node " NODE_A " (4 NVSwitches on the PCI bus): the GPUs cannot join the NVLink fabric, so CUDA fails with 'system not yet initialized'",
		  HP_TAG_FAIL, HP_P0 },
		{ ACTIVE("amazon-ssm-agent") FM("active", "running"), "fabricmanager-journal-started.txt",
		  "nvidia-fabricmanager active on node " NODE_A " (4 NVSwitches on the PCI bus)", HP_TAG_PASS, HP_PNONE },
		{ ACTIVE("amazon-ssm-agent") MISSING("nvidia-fabricmanager"), NULL,
		  "nvidia-fabricmanager is not installed as a systemd unit on node " NODE_A, HP_TAG_WARN, HP_P1 },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct hp_buf b = HP_BUF_INIT(1 << 22);
		const struct hp_finding *f;
		struct snap s;

		healthy_gpus(&b, 8);
		pt_block_file(&b, "pci", 0, "pci-p5.txt");
		pt_block(&b, "systemd", 0, cases[i].units);
		if (cases[i].journal)
			pt_block_file(&b, "fabricmanager", 0, cases[i].journal);
		one_node(&s, NULL, "ml.p5.48xlarge", &b);
		ck_run(&s.c, "node.fabric-manager");
		f = expect(&s, cases[i].tag, cases[i].prio, "G.5", cases[i].want);
		if (i == 0)
			T_ASSERT(ck_evidence_has(f, "journal: 11月 15 14:15:47 leon-NF5468M6 nv-fabricmanager[4177]: request to query NVSwitch device information"));
		T_EQ(s.c.f.n, 1);
		snap_free(&s);
		hp_buf_release(&b);
	}
}

/* PCIe links trained below their maximum (G.4): narrower is a WARN, an idle GPU's lower speed is not. */
static void t_pcie_link(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	const struct hp_finding *f;
	struct snap s;

	pt_block_file(&b, "pci_link", 0, "pci-link-p5.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.pcie-link");
	f = expect(&s, HP_TAG_WARN, HP_P1, "G.4", "PCIe link narrower than the device supports on node " NODE_A
		   ": GPU 0000:64:00.0 (x8 of x16 at 16.0 of 32.0 GT/s)");
	T_STREQ(f->node, NODE_A);
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "GPU PCIe link below its maximum speed on node " NODE_A
	       ": GPU 0000:75:00.0 (x16 of x16 at 2.5 of 32.0 GT/s); idle GPUs lower");
	/* "Unknown" speed and an unreadable width: named, not judged, and no PASS. */
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "PCIe link state not readable in sysfs on node " NODE_A " for 1 device (EFA device 0000:54:01.0)");
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	snap_free(&s);
	hp_buf_release(&b);

	hp_buf_init(&b, 1 << 20);
	pt_block(&b, "pci_link", 0, "0000:53:00.0|0x10de|0x2330|0x030200|32.0 GT/s PCIe|32.0 GT/s PCIe|16|16\n"
		 "0000:54:00.0|0x1d0f|0xefa1|0x020000|16.0 GT/s PCIe|16.0 GT/s PCIe|16|16");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.pcie-link");
	expect(&s, HP_TAG_PASS, HP_PNONE, "G.4", "PCIe links of 2 GPU and EFA devices on node " NODE_A " at their full width and speed");
	snap_free(&s);
	hp_buf_release(&b);

	/* An EFA device slower than its maximum warns (it does not idle down like a GPU). */
	hp_buf_init(&b, 1 << 20);
	pt_block(&b, "pci_link", 0, "0000:54:00.0|0x1d0f|0xefa1|0x020000|8.0 GT/s PCIe|16.0 GT/s PCIe|16|16");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.pcie-link");
	expect(&s, HP_TAG_WARN, HP_P2, "G.4", "PCIe link slower than the device supports on node " NODE_A ": EFA device 0000:54:00.0");
	snap_free(&s);
	hp_buf_release(&b);

	/* No sysfs block (an older probe): nothing claimed. */
	hp_buf_init(&b, 1 << 20);
	pt_block_file(&b, "pci", 0, "pci-p5.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.pcie-link");
	T_EQ(s.c.f.n, 0);
	snap_free(&s);
	hp_buf_release(&b);
}

/* nvidia-smi that stops at an unreachable GPU: say so, claim no missing GPUs. */
static void t_gpu_smi_aborted(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	const struct hp_finding *f;
	struct snap s;

	pt_block_file(&b, "nvidia_gpu", 15, "nvidia-smi-handle-unknown.txt");
	pt_block_file(&b, "pci", 0, "pci-p5.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-count");
	f = expect(&s, HP_TAG_FAIL, HP_P0, "G.1",
		   "nvidia-smi failed on node " NODE_A ": it cannot reach GPU 0000:20:00.0 (Unknown Error) and stopped there (exit status 15)");
	T_ASSERT(ck_evidence_has(f, "Unable to determine the device handle for GPU0000:20:00.0"));
	T_EQ(ck_count_msg(&s.c, HP_TAG_FAIL, "missing"), 0);
	T_EQ(ck_count_msg(&s.c, HP_TAG_FAIL, "GPU count"), 0);
	T_EQ(s.c.f.n, 1);
	snap_free(&s);
	hp_buf_release(&b);

	/* nvidia-smi without a driver: it failed, it did not count zero GPUs. */
	hp_buf_init(&b, 1 << 20);
	pt_block_file(&b, "nvidia_gpu", 9, "nvidia-smi-nodriver.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-count");
	expect(&s, HP_TAG_FAIL, HP_P0, "G.1", "nvidia-smi failed on node " NODE_A " (exit status 9): NVIDIA-SMI has failed");
	T_EQ(ck_count_msg(&s.c, HP_TAG_FAIL, "missing"), 0);
	snap_free(&s);
	hp_buf_release(&b);

	/* Rows listed around the lost GPU: the count holds, and names the bus id. */
	gpu_node(&s, "ml.p5.48xlarge", "nvidia-smi-gpus-lost.txt", 0, NULL);
	ck_run(&s.c, "node.gpu-count");
	expect(&s, HP_TAG_FAIL, HP_P0, "G.1", "1 GPU missing, fallen off the bus or the driver failed; nvidia-smi cannot reach 0000:A8:00.0");
	snap_free(&s);
}

/* A value nvidia-smi could not read is unknown, never healthy. */
static void t_gpu_unreadable(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 22);
	struct snap s;

	pt_block_file(&b, "nvidia_gpu", 0, "nvidia-smi-gpus-p5.txt");
	pt_block_file(&b, "nvidia_ecc", 0, "nvidia-smi-ecc-unreadable.txt");
	pt_block_file(&b, "nvidia_clocks", 0, "nvidia-smi-clocks-unreadable.txt");
	pt_block_file(&b, "nvidia_remap", 0, "nvidia-smi-remap-unreadable.txt");
	pt_block_file(&b, "nvidia_recovery", 0, "nvidia-smi-recovery-unreadable.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-ecc");
	expect(&s, HP_TAG_WARN, HP_P1, "G.1",
	       "Cannot read ECC counters on GPU 2 (00000000:75:00.0), GPU 4 (00000000:97:00.0) of node " NODE_A " (nvidia-smi printed [Unknown Error])");
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	ck_run(&s.c, "node.gpu-remap");
	expect(&s, HP_TAG_WARN, HP_P1, "G.1.a", "Cannot read row-remap state on GPU 2 (00000000:75:00.0) of node " NODE_A);
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	ck_run(&s.c, "node.gpu-clocks");
	expect(&s, HP_TAG_WARN, HP_P1, "G.1", "Cannot read clocks and throttle reasons on GPU 2 (00000000:75:00.0) of node " NODE_A " (nvidia-smi printed [GPU requires reset])");
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	ck_run(&s.c, "node.gpu-recovery");
	expect(&s, HP_TAG_WARN, HP_P1, "G.1.d", "Cannot read the GPU recovery action on GPU 2 (00000000:75:00.0)");
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	snap_free(&s);
	hp_buf_release(&b);

	/* [N/A] alone is a lesser warning. */
	hp_buf_init(&b, 1 << 22);
	pt_block(&b, "nvidia_gpu", 0, "0, 00000000:53:00.0, NVIDIA H100 80GB HBM3, GPU-0, 550.127.05");
	pt_block(&b, "nvidia_ecc", 0, "0, [N/A], [N/A], [N/A], [N/A], [N/A]");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.gpu-ecc");
	expect(&s, HP_TAG_WARN, HP_P2, "G.1", "Cannot read ECC counters on GPU 0 (00000000:53:00.0)");
	snap_free(&s);
	hp_buf_release(&b);
}

/* NVLink links and counters, and the DCGM nvvs log (seed steps without an equivalent before). */
static void t_nvlink_and_nvvs(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 22);
	const struct hp_finding *f;
	struct snap s;

	pt_block(&b, "nvidia_gpu", 0, "3, 00000000:86:00.0, Tesla V100-SXM2-32GB, GPU-3, 535.54.03");
	pt_block_file(&b, "nvlink_status", 0, "nvidia-smi-nvlink-s-inactive.txt");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.gpu-nvlink");
	expect(&s, HP_TAG_FAIL, HP_P1, "G.1", "NVLink links inactive on node " NODE_A ": GPU 3 (00000000:86:00.0) links 3,5");
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	snap_free(&s);
	hp_buf_release(&b);

	hp_buf_init(&b, 1 << 22);
	healthy_gpus(&b, 8);
	pt_block_file(&b, "nvlink_errors", 0, "nvidia-smi-nvlink-e-errors.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-nvlink");
	expect(&s, HP_TAG_WARN, HP_P1, "G.1", "NVLink error counters not zero on node " NODE_A " (since the driver loaded): GPU 1 (00000000:64:00.0): CRC 31, Replay 17, Recovery 2");
	snap_free(&s);
	hp_buf_release(&b);

	/* Every link active, counters zero. */
	hp_buf_init(&b, 1 << 22);
	healthy_gpus(&b, 1);
	pt_block(&b, "nvlink_status", 0, "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)\n\t Link 0: 26.562 GB/s\n\t Link 1: 26.562 GB/s");
	pt_block_file(&b, "nvlink_errors", 0, "nvidia-smi-nvlink-e-h100.txt");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.gpu-nvlink");
	expect(&s, HP_TAG_PASS, HP_PNONE, "G.1", "All 2 NVLink links active on 1 GPU of node " NODE_A ", error counters zero");
	snap_free(&s);
	hp_buf_release(&b);

	hp_buf_init(&b, 1 << 22);
	healthy_gpus(&b, 8);
	pt_block_file(&b, "nvvs", 0, "nvvs-log-failure.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-nvvs");
	f = expect(&s, HP_TAG_WARN, HP_P1, "G.1.b", "DCGM nvvs log shows failure/row-remap signals on node " NODE_A ": 2 lines in the tail of /var/log/nvidia-dcgm/nvvs.log");
	T_ASSERT(ck_evidence_has(f, "Test memory: FAIL"));
	snap_free(&s);
	hp_buf_release(&b);

	hp_buf_init(&b, 1 << 22);
	healthy_gpus(&b, 8);
	pt_block_file(&b, "nvvs", 0, "nvvs-log-benign.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-nvvs");
	expect(&s, HP_TAG_PASS, HP_PNONE, "G.1.b", "DCGM nvvs log nvvs.log on node " NODE_A " shows no failure in its last 6 lines");
	snap_free(&s);
	hp_buf_release(&b);
}

/* kubelet, lifecycle log, /var/lib/containerd, interface counters and IMDS. */
static void t_node_extras(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	const struct hp_finding *f;
	struct snap s;

	pt_block(&b, "systemd", 0, ACTIVE("containerd") "Id=kubelet.service\nLoadState=loaded\nActiveState=failed\nSubState=failed\n\n");
	one_node(&s, EKS_CLUSTER, NULL, &b);
	ck_run(&s.c, "node.kubelet");
	expect(&s, HP_TAG_FAIL, HP_P0, "M", "kubelet inactive on node " NODE_A " (ActiveState failed)");
	snap_free(&s);
	one_node(&s, SLURM_CLUSTER, NULL, &b);
	ck_run(&s.c, "node.kubelet");
	T_EQ(s.c.f.n, 0);
	snap_free(&s);
	hp_buf_release(&b);

	hp_buf_init(&b, 1 << 20);
	pt_block_file(&b, "provision", 0, "provisioning-log-errors.txt");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.provisioning");
	f = expect(&s, HP_TAG_WARN, HP_P1, "D", "Lifecycle script errors in /var/log/provision/provisioning.log on node " NODE_A ": 3 error lines of 1842");
	T_ASSERT(ck_evidence_has(f, "1210:./setup_mariadb_accounting.sh: line 41: mysql: command not found"));
	snap_free(&s);
	hp_buf_release(&b);
	hp_buf_init(&b, 1 << 20);
	pt_block_file(&b, "provision", 0, "provisioning-log-clean.txt");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.provisioning");
	expect(&s, HP_TAG_PASS, HP_PNONE, "D", "shows no errors (963 lines)");
	snap_free(&s);
	hp_buf_release(&b);

	hp_buf_init(&b, 1 << 20);
	pt_block(&b, "df", 0, DF_HEAD "/dev/nvme0n1p1 104845292 41938116 62907176 41% /\n"
				"/dev/nvme1n1 524032000 497830400 26201600 95% /var/lib/containerd");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.disk-containerd");
	expect(&s, HP_TAG_FAIL, HP_P1, "I.2", "/var/lib/containerd 95% full on node " NODE_A);
	snap_free(&s);
	hp_buf_release(&b);
	/* Not a volume of its own: the root volume check covers it. */
	disk(&s, NULL, NULL, DF_HEAD "/dev/nvme0n1p1 104845292 41938116 62907176 41% /");
	ck_run(&s.c, "node.disk-containerd");
	T_EQ(s.c.f.n, 0);
	snap_free(&s);

	hp_buf_init(&b, 1 << 20);
	pt_block(&b, "netdev", 0, "ens32 918273 812736 7 0 12 0\nenp71s0 5000000 5000000 0 0 400000 0\neth9 100 100 0 0 0 0");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.net-errors");
	expect(&s, HP_TAG_WARN, HP_P2, "A.2", "Network interface errors on node " NODE_A " since boot: ens32 RX errors 7, TX errors 0");
	expect(&s, HP_TAG_WARN, HP_P2, "A.2", "enp71s0 RX dropped 400000, TX dropped 0 of 10000000 packets");
	snap_free(&s);
	hp_buf_release(&b);
	hp_buf_init(&b, 1 << 20);
	pt_block(&b, "netdev", 0, "ens32 918273 812736 0 0 12 0");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.net-errors");
	expect(&s, HP_TAG_PASS, HP_PNONE, "A.2", "No RX/TX errors and few drops on 1 network interface of node " NODE_A);
	snap_free(&s);
	hp_buf_release(&b);

	hp_buf_init(&b, 1 << 20);
	pt_block(&b, "imds", 1, "token=none\ncurl=28");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.imds");
	expect(&s, HP_TAG_WARN, HP_P1, "B.1", "IMDS unreachable from node " NODE_A ": no IMDSv2 token within 1 s (curl exit status 28)");
	snap_free(&s);
	hp_buf_release(&b);
	hp_buf_init(&b, 1 << 20);
	pt_block(&b, "imds", 0, "token=ok\ncurl=0\ninstance_type=p5.48xlarge");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.imds");
	expect(&s, HP_TAG_PASS, HP_PNONE, "B.1", "IMDS reachable from node " NODE_A " (IMDSv2, instance type p5.48xlarge)");
	snap_free(&s);
	hp_buf_release(&b);
	/* No curl on the node: nothing said. */
	hp_buf_init(&b, 1 << 20);
	pt_block(&b, "imds", 127, NULL);
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.imds");
	T_EQ(s.c.f.n, 0);
	snap_free(&s);
	hp_buf_release(&b);
}

static void t_ecc(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 22);
	struct snap s;

	pt_block_file(&b, "nvidia_gpu", 0, "nvidia-smi-gpus-p5.txt");
	pt_block_file(&b, "nvidia_ecc", 0, "nvidia-smi-ecc.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-ecc");
	expect(&s, HP_TAG_FAIL, HP_P0, "G.1", "Uncorrectable ECC errors on node " NODE_A " since the driver loaded: GPU 3 (00000000:86:00.0): 2");
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "GPU 6 (00000000:B9:00.0) of node " NODE_A " has 1 uncorrectable ECC error in its lifetime");
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	snap_free(&s);
	hp_buf_release(&b);

	/* 500 corrected in ten hours is over 100 a day; ECC off on one GPU. */
	hp_buf_init(&b, 1 << 22);
	pt_block(&b, "nvidia_gpu", 0, "0, 00000000:53:00.0, NVIDIA H100 80GB HBM3, GPU-0, 550.127.05\n"
				      "1, 00000000:64:00.0, NVIDIA H100 80GB HBM3, GPU-1, 550.127.05");
	pt_block(&b, "nvidia_ecc", 0, "0, Enabled, 500, 0, 500, 0\n1, Disabled, [N/A], [N/A], [N/A], [N/A]");
	one_node(&s, NULL, NULL, &b);
	ck_run(&s.c, "node.gpu-ecc");
	expect(&s, HP_TAG_WARN, HP_P1, "G.1", "GPU 0 (00000000:53:00.0) of node " NODE_A ": 500 corrected ECC errors in 0.4 days");
	expect(&s, HP_TAG_WARN, HP_P2, "G.1", "ECC disabled on GPU 1 (00000000:64:00.0)");
	expect(&s, HP_TAG_PASS, HP_PNONE, "G.1", "No uncorrectable ECC errors on 1 GPU of node " NODE_A);
	snap_free(&s);
	hp_buf_release(&b);
}

static void t_remap(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 22);
	struct snap s;

	pt_block_file(&b, "nvidia_gpu", 0, "nvidia-smi-gpus-p5.txt");
	pt_block_file(&b, "nvidia_remap", 0, "nvidia-smi-remap.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-remap");
	expect(&s, HP_TAG_FAIL, HP_P0, "G.1.a",
	       "GPU row-remap failure on node " NODE_A " (bad memory, replace GPU): GPU 7 (00000000:CA:00.0) (8 uncorrectable remaps)");
	expect(&s, HP_TAG_FAIL, HP_P1, "G.1.a",
	       "GPU row-remap pending on node " NODE_A " (reset/reboot to finalize; if stuck, marginal memory): GPU 4 (00000000:97:00.0)");
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "GPU 1 (00000000:64:00.0) of node " NODE_A " has 1 row remapped");
	T_EQ(ck_count(&s.c, HP_TAG_PASS), 0);
	snap_free(&s);
	hp_buf_release(&b);

	gpu_node(&s, "ml.p5.48xlarge", NULL, 8, NULL);
	ck_run(&s.c, "node.gpu-remap");
	expect(&s, HP_TAG_PASS, HP_PNONE, "G.1.a", "Row remapping healthy on 8 GPUs of node " NODE_A);
	snap_free(&s);
}

static void t_recovery_and_clocks(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 22);
	struct snap s;

	pt_block_file(&b, "nvidia_gpu", 0, "nvidia-smi-gpus-p5.txt");
	pt_block_file(&b, "nvidia_recovery", 0, "nvidia-smi-recovery.txt");
	pt_block_file(&b, "nvidia_clocks", 0, "nvidia-smi-clocks.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-recovery");
	expect(&s, HP_TAG_FAIL, HP_P0, "G.1.d", "GPU recovery action 'Node Reboot Required' required on GPU 4 (00000000:97:00.0) of node " NODE_A);
	T_EQ(s.c.f.n, 1);
	ck_run(&s.c, "node.gpu-clocks");
	expect(&s, HP_TAG_WARN, HP_P1, "G.1", "GPU 5 (00000000:A8:00.0) of node " NODE_A " throttled: HW thermal slowdown (87 C, SM 1155 of 1980 MHz)");
	/* GPU 2 is only idle (0x1): not throttling. */
	T_EQ(s.c.f.n, 1);
	snap_free(&s);
	hp_buf_release(&b);

	/* A driver without the recovery field: not judged. */
	hp_buf_init(&b, 1 << 22);
	pt_block_file(&b, "nvidia_gpu", 0, "nvidia-smi-gpus-p5.txt");
	pt_block_file(&b, "nvidia_recovery", 2, "nvidia-smi-recovery-old-driver.txt");
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.gpu-recovery");
	T_EQ(s.c.f.n, 0);
	snap_free(&s);
	hp_buf_release(&b);
}

static void dcgm_case(struct snap *s, const char *file, int rc)
{
	struct hp_buf b = HP_BUF_INIT(1 << 22);
	char *extra;

	healthy_gpus(&b, 8);
	if (file)
		pt_block_file(&b, "dcgm", rc, file);
	else
		pt_block(&b, "dcgm", rc, NULL);
	extra = b.buf;
	(void)extra;
	one_node(s, NULL, "ml.p5.48xlarge", &b);
	hp_buf_release(&b);
}

static void t_dcgm(void)
{
	const struct hp_finding *f;
	struct snap s;

	dcgm_case(&s, "dcgmi-health-failure.json", 0);
	ck_run(&s.c, "node.gpu-dcgm");
	f = expect(&s, HP_TAG_FAIL, HP_P0, "G.1.b", "DCGM health Fail/Warn on node " NODE_A ": Failure");
	T_ASSERT(ck_evidence_has(f, "GPU 3 Memory system: Failure: Detected 2 volatile double-bit ECC error(s) in GPU 3."));
	snap_free(&s);

	dcgm_case(&s, "dcgmi-health-table.txt", 0);
	ck_run(&s.c, "node.gpu-dcgm");
	expect(&s, HP_TAG_WARN, HP_P1, "G.1.b", "DCGM health Fail/Warn on node " NODE_A ": Warning");
	snap_free(&s);

	dcgm_case(&s, "dcgmi-noengine.txt", 255);
	ck_run(&s.c, "node.gpu-dcgm");
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "DCGM health not available on node " NODE_A ": Error: unable to establish a connection");
	snap_free(&s);

	dcgm_case(&s, NULL, 127);
	ck_run(&s.c, "node.gpu-dcgm");
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "dcgmi not installed on node " NODE_A);
	snap_free(&s);

	dcgm_case(&s, "dcgmi-health-healthy.json", 0);
	ck_run(&s.c, "node.gpu-dcgm");
	expect(&s, HP_TAG_PASS, HP_PNONE, "G.1.b", "DCGM health Healthy on node " NODE_A);
	snap_free(&s);
}

static void t_neuron(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	char *table = pt_file("neuron-ls-trn1.txt"), *cut;
	struct snap s;

	pt_block(&b, "neuron", 0, table);
	one_node(&s, NULL, "ml.trn1.32xlarge", &b);
	ck_run(&s.c, "node.neuron");
	expect(&s, HP_TAG_PASS, HP_PNONE, "G.2", "16 of 16 Neuron devices (32 cores) visible on node " NODE_A);
	snap_free(&s);
	hp_buf_release(&b);

	/* Drop the device 15 row: one device short. */
	cut = strstr(table, "| 15 ");
	T_ASSERT(cut);
	strcpy(cut, "+--------+\n");
	hp_buf_init(&b, 1 << 20);
	pt_block(&b, "neuron", 0, table);
	one_node(&s, NULL, "ml.trn1.32xlarge", &b);
	ck_run(&s.c, "node.neuron");
	expect(&s, HP_TAG_FAIL, HP_P0, "G.2", "Neuron devices 15 of 16 on node " NODE_A " (ml.trn1.32xlarge)");
	snap_free(&s);
	hp_buf_release(&b);
	free(table);

	hp_buf_init(&b, 1 << 20);
	pt_block(&b, "neuron", 127, NULL);
	one_node(&s, NULL, "ml.trn1.32xlarge", &b);
	ck_run(&s.c, "node.neuron");
	expect(&s, HP_TAG_FAIL, HP_P1, "G.2", "neuron-ls not found on node " NODE_A ", which has 16 Neuron devices");
	snap_free(&s);
	one_node(&s, NULL, "ml.p5.48xlarge", &b);
	ck_run(&s.c, "node.neuron");
	T_EQ(s.c.f.n, 0);
	snap_free(&s);
	hp_buf_release(&b);
}

static void efa_case(struct snap *s, const char *type, int devices, const char *ports,
		     const char *fi_file, int fi_rc)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);

	if (devices >= 0) {
		efa_devices(&b, devices, ports);
	} else {
		pt_block(&b, "ib_devices", 2, NULL);
		pt_block(&b, "ib_ports", 2, NULL);
	}
	if (fi_file)
		pt_block_file(&b, "fi_info", fi_rc, fi_file);
	else
		pt_block(&b, "fi_info", fi_rc, NULL);
	pt_block(&b, "modules", 1, NULL);
	one_node(s, NULL, type, &b);
	hp_buf_release(&b);
}

static void t_efa(void)
{
	const struct hp_finding *f;
	struct snap s;

	efa_case(&s, "ml.p5.48xlarge", 32, NULL, "fi_info-efa.txt", 0);
	ck_run(&s.c, "node.efa");
	expect(&s, HP_TAG_PASS, HP_PNONE, "A.3", "32 of 32 EFA devices present on node " NODE_A);
	expect(&s, HP_TAG_PASS, HP_PNONE, "A.2", "libfabric EFA provider present on node " NODE_A);
	T_EQ(s.c.f.n, 2);
	snap_free(&s);

	efa_case(&s, "ml.p5.48xlarge", -1, NULL, "fi_info-noefa.txt", 1);
	ck_run(&s.c, "node.efa");
	f = expect(&s, HP_TAG_FAIL, HP_P1, "A.3", "No EFA devices on node " NODE_A " (ml.p5.48xlarge supports 32): /dev/infiniband is missing");
	T_ASSERT(ck_evidence_has(f, "the efa kernel module is not loaded"));
	expect(&s, HP_TAG_FAIL, HP_P1, "A.2", "libfabric offers no EFA provider on node " NODE_A ": fi_getinfo: -61 (No data available)");
	snap_free(&s);

	efa_case(&s, "ml.p5.48xlarge", 30, "rdmap0s0 1 4: ACTIVE\nrdmap1s0 1 1: DOWN", NULL, 127);
	ck_run(&s.c, "node.efa");
	expect(&s, HP_TAG_WARN, HP_P1, "A.3", "EFA devices 30 of 32 on node " NODE_A " (ml.p5.48xlarge supports 32)");
	expect(&s, HP_TAG_WARN, HP_P1, "A.2", "1 EFA port not active on node " NODE_A ": rdmap1s0/1 DOWN");
	expect(&s, HP_TAG_WARN, HP_P2, "A.2", "fi_info not found on node " NODE_A);
	snap_free(&s);

	/* A type without EFA: nothing expected, nothing said. */
	efa_case(&s, "ml.m5.2xlarge", -1, NULL, NULL, 127);
	ck_run(&s.c, "node.efa");
	T_EQ(s.c.f.n, 0);
	snap_free(&s);

	/* Type unknown, no device: absent. */
	efa_case(&s, NULL, -1, NULL, NULL, 127);
	ck_run(&s.c, "node.efa");
	expect(&s, HP_TAG_INFO, HP_PNONE, "", "No EFA devices on node " NODE_A " (/dev/infiniband is absent)");
	T_EQ(s.c.f.n, 1);
	snap_free(&s);
}

static void t_many_nodes_summarised(void)
{
	const struct hp_finding *f;
	struct snap s;
	int i;

	snap_init(&s, NULL, 1);
	for (i = 0; i < 6; i++) {
		struct hp_buf out = HP_BUF_INIT(1 << 20);
		char id[32];

		snprintf(id, sizeof(id), "i-0%016d", i);
		pt_block(&out, "df", 0, i < 5 ? DF_HEAD "/dev/x 100 93 7 93% /" : DF_HEAD "/dev/x 100 10 90 10% /");
		pt_done(&out);
		snap_node(&s, id, "ml.p5.48xlarge", "probed", &out);
		hp_buf_release(&out);
	}
	/* Nodes that were not probed belong to the SSM check. */
	snap_node(&s, "i-0ffffffffffffffff", NULL, "unreachable", NULL);
	snap_node(&s, "i-0eeeeeeeeeeeeeeee", NULL, "skipped", NULL);
	ck_run(&s.c, "node.disk-root");
	T_EQ(s.c.f.n, 2);
	f = expect(&s, HP_TAG_FAIL, HP_P0, "I.2", "Root volume over 90% full on 5 nodes");
	T_ASSERT(f->node == NULL);
	/* Each node's own line (fold.h); every id in nodes. */
	T_EQ(ck_evidence_len(f), 5);
	T_ASSERT(ck_evidence_has(f, "Root volume 93% full on node i-00000000000000004"));
	T_EQ((int)f->nnodes, 5);
	T_STREQ(f->nodes[4], "i-00000000000000004");
	/* The odd node keeps its own line. */
	f = expect(&s, HP_TAG_PASS, HP_PNONE, "I.2", "Root volume 10% used on node i-00000000000000005");
	T_STREQ(f->node, "i-00000000000000005");
	/* Problems come first. */
	T_EQ(s.c.f.v[0].tag, HP_TAG_FAIL);
	snap_free(&s);

	/* Three alike stay one by one; summarised passes list ids. */
	snap_init(&s, NULL, 1);
	for (i = 0; i < 7; i++) {
		struct hp_buf out = HP_BUF_INIT(1 << 20);
		char id[32];

		snprintf(id, sizeof(id), "i-0%016d", i);
		pt_block(&out, "df", 0, i < 3 ? DF_HEAD "/dev/x 100 93 7 93% /" : DF_HEAD "/dev/x 100 10 90 10% /");
		pt_done(&out);
		snap_node(&s, id, NULL, "probed", &out);
		hp_buf_release(&out);
	}
	ck_run(&s.c, "node.disk-root");
	T_EQ(ck_count(&s.c, HP_TAG_FAIL), 3);
	f = expect(&s, HP_TAG_PASS, HP_PNONE, "I.2", "Root volume below 80% used on 4 nodes");
	T_ASSERT(ck_evidence_has(f, "nodes 1-4 of 4: i-00000000000000003 i-00000000000000004"));
	snap_free(&s);
}

static void t_probe_output_problems(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	const struct hp_finding *f;
	struct snap s;
	cJSON *e;

	snap_init(&s, NULL, 1);
	pt_block_file(&out, "df", -1, "df-P-hyperpod.txt");
	snap_node(&s, NODE_A, NULL, "probed", &out);
	e = snap_node(&s, NODE_B, NULL, "probed", NULL);
	cJSON_ReplaceItemInObject(e, "stderr", cJSON_CreateString("sh: 1: base64: not found"));
	cJSON_ReplaceItemInObject(e, "exit_code", cJSON_CreateNumber(127));
	ck_run(&s.c, "node.probe");
	expect(&s, HP_TAG_WARN, HP_P2, "K.5", "Probe output from node " NODE_A " ended early (no end marker after 1 blocks)");
	f = expect(&s, HP_TAG_WARN, HP_P1, "K.5", "Probe output from node " NODE_B " holds no probe data; nothing on the node could be checked (exit status 127)");
	T_ASSERT(ck_evidence_has(f, "stderr: sh: 1: base64: not found"));
	/* A session that ended without an exit code: said so, never "exit status -1". */
	e = snap_node(&s, "i-0ccccccccccccccc3", NULL, "probed", NULL);
	cJSON_ReplaceItemInObject(e, "exit_code", cJSON_CreateNull());
	ck_run(&s.c, "node.probe");
	expect(&s, HP_TAG_WARN, HP_P1, "K.5", "Probe output from node i-0ccccccccccccccc3 holds no probe data; nothing on the node could be checked (no exit status)");
	T_EQ(ck_count_msg(&s.c, HP_TAG_WARN, "exit status -1"), 0);
	/* The partial output is still used. */
	ck_run(&s.c, "node.disk-root");
	expect(&s, HP_TAG_FAIL, HP_P0, "I.2", "Root volume 93% full on node " NODE_A);
	snap_free(&s);
	hp_buf_release(&out);
}

/*
 * Two kinds of result interleaved over 60 nodes: each class counts its own
 * results, so the folded FAIL keeps the lines of its first 25 nodes (not
 * of the first 25 results) and every id, the PASS every id.
 */
static void t_many_nodes_interleaved(void)
{
	const struct hp_finding *f;
	struct snap s;
	char id[32];
	int i, fails = 0;

	snap_init(&s, NULL, 1);
	for (i = 0; i < 60; i++) {
		struct hp_buf out = HP_BUF_INIT(1 << 20);

		snprintf(id, sizeof(id), "i-0%016d", i);
		pt_block(&out, "df", 0, i % 3 ? DF_HEAD "/dev/x 100 93 7 93% /" : DF_HEAD "/dev/x 100 10 90 10% /");
		pt_done(&out);
		snap_node(&s, id, "ml.p5.48xlarge", "probed", &out);
		hp_buf_release(&out);
	}
	ck_run(&s.c, "node.disk-root");
	T_EQ(s.c.f.n, 2);
	T_EQ(s.c.f.v[0].tag, HP_TAG_FAIL);
	f = expect(&s, HP_TAG_FAIL, HP_P0, "I.2", "Root volume over 90% full on 40 nodes");
	T_EQ((int)f->nnodes, 40);
	T_EQ(ck_evidence_len(f), 25 + 1);
	for (i = 0; i < 60 && fails < 25; i++) {
		char want[96];

		if (!(i % 3))
			continue;
		snprintf(want, sizeof(want), "Root volume 93%% full on node i-0%016d", i);
		T_CONTAINS(ck_line(f, (size_t)fails), want);
		fails++;
	}
	T_CONTAINS(ck_line(f, 25), "nodes 1-40 of 40: i-00000000000000001 i-00000000000000002 "
		   "i-00000000000000004");
	T_STREQ(f->nodes[39], "i-00000000000000059");
	f = expect(&s, HP_TAG_PASS, HP_PNONE, "I.2", "Root volume below 80% used on 20 nodes");
	T_EQ((int)f->nnodes, 20);
	T_EQ(ck_evidence_len(f), 1);
	T_CONTAINS(ck_line(f, 0), "nodes 1-20 of 20: i-00000000000000000 i-00000000000000003");
	snap_free(&s);
}

/*
 * A long stderr (5,000 bytes, multi-byte characters at the cut): the probe
 * store keeps only what the finding quotes, and the finding is the same
 * as from the whole text in a document entry.
 */
static void t_probe_stderr_kept_as_quoted(void)
{
	struct hp_buf err = HP_BUF_INIT(8192);
	char line[2][HP_CLIP_SIZE(HP_FACTS_STDERR_CHARS) + 16];
	const struct hp_finding *f;
	struct snap s;
	cJSON *e;
	int i, k;

	for (i = 0; i < 1000; i++)
		hp_buf_puts(&err, i % 3 ? "ab\xC3\xA9 " : "x\n");
	for (k = 0; k < 2; k++) {
		snap_init(&s, NULL, 1);
		e = snap_node(&s, NODE_B, NULL, "probed", NULL);
		cJSON_ReplaceItemInObject(e, "stderr", cJSON_CreateString(err.buf));
		cJSON_ReplaceItemInObject(e, "exit_code", cJSON_CreateNumber(2));
		if (k) {
			/* The store's view of the same entry (a live sweep, a replayed file). */
			cJSON *copy = cJSON_Duplicate(e, 1);
			const cJSON *kept;
			struct hp_probe_iter it;

			hp_probes_reset(&s.c.snap, "probes");
			hp_probes_add(&s.c.snap, "probes", NODE_B, copy, hp_probe_parse("", 0));
			cJSON_Delete(copy);
			kept = cJSON_GetObjectItem(hp_probes_first(&s.c.snap, "probes", &it), "stderr");
			T_ASSERT(cJSON_IsString(kept));
			/* Exactly the 200 characters the finding quotes, and "…". */
			T_ASSERT(!strcmp(kept->valuestring, hp_text_clip(err.buf, 200, line[1])));
			T_ASSERT(strlen(kept->valuestring) < HP_FACTS_STDERR_SIZE);
			hp_probes_end(&it);
		}
		ck_run(&s.c, "node.probe");
		f = expect(&s, HP_TAG_WARN, HP_P1, "K.5", "holds no probe data");
		T_ASSERT(ck_evidence_has(f, "stderr: x"));
		T_ASSERT(hp_finding_lines(f) >= 1);
		hp_strlcpy(line[k], ck_line(f, 0), sizeof(line[k]));
		snap_free(&s);
	}
	T_ASSERT(!strcmp(line[0], line[1]));
	hp_buf_release(&err);
}

/* The development machine's own probe output, as `hpnode node` would see it. */
static void t_local_machine_reports_absence(void)
{
	char *text = pt_file("probe-debian-vm.txt");
	struct hp_buf out = HP_BUF_INIT(1 << 22);
	struct snap s;

	hp_buf_puts(&out, text);
	free(text);
	snap_init(&s, NULL, 0);
	snap_node(&s, "local", NULL, "probed", &out);
	ck_run_all(&s.c);
	CK_NO_PROBLEMS(&s.c);
	ck_one(&s.c, HP_TAG_INFO, "No NVIDIA GPU on this node (nvidia-smi not installed)");
	ck_one(&s.c, HP_TAG_INFO, "No EFA devices on this node (/dev/infiniband is absent)");
	ck_one(&s.c, HP_TAG_INFO, "No Neuron devices on this node");
	ck_one(&s.c, HP_TAG_INFO, "Time sync state unknown on this node (chronyc not installed;");
	ck_one(&s.c, HP_TAG_INFO, "Services not checked on this node");
	ck_one(&s.c, HP_TAG_INFO, "/opt/dlami/nvme is not mounted on this node");
	ck_one(&s.c, HP_TAG_PASS, "Root volume 17% used on this node");
	ck_one(&s.c, HP_TAG_PASS, "No kernel panic");
	T_STREQ(ck_one(&s.c, HP_TAG_PASS, "Root volume")->node, "local");
	hp_buf_release(&out);
	snap_free(&s);
}

T_MAIN(T(t_healthy_gpu_node_has_no_problem), T(t_root_thresholds), T(t_root_unknown_is_not_a_failure),
       T(t_sagemaker_volume), T(t_inodes), T(t_shm), T(t_nvme_from_instance_type), T(t_memory),
       T(t_oom), T(t_kernel), T(t_time), T(t_services_by_orchestrator), T(t_slurm_units),
       T(t_gpu_count), T(t_xid_classes), T(t_gpu_driver_texts), T(t_storage_errors), T(t_readonly_mounts), T(t_aer_new_wording), T(t_xid_driver_words), T(t_xid_caused_with_cause), T(t_nvswitch_sxid), T(t_fabric_manager), T(t_pcie_link), T(t_gpu_smi_aborted), T(t_gpu_unreadable), T(t_nvlink_and_nvvs),
       T(t_node_extras), T(t_ecc), T(t_remap), T(t_recovery_and_clocks),
       T(t_dcgm), T(t_neuron), T(t_efa), T(t_many_nodes_summarised), T(t_many_nodes_interleaved),
       T(t_probe_output_problems), T(t_probe_stderr_kept_as_quoted),
       T(t_local_machine_reports_absence))
