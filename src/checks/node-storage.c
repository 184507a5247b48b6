/*
 * On-node storage and memory: root and /opt/sagemaker usage, inodes,
 * /dev/shm, the NVMe instance store (expected from the instance type's
 * InstanceStorageInfo, mounted according to mountinfo, not df), mounts
 * that went read-only (root, the NVMe volumes, FSx for Lustre), and
 * memory with the EFA huge-page setting. Usage above 80 % warns, above
 * 90 % fails.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hp/json.h"
#include "checks.h"
#include "node.h"

#define WARN_PCT 80
#define FAIL_PCT 90
#define SHM_FAIL_PCT 95
/* A host /dev/shm below this is too small for NCCL and DataLoader workers. */
#define SHM_MIN_KB (1024.0 * 1024)
/* Memory available below this share of the total warns. */
#define MEM_LOW_PCT 5

static const cJSON *row(const cJSON *facts, const char *table, const char *mp)
{
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(facts, table), mp);
}

/* Use% as df prints it, else computed the same way (rounded up); -1 unknown. */
static double use_pct(const cJSON *r, const char *used_key, const char *free_key)
{
	double pct = hp_json_num(r, "use_pct", -1), used, avail;

	if (pct >= 0)
		return pct;
	used = hp_json_num(r, used_key, -1);
	avail = hp_json_num(r, free_key, -1);
	if (used < 0 || avail < 0 || used + avail <= 0)
		return -1;
	return ceil(used * 100 / (used + avail));
}

/* -1 unknown (no mountinfo), 0 not a mount point, 1 mounted. */
static int mounted(const struct node_ctx *c, const char *mp)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(c->facts, "mounts");

	if (cJSON_IsObject(m))
		return cJSON_GetObjectItemCaseSensitive(m, mp) != NULL;
	if (row(c->facts, "fs", mp))
		return 1;
	return -1;
}

static void usage_text(const cJSON *r, char *out, size_t n)
{
	char used[32], size[32];

	snprintf(out, n, "%s used of %s", hp_node_size(hp_json_num(r, "used_kb", 0), used),
		 hp_node_size(hp_json_num(r, "size_kb", 0), size));
}

/* Why a df row is missing, for the INFO line. */
static const char *df_trouble(const struct node_ctx *c)
{
	if (cJSON_IsFalse(hp_json_get(c->facts, "df.present")))
		return "df is not installed";
	if (hp_json_str(c->facts, "df.error"))
		return hp_json_str(c->facts, "df.error");
	if (!hp_json_get(c->facts, "df"))
		return "the probe sent no df output";
	return "df printed no row for it";
}

static void judge_root(struct node_ctx *c)
{
	const cJSON *r = row(c->facts, "fs", "/");
	double pct = use_pct(r, "used_kb", "avail_kb");
	char use[96];

	if (!r || pct < 0) {
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "Root volume usage unknown",
			    "Root volume usage unknown on %s: %s", c->who, df_trouble(c));
		return;
	}
	usage_text(r, use, sizeof(use));
	if (pct > FAIL_PCT)
		hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "Root volume over 90% full",
			    "Root volume %.0f%% full on %s (%s; the 100 GB root volume cannot grow)",
			    pct, c->who, use);
	else if (pct > WARN_PCT)
		hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "Root volume over 80% used",
			    "Root volume %.0f%% used on %s, approaching full (%s)", pct, c->who, use);
	else
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "Root volume below 80% used",
			    "Root volume %.0f%% used on %s (%s)", pct, c->who, use);
}

static void judge_sagemaker(struct node_ctx *c)
{
	const cJSON *r = row(c->facts, "fs", "/opt/sagemaker");
	double pct = use_pct(r, "used_kb", "avail_kb");
	char use[96];
	int m = mounted(c, "/opt/sagemaker");

	if (!r || pct < 0) {
		if (m == 0)
			hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "/opt/sagemaker not a separate volume",
				    "/opt/sagemaker is not a separate volume on %s; data written there "
				    "lands on the root volume", c->who);
		else if (m == 1)
			hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "/opt/sagemaker usage unknown",
				    "/opt/sagemaker usage unknown on %s: %s", c->who, df_trouble(c));
		return;
	}
	usage_text(r, use, sizeof(use));
	if (pct > FAIL_PCT)
		hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "/opt/sagemaker over 90% full",
			    "/opt/sagemaker %.0f%% full on %s (%s)", pct, c->who, use);
	else if (pct > WARN_PCT)
		hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "/opt/sagemaker over 80% used",
			    "/opt/sagemaker %.0f%% used on %s (%s)", pct, c->who, use);
	else
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "/opt/sagemaker below 80% used",
			    "/opt/sagemaker %.0f%% used on %s (%s)", pct, c->who, use);
}

/* Container images and writable layers; judged only when it is a mount point of its own. */
static void judge_containerd_disk(struct node_ctx *c)
{
	const cJSON *r = row(c->facts, "fs", "/var/lib/containerd");
	double pct = use_pct(r, "used_kb", "avail_kb");
	char use[96];

	if (!r || pct < 0)
		return;
	usage_text(r, use, sizeof(use));
	if (pct > FAIL_PCT)
		hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "/var/lib/containerd over 90% full",
			    "/var/lib/containerd %.0f%% full on %s (%s); image pulls and new containers "
			    "fail when it fills", pct, c->who, use);
	else if (pct > WARN_PCT)
		hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "/var/lib/containerd over 80% used",
			    "/var/lib/containerd %.0f%% used on %s (%s)", pct, c->who, use);
	else
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "/var/lib/containerd below 80% used",
			    "/var/lib/containerd %.0f%% used on %s (%s)", pct, c->who, use);
}

static void judge_inodes_of(struct node_ctx *c, const char *mp, int pass)
{
	const cJSON *r = row(c->facts, "inodes", mp);
	double pct = use_pct(r, "used", "free"), total = hp_json_num(r, "total", -1);
	char stem[64];

	/* Some file systems report no fixed inode table (total 0). */
	if (!r || pct < 0 || total == 0)
		return;
	if (pct > FAIL_PCT) {
		snprintf(stem, sizeof(stem), "Inode use over 90%% on %s", mp);
		hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, stem,
			    "Inode exhaustion %.0f%% on %s on %s (%.0f of %.0f inodes used)", pct, mp,
			    c->who, hp_json_num(r, "used", 0), total);
	} else if (pct > WARN_PCT) {
		snprintf(stem, sizeof(stem), "Inode use over 80%% on %s", mp);
		hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, stem,
			    "Inode use %.0f%% on %s on %s (%.0f of %.0f inodes used)", pct, mp, c->who,
			    hp_json_num(r, "used", 0), total);
	} else if (pass) {
		snprintf(stem, sizeof(stem), "Inode use below 80%% on %s", mp);
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, stem, "Inode use %.0f%% on %s on %s", pct,
			    mp, c->who);
	}
}

static void judge_inodes(struct node_ctx *c)
{
	judge_inodes_of(c, "/", 1);
	judge_inodes_of(c, "/opt/sagemaker", 0);
}

static void judge_shm(struct node_ctx *c)
{
	const cJSON *r = row(c->facts, "fs", "/dev/shm");
	double pct = use_pct(r, "used_kb", "avail_kb"), size = hp_json_num(r, "size_kb", -1);
	char sz[32];

	if (!r || pct < 0) {
		if (mounted(c, "/dev/shm") == 0)
			hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "/dev/shm not mounted",
				    "/dev/shm is not mounted on %s; NCCL and DataLoader workers need "
				    "shared memory", c->who);
		return;
	}
	hp_node_size(size, sz);
	if (pct > SHM_FAIL_PCT)
		hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "/dev/shm over 95% full",
			    "/dev/shm %.0f%% full (size %s) on %s; NCCL fails with 'Bus error'", pct, sz,
			    c->who);
	else if (pct > WARN_PCT)
		hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "/dev/shm over 80% used",
			    "/dev/shm %.0f%% used (size %s) on %s; NCCL may fail with 'Bus error'", pct,
			    sz, c->who);
	else if (size >= 0 && size < SHM_MIN_KB)
		hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "/dev/shm smaller than 1 GiB",
			    "/dev/shm is only %s on %s; NCCL and DataLoader workers need more shared "
			    "memory", sz, c->who);
	else
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "/dev/shm below 80% used",
			    "/dev/shm %.0f%% used (size %s) on %s", pct, sz, c->who);
}

static void judge_nvme(struct node_ctx *c)
{
	const cJSON *m = row(c->facts, "mounts", "/opt/dlami/nvme"), *r;
	int store = hp_node_type_instance_store(c), is = mounted(c, "/opt/dlami/nvme");
	char detail[160] = "", sz[32];

	if (is < 0)
		return;
	if (is && (r = row(c->facts, "fs", "/opt/dlami/nvme")))
		snprintf(detail, sizeof(detail), " (%.64s, %s, %.0f%% used)",
			 hp_check_str(m, "source", "device unknown"),
			 hp_node_size(hp_json_num(r, "size_kb", 0), sz), use_pct(r, "used_kb", "avail_kb"));
	else if (is)
		snprintf(detail, sizeof(detail), " (%.64s)", hp_check_str(m, "source", "device unknown"));
	if (store > 0) {
		if (is)
			hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "NVMe instance store mounted",
				    "NVMe instance store mounted at /opt/dlami/nvme on %s%s", c->who,
				    detail);
		else
			hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "NVMe instance store not mounted",
				    "NVMe instance store not mounted on %s (%s): /opt/dlami/nvme is not "
				    "a mount point, so scratch data lands on the root volume", c->who,
				    c->type);
	} else if (store < 0) {
		/* Without the type's storage facts, say what is there and judge nothing. */
		if (is)
			hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "/opt/dlami/nvme mounted",
				    "/opt/dlami/nvme is mounted on %s%s", c->who, detail);
		else
			hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "/opt/dlami/nvme not mounted",
				    "/opt/dlami/nvme is not mounted on %s (no instance type data to say "
				    "whether it should be)", c->who);
	}
}

/* Mount points under these are the runtime's own (pods, snapshots, runs); not judged. */
static int runtime_mount(const char *mp)
{
	static const char *const under[] = { "/var/lib/kubelet/", "/var/lib/containerd/", "/run/",
					     "/proc/", "/sys/", "/snap/", "/boot" };
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(under); i++)
		if (!strncmp(mp, under[i], strlen(under[i])))
			return 1;
	return 0;
}

/* A mount whose read-only state matters: the node's volumes, NVMe devices, FSx for Lustre. */
static int judged_mount(const char *mp, const cJSON *m)
{
	static const char *const points[] = { "/", "/opt/sagemaker", "/opt/dlami/nvme",
					      "/var/lib/containerd", "/tmp", "/var" };
	const char *src = hp_check_str(m, "source", ""), *fs = hp_check_str(m, "fstype", "");
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(points); i++)
		if (!strcmp(mp, points[i]))
			return 1;
	if (runtime_mount(mp))
		return 0;
	return !strcmp(fs, "lustre") || !strncmp(src, "/dev/nvme", 9) || !strncmp(src, "/dev/md", 7);
}

static void judge_readonly(struct node_ctx *c)
{
	const cJSON *mounts = cJSON_GetObjectItemCaseSensitive(c->facts, "mounts"), *m;
	int checked = 0, bad = 0;

	if (!cJSON_IsObject(mounts))
		return;
	cJSON_ArrayForEach(m, mounts) {
		const char *mp = m->string, *fs = hp_check_str(m, "fstype", "?");
		int sb = hp_json_bool(m, "sb_ro", 0), ro = hp_json_bool(m, "ro", 0);
		const char *why;

		if (!mp || !judged_mount(mp, m))
			continue;
		checked++;
		if (!sb && !ro)
			continue;
		bad++;
		why = sb ? "the filesystem itself is read-only (ext4 does this after an I/O or journal "
			   "error: see the kernel log)" :
			   "mounted with the ro option";
		if (!strcmp(mp, "/"))
			hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "Root filesystem read-only",
				    "Root filesystem read-only on %s (%.64s, %.16s): %s; nothing on the "
				    "node can write logs, containers or checkpoints", c->who,
				    hp_check_str(m, "source", "device unknown"), fs, why);
		else if (!strcmp(fs, "lustre"))
			hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "FSx for Lustre mount read-only",
				    "FSx for Lustre mount %.96s read-only on %s (%.64s): %s; jobs cannot "
				    "write checkpoints there unless it was mounted read-only on purpose",
				    mp, c->who, hp_check_str(m, "source", "?"), why);
		else
			hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "Volume mounted read-only",
				    "%.96s is read-only on %s (%.64s, %.16s): %s", mp, c->who,
				    hp_check_str(m, "source", "device unknown"), fs, why);
	}
	if (checked && !bad)
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "No read-only root, NVMe or FSx mount",
			    "No read-only root, NVMe or FSx mount on %s (%d mount%s checked)", c->who,
			    checked, checked == 1 ? "" : "s");
}

static void judge_memory(struct node_ctx *c)
{
	double total = hp_json_num(c->facts, "memory.total_kb", -1);
	double avail = hp_json_num(c->facts, "memory.available_kb", -1);
	double huge = hp_json_num(c->facts, "memory.hugepages_total", -1);
	const char *fi = hp_json_str(c->facts, "environment.FI_EFA_USE_HUGE_PAGE");
	char t[32], a[32];

	if (total > 0 && avail >= 0) {
		double pct = avail * 100 / total;

		if (pct < MEM_LOW_PCT)
			hp_node_say(c, HP_TAG_WARN, HP_P2, "I.3", "Memory nearly exhausted",
				    "Memory nearly exhausted on %s: %s of %s available (%.1f%%)", c->who,
				    hp_node_size(avail, a), hp_node_size(total, t), pct);
		else
			hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "Memory",
				    "Memory on %s: %s total, %s available (%.0f%%)", c->who,
				    hp_node_size(total, t), hp_node_size(avail, a), pct);
	}
	/*
	 * EFA registers memory at fork unless FI_EFA_USE_HUGE_PAGE=0 or huge
	 * pages are reserved. Only the node-wide default can be read here; a
	 * job may still set it itself, so this informs and never fails.
	 */
	if (hp_json_num(c->facts, "efa.uverbs", 0) > 0 && huge == 0 &&
	    cJSON_IsTrue(hp_json_get(c->facts, "environment_read")) && !(fi && !strcmp(fi, "0")))
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "EFA huge pages not configured node-wide",
			    "No huge pages reserved and FI_EFA_USE_HUGE_PAGE not set to 0 in "
			    "/etc/environment on %s; EFA jobs must set FI_EFA_USE_HUGE_PAGE=0 "
			    "themselves (section I.1)", c->who);
}

HP_CHECK(node_disk_root, HP_GROUP_ONNODE, 20,
	 .id = "node.disk-root", .section = "I.2", .prio = HP_P0, .each_node = judge_root);
HP_CHECK(node_disk_sagemaker, HP_GROUP_ONNODE, 30,
	 .id = "node.disk-sagemaker", .section = "I.6", .prio = HP_P1, .each_node = judge_sagemaker);
HP_CHECK(node_inodes, HP_GROUP_ONNODE, 40,
	 .id = "node.inodes", .section = "I.4", .prio = HP_P1, .each_node = judge_inodes);
HP_CHECK(node_shm, HP_GROUP_ONNODE, 50,
	 .id = "node.shm", .section = "I.1", .prio = HP_P1, .each_node = judge_shm);
HP_CHECK(node_nvme, HP_GROUP_ONNODE, 60,
	 .id = "node.nvme", .section = "I.7", .prio = HP_P1, .each_node = judge_nvme);
HP_CHECK(node_readonly, HP_GROUP_ONNODE, 65,
	 .id = "node.readonly", .section = "I.8", .prio = HP_P0, .each_node = judge_readonly);
HP_CHECK(node_disk_containerd, HP_GROUP_ONNODE, 70,
	 .id = "node.disk-containerd", .section = "I.2", .prio = HP_P1,
	 .each_node = judge_containerd_disk);
HP_CHECK(node_memory, HP_GROUP_ONNODE, 80,
	 .id = "node.memory", .section = "I.1", .prio = HP_P2, .each_node = judge_memory);
