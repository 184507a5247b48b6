/*
 * The probe: the embedded script and its remote command line, the framing
 * parser (CR, escape sequences, missing END or DONE, garbage), and every
 * block parser on captured outputs (tests/data/probe/README.md says which
 * were captured on a machine and which were written from public formats).
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe-t.h"
#include "t.h"

static const cJSON *get(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

static const char *str(const cJSON *o, const char *path)
{
	return hp_json_str(o, path);
}

static void t_script_is_embedded(void)
{
	char *file = t_probe_script("probe.sh");

	T_STREQ(hp_probe_script(), file);
	T_CONTAINS(hp_probe_script(), "@@HP@@ DONE");
	/* The framing functions came in once, in place of the include line. */
	T_CONTAINS(hp_probe_script(), "\nblock() {\n");
	T_NOT_CONTAINS(strstr(hp_probe_script(), "\nblock() {\n") + 1, "\nblock() {\n");
	T_NOT_CONTAINS(hp_probe_script(), "\n#@include");
	free(file);
}

static void t_command_carries_script(void)
{
	struct hp_buf cmd = HP_BUF_INIT((size_t)1 << 20);
	const char *start = "sh -c 'printf %s ", *end = " | base64 -d | sh'";
	const char *b64;
	size_t n;
	unsigned char *dec;
	int k;

	hp_probe_command(&cmd);
	T_ASSERT(!strncmp(cmd.buf, start, strlen(start)));
	T_ASSERT(cmd.len > strlen(end) && !strcmp(cmd.buf + cmd.len - strlen(end), end));
	b64 = cmd.buf + strlen(start);
	n = cmd.len - strlen(start) - strlen(end);
	T_EQ(n % 4, 0);
	/* Only the base64 alphabet sits between the single quotes. */
	T_EQ(strspn(b64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="), n);
	dec = malloc(n);
	T_ASSERT(dec);
	k = EVP_DecodeBlock(dec, (const unsigned char *)b64, (int)n);
	T_ASSERT(k >= 0);
	/* EVP_DecodeBlock counts the padding as zero bytes. */
	while (k > 0 && dec[k - 1] == '\0')
		k--;
	T_EQ(k, strlen(hp_probe_script()));
	T_ASSERT(!memcmp(dec, hp_probe_script(), (size_t)k));
	free(dec);
	hp_buf_release(&cmd);
}

static void t_framing_blocks_and_codes(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	cJSON *f;

	pt_block(&out, "node", 0, "probe=1\nepoch=1795985085\nhostname=ip-10-1-7-21\nuptime=2574.30 3989.47");
	pt_block(&out, "chrony", 127, NULL);
	pt_block_file(&out, "df", 1, "df-P.txt");
	pt_done(&out);
	f = pt_parse(&out);
	T_ASSERT(cJSON_IsFalse(get(f, "truncated")));
	T_EQ(pt_num(f, "blocks.node.rc"), 0);
	T_EQ(pt_num(f, "blocks.node.lines"), 4);
	T_EQ(pt_num(f, "blocks.chrony.rc"), 127);
	T_EQ(pt_num(f, "blocks.chrony.lines"), 0);
	T_EQ(pt_num(f, "blocks.df.rc"), 1);
	T_EQ(pt_num(f, "node.epoch"), 1795985085);
	T_EQ(pt_num(f, "node.uptime_s") * 100, 257430);
	T_STREQ(str(f, "node.hostname"), "ip-10-1-7-21");
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "chrony.present")));
	cJSON_Delete(f);
	hp_buf_release(&out);
}

/* Through a pseudo-terminal: CRLF, colour and cursor sequences, a title string. */
static void t_framing_cr_and_escapes(void)
{
	const char *text =
		"\x1b]0;root@ip-10-1-7-21:~\x07\x1b[?2004h@@HP@@ BEGIN df\r\n"
		"Filesystem     1024-blocks     Used Available Capacity Mounted on\r\n"
		"\x1b[1m/dev/nvme0n1p1\x1b[0m   104845292  97385164   7460128      93% /\r\n"
		"\x1b[32m@@HP@@ END df 0\x1b[0m\r\n"
		"@@HP@@ DONE\r\n";
	cJSON *f = hp_probe_parse(text, strlen(text));

	T_ASSERT(cJSON_IsFalse(get(f, "truncated")));
	T_EQ(pt_num(f, "blocks.df.rc"), 0);
	T_EQ(pt_num(f, "fs./.use_pct"), 93);
	T_STREQ(str(f, "fs./.device"), "/dev/nvme0n1p1");
	T_EQ(pt_num(f, "fs./.used_kb"), 97385164);
	cJSON_Delete(f);
}

static void t_framing_missing_end_and_done(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	cJSON *f;

	pt_block_file(&out, "df", -1, "df-P-hyperpod.txt");
	pt_block(&out, "meminfo", -1, "MemTotal:       1000 kB\nMemAvailable:   10 kB");
	f = pt_parse(&out);
	T_ASSERT(cJSON_IsTrue(get(f, "truncated")));
	T_ASSERT(cJSON_IsNull(hp_json_get(f, "blocks.df.rc")));
	T_ASSERT(cJSON_IsNull(hp_json_get(f, "blocks.meminfo.rc")));
	/* What arrived is still used. */
	T_EQ(pt_num(f, "fs./.use_pct"), 93);
	T_EQ(pt_num(f, "memory.available_kb"), 10);
	cJSON_Delete(f);
	hp_buf_release(&out);
}

/* A last line without a newline puts the END marker mid-line. */
static void t_framing_marker_mid_line(void)
{
	const char *text = "@@HP@@ BEGIN hugepages\n128@@HP@@ END hugepages 0\n@@HP@@ DONE";
	cJSON *f = hp_probe_parse(text, strlen(text));

	T_EQ(pt_num(f, "nr_hugepages"), 128);
	T_EQ(pt_num(f, "blocks.hugepages.rc"), 0);
	T_ASSERT(cJSON_IsFalse(get(f, "truncated")));
	cJSON_Delete(f);
}

static void t_framing_garbage(void)
{
	static const char *const cases[] = {
		"",
		"@@HP@@",
		"@@HP@@ BEGIN",
		"@@HP@@ END df 0\n@@HP@@ END df x\n",
		"@@HP@@ BEGIN Bad-Name\nx\n@@HP@@ END Bad-Name 0\n",
		"@@HP@@ BEGIN df\n@@HP@@ END meminfo 0\n/dev/x 1 1 0 100% /\n",
		"@@HP@@ BEGIN df\n@@HP@@ END df 99999999999\n",
		"@@HP@@ BEGIN nvidia_gpu\n0, , , ,\n,,,,,,,,,,,,\n@@HP@@ BEGIN dcgm\n{\"body\":[1,2\n",
		"\x1b[\x1b]\x1b",
		"@@HP@@ BEGIN kmsg\n@@HP@@ BEGIN dmesg\nNVRM: Xid (\nNVRM: Xid (PCI:x): \n2026-13-45T99:99:99,0+00:00 x\n",
	};
	char bin[4096];
	size_t i;
	cJSON *f;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		f = hp_probe_parse(cases[i], strlen(cases[i]));
		T_ASSERT(cJSON_IsObject(f));
		T_ASSERT(cJSON_IsTrue(get(f, "truncated")));
		cJSON_Delete(f);
	}
	/* Binary noise with NULs and a stray marker inside. */
	for (i = 0; i < sizeof(bin); i++)
		bin[i] = (char)((i * 2654435761u) >> 13);
	memcpy(bin + 100, "@@HP@@ BEGIN df\n", 16);
	f = hp_probe_parse(bin, sizeof(bin));
	T_ASSERT(cJSON_IsObject(f));
	cJSON_Delete(f);
	f = hp_probe_parse(NULL, 10);
	T_ASSERT(cJSON_IsTrue(get(f, "truncated")));
	cJSON_Delete(f);
	/* An unknown block is listed, not parsed. */
	f = hp_probe_parse("@@HP@@ BEGIN later_block\nx\n@@HP@@ END later_block 3\n@@HP@@ DONE\n", 61);
	T_EQ(pt_num(f, "blocks.later_block.rc"), 3);
	cJSON_Delete(f);
}

static void t_df_captured(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	cJSON *f;

	pt_block_file(&out, "df", 1, "df-P.txt");
	pt_block_file(&out, "df_inodes", 1, "df-Pi.txt");
	pt_done(&out);
	f = pt_parse(&out);
	T_EQ(pt_num(f, "fs./.size_kb"), 264212084);
	T_EQ(pt_num(f, "fs./.used_kb"), 16738680);
	T_EQ(pt_num(f, "fs./.avail_kb"), 83598508);
	T_EQ(pt_num(f, "fs./.use_pct"), 17);
	T_STREQ(str(f, "fs./.device"), "/dev/vda");
	T_EQ(pt_num(f, "fs./dev/shm.size_kb"), 24683656);
	T_EQ(pt_num(f, "fs./dev/shm.use_pct"), 0);
	/* A path that is not there has no row; df's complaint is kept. */
	T_ASSERT(get(get(f, "fs"), "/opt/sagemaker") == NULL);
	T_STREQ(str(f, "df.error"), "df: /opt/sagemaker: No such file or directory");
	T_EQ(pt_num(f, "inodes./.total"), 16777216);
	T_EQ(pt_num(f, "inodes./.use_pct"), 3);
	T_EQ(pt_num(f, "inodes./dev/shm.used"), 1);
	cJSON_Delete(f);
	hp_buf_release(&out);
}

static void t_df_hyperpod_layout(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	cJSON *f;

	pt_block_file(&out, "df", 0, "df-P-hyperpod.txt");
	pt_block_file(&out, "df_inodes", 0, "df-Pi-hyperpod.txt");
	pt_done(&out);
	f = pt_parse(&out);
	T_EQ(pt_num(f, "fs./.use_pct"), 93);
	T_EQ(pt_num(f, "fs./opt/sagemaker.use_pct"), 22);
	T_EQ(pt_num(f, "fs./opt/dlami/nvme.size_kb"), 29878222848.0);
	T_EQ(pt_num(f, "inodes./.use_pct"), 93);
	T_ASSERT(hp_json_get(f, "df.error") == NULL);
	T_EQ(cJSON_GetArraySize(get(f, "fs")), 5);
	cJSON_Delete(f);
	hp_buf_release(&out);
}

static void t_mountinfo(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	const cJSON *m;
	cJSON *f;

	pt_block_file(&out, "mountinfo", 0, "mountinfo.txt");
	pt_done(&out);
	f = pt_parse(&out);
	m = get(f, "mounts");
	T_STREQ(str(get(m, "/"), "fstype"), "ext4");
	T_STREQ(str(get(m, "/"), "source"), "/dev/vda");
	/* /dev/shm is mounted twice; the later (visible) mount counts. */
	T_EQ(hp_json_num(get(m, "/dev/shm"), "size_kb", -1), 24683656);
	T_ASSERT(get(m, "/opt/sagemaker") == NULL);
	T_EQ(pt_num(f, "mount_count"), cJSON_GetArraySize(m));
	cJSON_Delete(f);
	hp_buf_release(&out);

	hp_buf_init(&out, 1 << 20);
	pt_block_file(&out, "mountinfo", 0, "mountinfo-hyperpod.txt");
	pt_done(&out);
	f = pt_parse(&out);
	m = get(f, "mounts");
	T_STREQ(str(get(m, "/opt/dlami/nvme"), "source"), "/dev/md0");
	T_STREQ(str(get(m, "/opt/sagemaker"), "fstype"), "xfs");
	T_STREQ(str(get(m, "/fsx"), "fstype"), "lustre");
	T_EQ(hp_json_num(get(m, "/dev/shm"), "size_kb", -1), 1006560784.0);
	T_ASSERT(cJSON_IsTrue(get(get(m, "/mnt/with space"), "ro")));
	T_ASSERT(cJSON_IsFalse(get(get(m, "/"), "ro")));
	T_EQ(hp_json_num(get(m, "/mnt/with space"), "size_kb", -1), 1024);
	T_ASSERT(cJSON_IsFalse(get(get(m, "/"), "sb_ro")));
	cJSON_Delete(f);
	hp_buf_release(&out);

	/* ext4 remounted itself read-only: the superblock says ro, the mount still rw. */
	hp_buf_init(&out, 1 << 20);
	pt_block_file(&out, "mountinfo", 0, "mountinfo-hyperpod-readonly.txt");
	pt_done(&out);
	f = pt_parse(&out);
	m = get(f, "mounts");
	T_ASSERT(cJSON_IsFalse(get(get(m, "/"), "ro")));
	T_ASSERT(cJSON_IsTrue(get(get(m, "/"), "sb_ro")));
	T_ASSERT(cJSON_IsTrue(get(get(m, "/fsx"), "ro")));
	T_ASSERT(cJSON_IsFalse(get(get(m, "/opt/sagemaker"), "sb_ro")));
	cJSON_Delete(f);
	hp_buf_release(&out);
}

static void t_memory_and_environment(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	cJSON *f;

	pt_block_file(&out, "meminfo", 0, "meminfo.txt");
	pt_block(&out, "hugepages", 0, "0");
	pt_block(&out, "environment", 0,
		 "FI_EFA_USE_HUGE_PAGE=0\n  export FI_PROVIDER=\"efa\"\nFI_EFA_FORK_SAFE='1'\nPATH=/x");
	pt_done(&out);
	f = pt_parse(&out);
	T_EQ(pt_num(f, "memory.total_kb"), 24683656);
	T_EQ(pt_num(f, "memory.available_kb"), 23834460);
	T_EQ(pt_num(f, "memory.hugepages_total"), 0);
	T_EQ(pt_num(f, "memory.hugepage_kb"), 2048);
	T_EQ(pt_num(f, "nr_hugepages"), 0);
	T_ASSERT(cJSON_IsTrue(get(f, "environment_read")));
	T_STREQ(str(f, "environment.FI_EFA_USE_HUGE_PAGE"), "0");
	T_STREQ(str(f, "environment.FI_PROVIDER"), "efa");
	T_STREQ(str(f, "environment.FI_EFA_FORK_SAFE"), "1");
	T_EQ(cJSON_GetArraySize(get(f, "environment")), 3);
	cJSON_Delete(f);
	hp_buf_release(&out);

	/* grep's 2: no /etc/environment at all. */
	hp_buf_init(&out, 1 << 20);
	pt_block(&out, "environment", 2, "grep: /etc/environment: No such file or directory");
	pt_done(&out);
	f = pt_parse(&out);
	T_ASSERT(cJSON_IsFalse(get(f, "environment_read")));
	T_ASSERT(get(f, "environment") == NULL);
	cJSON_Delete(f);
	hp_buf_release(&out);
}

static cJSON *kmsg_of(const char *block, int rc, const char *file)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	cJSON *f;

	pt_block(&out, "node", 0, "epoch=1795989600\nuptime=36000.00 1000.0");
	pt_block_file(&out, block, rc, file);
	pt_done(&out);
	f = pt_parse(&out);
	hp_buf_release(&out);
	return f;
}

static int count_kind(const cJSON *f, const char *kind)
{
	return (int)hp_json_num(hp_json_get(f, "kmsg.counts"), kind, -1);
}

static void t_kmsg_captured_boot_is_clean(void)
{
	cJSON *f = kmsg_of("dmesg", 0, "dmesg-iso-boot.txt");
	const cJSON *c = hp_json_get(f, "kmsg.counts"), *k;

	T_STREQ(str(f, "kmsg.source"), "dmesg");
	T_ASSERT(pt_num(f, "kmsg.lines") > 10);
	/* "NMI watchdog: Perf NMI watchdog permanently disabled" is not an event. */
	cJSON_ArrayForEach(k, c)
		T_EQ(k->valuedouble, 0);
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "kmsg.events")), 0);
	cJSON_Delete(f);
}

static void t_kmsg_kernel_faults(void)
{
	cJSON *f = kmsg_of("dmesg", 0, "dmesg-kernel-faults.txt");
	const cJSON *ev = hp_json_get(f, "kmsg.events"), *e;
	int cgroup = 0, system = 0;

	T_EQ(count_kind(f, "oom_kill"), 2);
	T_EQ(count_kind(f, "oom_invoked"), 1);
	T_EQ(count_kind(f, "hung_task"), 1);
	T_EQ(count_kind(f, "soft_lockup"), 1);
	T_EQ(count_kind(f, "mce"), 1);
	/* The benign "NMI watchdog: Enabled" boot line is not an NMI. */
	T_EQ(count_kind(f, "nmi"), 0);
	T_EQ(count_kind(f, "panic"), 0);
	T_EQ(cJSON_GetArraySize(ev), 6);
	cJSON_ArrayForEach(e, ev) {
		if (strcmp(str(e, "kind"), "oom_kill"))
			continue;
		if (cJSON_IsTrue(get(e, "cgroup")))
			cgroup++;
		else
			system++;
	}
	T_EQ(cgroup, 1);
	T_EQ(system, 1);
	/* 2026-11-29T19:05:11.431256Z */
	e = cJSON_GetArrayItem(ev, 0);
	T_STREQ(str(e, "kind"), "oom_invoked");
	T_EQ((long long)(hp_json_num(e, "t", 0) * 1000), 1795979111431LL);
	T_CONTAINS(str(e, "text"), "python3 invoked oom-killer");
	cJSON_Delete(f);
}

static void t_kmsg_xids(void)
{
	cJSON *f = kmsg_of("dmesg", 0, "dmesg-gpu-faults.txt");
	const cJSON *ev = hp_json_get(f, "kmsg.events"), *e;
	double codes[8];
	int n = 0;

	T_EQ(count_kind(f, "xid"), 5);
	T_EQ(count_kind(f, "nmi"), 0);
	/* The driver's own "GPU has fallen off the bus" line that follows Xid 79. */
	T_EQ(count_kind(f, "gpu_lost"), 1);
	cJSON_ArrayForEach(e, ev)
		if (n < 8 && !strcmp(str(e, "kind"), "xid"))
			codes[n++] = hp_json_num(e, "xid", -1);
	T_EQ(n, 5);
	T_EQ(codes[0], 13);
	T_EQ(codes[2], 45);
	T_EQ(codes[3], 79);
	T_EQ(codes[4], 154);
	T_STREQ(str(cJSON_GetArrayItem(ev, 3), "pci"), "0000:a8:00");
	T_STREQ(str(cJSON_GetArrayItem(ev, 4), "kind"), "gpu_lost");
	T_STREQ(str(cJSON_GetArrayItem(ev, 4), "pci"), "0000:a8:00.0");
	T_STREQ(str(cJSON_GetArrayItem(ev, 5), "action"), "Node Reboot Required");
	T_ASSERT(get(cJSON_GetArrayItem(ev, 3), "action") == NULL);
	cJSON_Delete(f);
}

/* NVIDIA driver texts without an Xid line, and PCIe AER reports (tests/data/probe/README.md). */
static void t_kmsg_driver_and_aer_texts(void)
{
	cJSON *f = kmsg_of("dmesg", 0, "dmesg-nvrm-offbus-noxid.txt");
	const cJSON *ev = hp_json_get(f, "kmsg.events");

	T_EQ(count_kind(f, "xid"), 0);
	/* Three printed lines are one message: joined, with the bus id of the first. */
	T_EQ(count_kind(f, "gpu_lost"), 1);
	T_EQ(count_kind(f, "gpu_init"), 1);
	T_EQ(cJSON_GetArraySize(ev), 2);
	T_STREQ(str(cJSON_GetArrayItem(ev, 0), "pci"), "0000:b3:00.0");
	T_CONTAINS(str(cJSON_GetArrayItem(ev, 0), "text"),
		   "NVRM: The NVIDIA GPU 0000:b3:00.0 NVRM: (PCI ID: 10de:26b5) installed in this system has NVRM: fallen off the bus");
	T_STREQ(str(cJSON_GetArrayItem(ev, 1), "kind"), "gpu_init");
	cJSON_Delete(f);

	f = kmsg_of("dmesg", 0, "dmesg-nvrm-rminit.txt");
	T_EQ(count_kind(f, "gpu_init"), 4);
	T_STREQ(str(cJSON_GetArrayItem(hp_json_get(f, "kmsg.events"), 0), "pci"), "0000:01:00.0");
	cJSON_Delete(f);

	f = kmsg_of("dmesg", 0, "dmesg-nvrm-offbus-old.txt");
	T_EQ(count_kind(f, "gpu_lost"), 2);
	cJSON_Delete(f);

	/* One uncorrectable report (the severity line), from the port that saw it. */
	f = kmsg_of("dmesg", 0, "dmesg-aer-uncorrected.txt");
	T_EQ(count_kind(f, "pcie_aer"), 1);
	T_STREQ(str(cJSON_GetArrayItem(hp_json_get(f, "kmsg.events"), 0), "pci"), "0000:00:03.0");
	cJSON_Delete(f);
	/* Corrected errors are not events. */
	f = kmsg_of("dmesg", 0, "dmesg-aer-corrected.txt");
	T_EQ(count_kind(f, "pcie_aer"), 0);
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "kmsg.events")), 0);
	cJSON_Delete(f);
}

/* The n-th event of a kind, or NULL. */
static const cJSON *nth_event(const cJSON *f, const char *kind, int n)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, hp_json_get(f, "kmsg.events"))
		if (!strcmp(str(e, "kind"), kind) && !n--)
			return e;
	return NULL;
}

/* Storage failures in the kernel's words, old and new (tests/data/probe/README.md). */
static void t_kmsg_storage(void)
{
	cJSON *f = kmsg_of("dmesg", 0, "dmesg-nvme-io-error-journal.txt");

	/* Eight request errors ("I/O error, dev nvme0n1"), no "blk_update_request:" prefix,
	   and the journal abort; neither the NVMe status line nor "Buffer I/O error" counts twice. */
	T_EQ(count_kind(f, "storage"), 9);
	T_STREQ(str(nth_event(f, "storage", 0), "what"), "io_error");
	T_STREQ(str(nth_event(f, "storage", 0), "dev"), "nvme0n1");
	T_STREQ(str(nth_event(f, "storage", 8), "what"), "journal_abort");
	/* "on device nvme0n1p1-8.": the journal inode and the stop are not the device. */
	T_STREQ(str(nth_event(f, "storage", 8), "dev"), "nvme0n1p1");
	cJSON_Delete(f);

	f = kmsg_of("dmesg", 0, "dmesg-ext4-remount-ro.txt");
	T_EQ(count_kind(f, "storage"), 2);
	T_STREQ(str(nth_event(f, "storage", 0), "what"), "journal_abort");
	T_STREQ(str(nth_event(f, "storage", 0), "dev"), "dm-25");
	T_STREQ(str(nth_event(f, "storage", 1), "what"), "readonly");
	T_STREQ(str(nth_event(f, "storage", 1), "dev"), "dm-25");
	cJSON_Delete(f);

	f = kmsg_of("dmesg", 0, "dmesg-nvme-timeout-reset.txt");
	T_EQ(count_kind(f, "storage"), 4);
	T_STREQ(str(nth_event(f, "storage", 0), "what"), "nvme_reset");
	T_STREQ(str(nth_event(f, "storage", 0), "dev"), "nvme2");
	cJSON_Delete(f);

	/* XFS: the older "Shutting down filesystem" and the newer "has been shut down". */
	f = kmsg_of("dmesg", 0, "dmesg-xfs-shutdown.txt");
	T_EQ(count_kind(f, "storage"), 1);
	T_STREQ(str(nth_event(f, "storage", 0), "what"), "fs_shutdown");
	T_STREQ(str(nth_event(f, "storage", 0), "dev"), "dm-4");
	cJSON_Delete(f);
	f = kmsg_of("dmesg", 0, "dmesg-xfs-shutdown-log.txt");
	T_EQ(count_kind(f, "storage"), 1);
	T_STREQ(str(nth_event(f, "storage", 0), "dev"), "sdb6");
	cJSON_Delete(f);

	/* "errors=remount-ro", clean XFS mounts and NVMe probe lines are no events. */
	f = kmsg_of("dmesg", 0, "dmesg-storage-benign.txt");
	T_EQ(count_kind(f, "storage"), 0);
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "kmsg.events")), 0);
	cJSON_Delete(f);
}

/* A flood of I/O errors keeps its newest lines only and pushes no Xid out. */
static void t_kmsg_storage_flood(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	cJSON *f;
	int i;

	pt_block(&out, "node", 0, "epoch=1795989600\nuptime=36000.00 1000.0");
	hp_buf_puts(&out, "@@HP@@ BEGIN dmesg\n");
	hp_buf_puts(&out, "[  100.0] NVRM: Xid (PCI:0000:97:00): 79, pid=1, GPU has fallen off the bus.\n");
	for (i = 0; i < 1400; i++)
		hp_buf_printf(&out, "[ %d.5] I/O error, dev nvme1n1, sector %d op 0x1:(WRITE) flags 0x0 "
			      "phys_seg 1 prio class 0\n", 200 + i, i);
	hp_buf_puts(&out, "@@HP@@ END dmesg 0\n");
	pt_done(&out);
	f = pt_parse(&out);
	T_EQ(count_kind(f, "storage"), 1400);
	T_EQ(count_kind(f, "xid"), 1);
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "kmsg.events")), 41);
	T_ASSERT(nth_event(f, "xid", 0) != NULL);
	cJSON_Delete(f);
	hp_buf_release(&out);
}

/* PCIe AER in the 6.x wording; NVLink Xids in the driver's own words; SXids. */
static void t_kmsg_new_wordings(void)
{
	cJSON *f = kmsg_of("dmesg", 0, "dmesg-aer-uncorrectable-6x.txt");

	/* "severity=Uncorrectable (Non-Fatal)": one report; the "error message received"
	   lines around it are not counted again. */
	T_EQ(count_kind(f, "pcie_aer"), 1);
	T_STREQ(str(nth_event(f, "pcie_aer", 0), "pci"), "0000:80:1b.4");
	cJSON_Delete(f);
	f = kmsg_of("dmesg", 0, "dmesg-aer-correctable-6x.txt");
	T_EQ(count_kind(f, "pcie_aer"), 0);
	cJSON_Delete(f);

	f = kmsg_of("dmesg", 0, "dmesg-xid-nvlink-words.txt");
	T_EQ(count_kind(f, "xid"), 4);
	T_EQ(hp_json_num(nth_event(f, "xid", 0), "xid", -1), 144);
	T_STREQ(str(nth_event(f, "xid", 0), "severity"), "nonfatal");
	T_STREQ(str(nth_event(f, "xid", 1), "severity"), "nonfatal");
	T_STREQ(str(nth_event(f, "xid", 2), "severity"), "fatal");
	T_STREQ(str(nth_event(f, "xid", 3), "severity"), "fatal");
	cJSON_Delete(f);
	/* The B200 report's anonymised bus id, and an Xid without a verdict. */
	f = kmsg_of("dmesg", 0, "dmesg-xid-nvlink-nonfatal-b200.txt");
	T_EQ(count_kind(f, "xid"), 2);
	T_STREQ(str(nth_event(f, "xid", 0), "severity"), "nonfatal");
	T_ASSERT(get(nth_event(f, "xid", 1), "severity") == NULL);
	cJSON_Delete(f);
	f = kmsg_of("dmesg", 0, "dmesg-xid-caused-by-previous.txt");
	T_EQ(count_kind(f, "xid"), 7);
	T_EQ(hp_json_num(nth_event(f, "xid", 0), "cause_xid", -1), 149);
	T_EQ(hp_json_num(nth_event(f, "xid", 1), "cause_xid", -1), 145);
	T_ASSERT(get(nth_event(f, "xid", 0), "severity") == NULL);
	cJSON_Delete(f);
	/* An Xid 13 line that says nothing of fatality gets no verdict. */
	f = kmsg_of("dmesg", 0, "dmesg-gpu-faults.txt");
	T_ASSERT(get(nth_event(f, "xid", 0), "severity") == NULL);
	T_ASSERT(get(nth_event(f, "xid", 0), "cause_xid") == NULL);
	cJSON_Delete(f);

	f = kmsg_of("dmesg", 0, "dmesg-sxid-nonfatal.txt");
	T_EQ(count_kind(f, "sxid"), 6);
	T_EQ(hp_json_num(nth_event(f, "sxid", 0), "sxid", -1), 22013);
	T_STREQ(str(nth_event(f, "sxid", 0), "pci"), "0000:04:00.0");
	T_ASSERT(get(nth_event(f, "sxid", 0), "severity") == NULL);
	T_STREQ(str(nth_event(f, "sxid", 1), "severity"), "nonfatal");
	cJSON_Delete(f);
	f = kmsg_of("dmesg", 0, "dmesg-sxid-data-only.txt");
	T_EQ(count_kind(f, "sxid"), 1);
	T_EQ(hp_json_num(nth_event(f, "sxid", 0), "sxid", -1), 12028);
	cJSON_Delete(f);
}

/* sysfs PCIe link values: "16.0 GT/s PCIe" and widths read; "Unknown" and "?" unknown. */
static void t_pci_link(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	const cJSON *l;
	cJSON *f;

	pt_block_file(&out, "pci_link", 0, "pci-link-p5.txt");
	pt_done(&out);
	f = pt_parse(&out);
	T_EQ(cJSON_GetArraySize(get(f, "pci_links")), 5);
	l = cJSON_GetArrayItem(get(f, "pci_links"), 1);
	T_STREQ(str(l, "pci"), "0000:64:00.0");
	T_STREQ(str(l, "kind"), "GPU");
	T_EQ(hp_json_num(l, "cur_speed", 0), 16.0);
	T_EQ(hp_json_num(l, "max_speed", 0), 32.0);
	T_EQ(hp_json_num(l, "cur_width", 0), 8);
	T_EQ(hp_json_num(l, "max_width", 0), 16);
	l = cJSON_GetArrayItem(get(f, "pci_links"), 4);
	T_STREQ(str(l, "kind"), "EFA device");
	T_EQ(hp_json_num(l, "cur_speed", 0), -1);
	T_EQ(hp_json_num(l, "cur_width", 0), -1);
	cJSON_Delete(f);
	hp_buf_release(&out);
}

static void t_kmsg_journal_and_plain(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	const cJSON *ev;
	cJSON *f;

	/* dmesg refused; the journal answers in short-iso with both zone forms. */
	pt_block(&out, "node", 0, "epoch=1795989600\nuptime=36000.00 1000.0");
	pt_block(&out, "dmesg", 1, "dmesg: read kernel buffer failed: Operation not permitted");
	pt_block_file(&out, "journal", 0, "journal-kernel.txt");
	pt_done(&out);
	f = pt_parse(&out);
	T_STREQ(str(f, "kmsg.source"), "journal");
	T_EQ(count_kind(f, "oom_kill"), 1);
	T_EQ(count_kind(f, "soft_lockup"), 1);
	T_EQ(count_kind(f, "panic"), 1);
	ev = hp_json_get(f, "kmsg.events");
	T_EQ(hp_json_num(cJSON_GetArrayItem(ev, 1), "t", 0), 1795982324);
	T_EQ(hp_json_num(cJSON_GetArrayItem(ev, 2), "t", 0), 1795983002);
	T_CONTAINS(str(cJSON_GetArrayItem(ev, 2), "text"), "Kernel panic - not syncing");
	cJSON_Delete(f);
	hp_buf_release(&out);

	/* Plain dmesg: seconds since boot, placed with the node's clock and uptime. */
	hp_buf_init(&out, 1 << 20);
	pt_block(&out, "node", 0, "epoch=1795989600\nuptime=36000.00 1000.0");
	pt_block(&out, "dmesg", 0, "[35000.250000] Out of memory: Killed process 7 (python3) total-vm:1kB");
	pt_done(&out);
	f = pt_parse(&out);
	T_EQ(hp_json_num(cJSON_GetArrayItem(hp_json_get(f, "kmsg.events"), 0), "t", 0) * 4,
	     (1795989600.0 - 36000 + 35000.25) * 4);
	cJSON_Delete(f);
	hp_buf_release(&out);
}

static void t_kmsg_unreadable(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	cJSON *f;

	pt_block(&out, "dmesg", 1, "dmesg: read kernel buffer failed: Operation not permitted");
	pt_block(&out, "journal", 1, "No journal files were found.");
	pt_done(&out);
	f = pt_parse(&out);
	T_STREQ(str(f, "kmsg.error"), "No journal files were found.");
	T_ASSERT(hp_json_get(f, "kmsg.events") == NULL);
	cJSON_Delete(f);
	hp_buf_release(&out);

	hp_buf_init(&out, 1 << 20);
	pt_block(&out, "dmesg", 1, "dmesg: read kernel buffer failed: Operation not permitted");
	pt_block(&out, "journal", 127, NULL);
	pt_done(&out);
	f = pt_parse(&out);
	T_STREQ(str(f, "kmsg.error"), "dmesg: read kernel buffer failed: Operation not permitted");
	cJSON_Delete(f);
	hp_buf_release(&out);
}

static cJSON *one_block(const char *block, int rc, const char *file)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	cJSON *f;

	if (file)
		pt_block_file(&out, block, rc, file);
	else
		pt_block(&out, block, rc, NULL);
	pt_done(&out);
	f = pt_parse(&out);
	hp_buf_release(&out);
	return f;
}

static void t_chrony(void)
{
	cJSON *f = one_block("chrony", 0, "chronyc-tracking.txt");

	T_EQ(pt_num(f, "chrony.offset_s") * 1e9, 12407);
	T_EQ(pt_num(f, "chrony.stratum"), 4);
	T_STREQ(str(f, "chrony.leap"), "Normal");
	T_STREQ(str(f, "chrony.reference"), "169.254.169.123");
	T_ASSERT(cJSON_IsTrue(hp_json_get(f, "chrony.synchronized")));
	T_ASSERT(cJSON_IsTrue(hp_json_get(f, "chrony.present")));
	T_ASSERT(hp_json_get(f, "chrony.error") == NULL);
	cJSON_Delete(f);

	f = one_block("chrony", 0, "chronyc-tracking-drift.txt");
	/* "slow of NTP time": the clock is behind, the offset negative. */
	T_EQ(pt_num(f, "chrony.offset_s") * 1e9, -2481930256.0);
	cJSON_Delete(f);

	f = one_block("chrony", 0, "chronyc-tracking-unsync.txt");
	T_STREQ(str(f, "chrony.leap"), "Not synchronised");
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "chrony.synchronized")));
	T_EQ(pt_num(f, "chrony.stratum"), 0);
	cJSON_Delete(f);

	f = one_block("chrony", 1, "chronyc-nodaemon.txt");
	T_STREQ(str(f, "chrony.error"), "506 Cannot talk to daemon");
	T_ASSERT(hp_json_get(f, "chrony.offset_s") == NULL);
	cJSON_Delete(f);

	f = one_block("chrony", 127, NULL);
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "chrony.present")));
	cJSON_Delete(f);
}

static void t_timedatectl(void)
{
	cJSON *f = one_block("timedatectl", 0, "timedatectl-status.txt");

	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "timedatectl.synchronized")));
	T_STREQ(str(f, "timedatectl.ntp_service"), "inactive");
	cJSON_Delete(f);
	f = one_block("timedatectl", 1, "timedatectl-no-bus.txt");
	T_ASSERT(hp_json_get(f, "timedatectl.synchronized") == NULL);
	T_STREQ(str(f, "timedatectl.error"),
		"System has not been booted with systemd as init system (PID 1). Can't operate.");
	cJSON_Delete(f);
}

static void t_services(void)
{
	cJSON *f = one_block("systemd", 0, "systemctl-show-eks.txt");
	const cJSON *u = hp_json_get(f, "services.units");

	T_ASSERT(cJSON_IsTrue(hp_json_get(f, "services.available")));
	T_EQ(cJSON_GetArraySize(u), 9);
	T_STREQ(str(get(u, "amazon-ssm-agent"), "active"), "active");
	T_STREQ(str(get(u, "containerd"), "active"), "failed");
	T_STREQ(str(get(u, "containerd"), "load"), "loaded");
	T_STREQ(str(get(u, "munge"), "load"), "not-found");
	T_STREQ(str(get(u, "snap.amazon-ssm-agent.amazon-ssm-agent"), "load"), "not-found");
	cJSON_Delete(f);

	f = one_block("systemd", 1, "systemctl-no-systemd.txt");
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "services.available")));
	T_CONTAINS(str(f, "services.error"), "not been booted with systemd");
	cJSON_Delete(f);

	f = one_block("systemd", 127, NULL);
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "services.available")));
	cJSON_Delete(f);
}

/* Records whose Id comes last, as some systemd versions print them. */
static void t_services_id_last(void)
{
	const char *text = "@@HP@@ BEGIN systemd\nLoadState=loaded\nActiveState=inactive\nSubState=dead\n"
			   "Id=munge.service\n\nLoadState=loaded\nActiveState=active\nSubState=running\n"
			   "Id=slurmd.service\n@@HP@@ END systemd 0\n@@HP@@ DONE\n";
	cJSON *f = hp_probe_parse(text, strlen(text));
	const cJSON *u = hp_json_get(f, "services.units");

	T_STREQ(str(get(u, "munge"), "active"), "inactive");
	T_STREQ(str(get(u, "slurmd"), "active"), "active");
	T_STREQ(str(get(u, "slurmd"), "sub"), "running");
	cJSON_Delete(f);
}

static const cJSON *gpu(const cJSON *f, int i)
{
	return cJSON_GetArrayItem(hp_json_get(f, "nvidia.gpus"), i);
}

static void t_nvidia_p5(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	cJSON *f;

	pt_block_file(&out, "nvidia_gpu", 0, "nvidia-smi-gpus-p5.txt");
	pt_block_file(&out, "nvidia_ecc", 0, "nvidia-smi-ecc.txt");
	pt_block_file(&out, "nvidia_clocks", 0, "nvidia-smi-clocks.txt");
	pt_block_file(&out, "nvidia_remap", 0, "nvidia-smi-remap.txt");
	pt_block_file(&out, "nvidia_recovery", 0, "nvidia-smi-recovery.txt");
	pt_done(&out);
	f = pt_parse(&out);
	T_ASSERT(cJSON_IsTrue(hp_json_get(f, "nvidia.present")));
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "nvidia.gpus")), 8);
	T_ASSERT(hp_json_get(f, "nvidia.error") == NULL);
	T_STREQ(str(gpu(f, 0), "name"), "NVIDIA H100 80GB HBM3");
	T_STREQ(str(gpu(f, 0), "bus_id"), "00000000:53:00.0");
	T_STREQ(str(gpu(f, 0), "driver"), "550.127.05");
	T_STREQ(str(gpu(f, 3), "ecc_mode"), "Enabled");
	T_EQ(hp_json_num(gpu(f, 3), "ecc_unc_vol", -1), 2);
	T_EQ(hp_json_num(gpu(f, 3), "ecc_corr_vol", -1), 12);
	T_EQ(hp_json_num(gpu(f, 6), "ecc_unc_agg", -1), 1);
	T_EQ(hp_json_num(gpu(f, 5), "throttle", -1), 0x40);
	T_EQ(hp_json_num(gpu(f, 5), "temp_c", -1), 87);
	T_EQ(hp_json_num(gpu(f, 5), "sm_mhz", -1), 1155);
	T_EQ(hp_json_num(gpu(f, 2), "throttle", -1), 1);
	/* Remapped rows join by bus id. */
	T_ASSERT(cJSON_IsTrue(hp_json_get(gpu(f, 4), "remap.pending")));
	T_ASSERT(cJSON_IsFalse(hp_json_get(gpu(f, 4), "remap.failure")));
	T_ASSERT(cJSON_IsTrue(hp_json_get(gpu(f, 7), "remap.failure")));
	T_EQ(hp_json_num(gpu(f, 7), "remap.unc", -1), 8);
	T_EQ(hp_json_num(gpu(f, 1), "remap.corr", -1), 3);
	T_STREQ(str(gpu(f, 4), "recovery_action"), "Node Reboot Required");
	T_STREQ(str(gpu(f, 0), "recovery_action"), "None");
	cJSON_Delete(f);
	hp_buf_release(&out);
}

static void t_nvidia_failures(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	cJSON *f;

	pt_block_file(&out, "nvidia_gpu", 0, "nvidia-smi-gpus-lost.txt");
	/* The other queries still list eight GPUs: the GPU list alone decides. */
	pt_block_file(&out, "nvidia_ecc", 0, "nvidia-smi-ecc.txt");
	pt_block_file(&out, "nvidia_recovery", 2, "nvidia-smi-recovery-old-driver.txt");
	pt_block(&out, "nvidia_remap", 0, "00000000:53:00.0, [N/A], [N/A], [N/A], [N/A]");
	pt_done(&out);
	f = pt_parse(&out);
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "nvidia.gpus")), 7);
	T_STREQ(str(f, "nvidia.error"), "Unable to determine the device handle for GPU0000:A8:00.0: Unknown Error");
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "nvidia.errors")), 1);
	T_ASSERT(get(gpu(f, 0), "recovery_action") == NULL);
	/* [N/A] is not a value. */
	T_ASSERT(get(gpu(f, 0), "remap") == NULL);
	cJSON_Delete(f);
	hp_buf_release(&out);

	f = one_block("nvidia_gpu", 9, "nvidia-smi-nodriver.txt");
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "nvidia.gpus")), 0);
	T_CONTAINS(str(f, "nvidia.error"), "couldn't communicate with the NVIDIA driver");
	T_EQ(pt_num(f, "nvidia.rc"), 9);
	cJSON_Delete(f);

	f = one_block("nvidia_gpu", 124, NULL);
	T_ASSERT(cJSON_IsTrue(hp_json_get(f, "nvidia.timed_out")));
	cJSON_Delete(f);

	f = one_block("nvidia_gpu", 127, NULL);
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "nvidia.present")));
	T_ASSERT(hp_json_get(f, "nvidia.gpus") == NULL);
	cJSON_Delete(f);
}

/* nvidia-smi stopping at a GPU it cannot reach (both spellings of the message). */
static void t_nvidia_handle_lost(void)
{
	cJSON *f = one_block("nvidia_gpu", 15, "nvidia-smi-handle-unknown.txt");

	T_EQ(cJSON_GetArraySize(hp_json_get(f, "nvidia.gpus")), 0);
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "nvidia.unreachable")), 1);
	T_STREQ(cJSON_GetArrayItem(hp_json_get(f, "nvidia.unreachable"), 0)->valuestring, "0000:20:00.0");
	T_STREQ(str(f, "nvidia.unreachable_reason"), "Unknown Error");
	T_EQ(pt_num(f, "nvidia.rc"), 15);
	cJSON_Delete(f);
	f = one_block("nvidia_gpu", 255, "nvidia-smi-handle-unknown-spaced.txt");
	T_STREQ(cJSON_GetArrayItem(hp_json_get(f, "nvidia.unreachable"), 0)->valuestring, "0000:0B:00.0");
	cJSON_Delete(f);
	/* The other form: rows for the GPUs before and after the lost one. */
	f = one_block("nvidia_gpu", 0, "nvidia-smi-gpus-lost.txt");
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "nvidia.gpus")), 7);
	T_STREQ(cJSON_GetArrayItem(hp_json_get(f, "nvidia.unreachable"), 0)->valuestring, "0000:A8:00.0");
	cJSON_Delete(f);
}

/* Values nvidia-smi could not read are recorded, never taken as zero. */
static void t_nvidia_unreadable(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	cJSON *f;
	int i;

	pt_block_file(&out, "nvidia_gpu", 0, "nvidia-smi-gpus-p5.txt");
	pt_block_file(&out, "nvidia_ecc", 0, "nvidia-smi-ecc-unreadable.txt");
	pt_block_file(&out, "nvidia_clocks", 0, "nvidia-smi-clocks-unreadable.txt");
	pt_block_file(&out, "nvidia_remap", 0, "nvidia-smi-remap-unreadable.txt");
	pt_block_file(&out, "nvidia_recovery", 0, "nvidia-smi-recovery-unreadable.txt");
	pt_done(&out);
	f = pt_parse(&out);
	T_STREQ(str(gpu(f, 2), "unreadable.ecc"), "[Unknown Error]");
	T_ASSERT(get(gpu(f, 2), "ecc_unc_vol") == NULL);
	T_STREQ(str(gpu(f, 4), "unreadable.ecc"), "[N/A]");
	T_STREQ(str(gpu(f, 2), "unreadable.clocks"), "[GPU requires reset]");
	T_STREQ(str(gpu(f, 2), "unreadable.remap"), "[Unknown Error]");
	T_STREQ(str(gpu(f, 2), "unreadable.recovery"), "[Unknown Error]");
	T_ASSERT(get(gpu(f, 2), "recovery_action") == NULL);
	for (i = 0; i < 8; i++)
		if (i != 2 && i != 4)
			T_ASSERT(get(gpu(f, i), "unreadable") == NULL);
	cJSON_Delete(f);
	hp_buf_release(&out);

	/* ECC off: its counters are N/A by design, not unreadable. */
	hp_buf_init(&out, 1 << 20);
	pt_block(&out, "nvidia_gpu", 0, "0, 00000000:53:00.0, NVIDIA H100 80GB HBM3, GPU-0, 550.127.05");
	pt_block(&out, "nvidia_ecc", 0, "0, Disabled, [N/A], [N/A], [N/A], [N/A]");
	/* A query that failed outright leaves every GPU unread; an unknown field (exit 2) does not. */
	pt_block(&out, "nvidia_clocks", 255, "Unable to determine the device handle for GPU0000:53:00.0: Unknown Error");
	pt_block_file(&out, "nvidia_recovery", 2, "nvidia-smi-recovery-old-driver.txt");
	pt_done(&out);
	f = pt_parse(&out);
	T_ASSERT(get(gpu(f, 0), "unreadable") != NULL);
	T_ASSERT(hp_json_get(gpu(f, 0), "unreadable.ecc") == NULL);
	T_ASSERT(hp_json_get(gpu(f, 0), "unreadable.recovery") == NULL);
	T_CONTAINS(str(gpu(f, 0), "unreadable.clocks"), "Unknown Error");
	cJSON_Delete(f);
	hp_buf_release(&out);
}

/* NVLink state and counters join the GPUs of the GPU list by index. */
static void t_nvlink(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	const cJSON *in;
	cJSON *f;

	pt_block(&out, "nvidia_gpu", 0, "3, 00000000:86:00.0, Tesla V100-SXM2-32GB, GPU-3, 535.54.03");
	pt_block_file(&out, "nvlink_status", 0, "nvidia-smi-nvlink-s-inactive.txt");
	pt_done(&out);
	f = pt_parse(&out);
	T_EQ(hp_json_num(gpu(f, 0), "nvlink.links", -1), 6);
	in = hp_json_get(gpu(f, 0), "nvlink.inactive");
	T_EQ(cJSON_GetArraySize(in), 2);
	T_EQ(cJSON_GetArrayItem(in, 0)->valuedouble, 3);
	T_EQ(cJSON_GetArrayItem(in, 1)->valuedouble, 5);
	cJSON_Delete(f);
	hp_buf_release(&out);

	hp_buf_init(&out, 1 << 20);
	pt_block_file(&out, "nvidia_gpu", 0, "nvidia-smi-gpus-p5.txt");
	pt_block_file(&out, "nvlink_errors", 0, "nvidia-smi-nvlink-e-errors.txt");
	pt_done(&out);
	f = pt_parse(&out);
	T_EQ(hp_json_num(gpu(f, 0), "nvlink.errors.Replay", -1), 0);
	T_EQ(hp_json_num(gpu(f, 1), "nvlink.errors.Replay", -1), 17);
	T_EQ(hp_json_num(gpu(f, 1), "nvlink.errors.Recovery", -1), 2);
	/* [N/A] is not counted as zero or as a number. */
	T_EQ(hp_json_num(gpu(f, 1), "nvlink.errors.CRC", -1), 31);
	T_ASSERT(get(gpu(f, 2), "nvlink") == NULL);
	cJSON_Delete(f);
	hp_buf_release(&out);

	/* The public H100 sample: three counters per link, all zero. */
	hp_buf_init(&out, 1 << 20);
	pt_block_file(&out, "nvidia_gpu", 0, "nvidia-smi-gpus-p5.txt");
	pt_block_file(&out, "nvlink_errors", 0, "nvidia-smi-nvlink-e-h100.txt");
	pt_block(&out, "nvlink_status", 2, "unexpected arguments");
	pt_done(&out);
	f = pt_parse(&out);
	T_EQ(hp_json_num(gpu(f, 0), "nvlink.errors.CRC", -1), 0);
	T_STREQ(str(f, "nvidia.nvlink_error"), "unexpected arguments");
	cJSON_Delete(f);
	hp_buf_release(&out);
}

static void t_nvvs_netdev_provision_imds(void)
{
	cJSON *f = one_block("nvvs", 0, "nvvs-log-benign.txt");

	T_ASSERT(cJSON_IsTrue(hp_json_get(f, "nvvs.found")));
	T_STREQ(str(f, "nvvs.file"), "nvvs.log");
	T_EQ(pt_num(f, "nvvs.lines"), 6);
	/* A WARN line saying "Error getting ..." is not a failed diagnostic. */
	T_EQ(pt_num(f, "nvvs.signal_count"), 0);
	cJSON_Delete(f);
	f = one_block("nvvs", 0, "nvvs-log-failure.txt");
	T_EQ(pt_num(f, "nvvs.signal_count"), 2);
	T_CONTAINS(cJSON_GetArrayItem(hp_json_get(f, "nvvs.signals"), 0)->valuestring, "row remappings are pending");
	cJSON_Delete(f);
	f = one_block("nvvs", 2, NULL);
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "nvvs.found")));
	cJSON_Delete(f);

	f = one_block("provision", 0, "provisioning-log-errors.txt");
	T_EQ(pt_num(f, "provision.lines"), 1842);
	/* "0 errors so far" and the download line do not count. */
	T_EQ(pt_num(f, "provision.error_count"), 3);
	T_CONTAINS(cJSON_GetArrayItem(hp_json_get(f, "provision.errors"), 0)->valuestring, "215:fatal error");
	cJSON_Delete(f);
	f = one_block("provision", 0, "provisioning-log-clean.txt");
	T_EQ(pt_num(f, "provision.error_count"), 0);
	cJSON_Delete(f);

	{
		struct hp_buf out = HP_BUF_INIT(1 << 16);

		pt_block(&out, "netdev", 0, "ens32 918273 812736 0 0 12 0\nveth1 ? ? ? ? ? ?\nbad line");
		pt_block(&out, "imds", 0, "token=ok\ncurl=0\ninstance_type=p5.48xlarge");
		pt_done(&out);
		f = pt_parse(&out);
		T_EQ(cJSON_GetArraySize(hp_json_get(f, "netdev.interfaces")), 2);
		T_EQ(hp_json_num(cJSON_GetArrayItem(hp_json_get(f, "netdev.interfaces"), 0), "rx_dropped", -1), 12);
		T_ASSERT(hp_json_get(cJSON_GetArrayItem(hp_json_get(f, "netdev.interfaces"), 1), "rx_errors") == NULL);
		T_ASSERT(cJSON_IsTrue(hp_json_get(f, "imds.token")));
		T_STREQ(str(f, "imds.instance_type"), "p5.48xlarge");
		cJSON_Delete(f);
		hp_buf_release(&out);
	}
	f = one_block("imds", 1, NULL);
	T_ASSERT(hp_json_get(f, "imds.token") == NULL);
	cJSON_Delete(f);
}

static void t_pci(void)
{
	cJSON *f = one_block("pci", 0, "pci-p5.txt");

	T_EQ(pt_num(f, "pci.nvidia_gpus"), 8);
	T_EQ(pt_num(f, "pci.nvidia_devices"), 12);
	T_EQ(pt_num(f, "pci.efa"), 32);
	T_EQ(pt_num(f, "pci.amazon_devices"), 41);
	cJSON_Delete(f);
	/* No sysfs: nothing known. */
	f = one_block("pci", 2, NULL);
	T_ASSERT(get(f, "pci") == NULL);
	cJSON_Delete(f);
}

static void t_dcgm(void)
{
	cJSON *f = one_block("dcgm", 0, "dcgmi-health-healthy.json");
	const cJSON *inc;

	T_STREQ(str(f, "dcgm.health"), "Healthy");
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "dcgm.incidents")), 0);
	cJSON_Delete(f);

	f = one_block("dcgm", 0, "dcgmi-health-failure.json");
	T_STREQ(str(f, "dcgm.health"), "Failure");
	inc = cJSON_GetArrayItem(hp_json_get(f, "dcgm.incidents"), 0);
	T_STREQ(str(inc, "entity"), "GPU 3");
	T_STREQ(str(inc, "system"), "Memory system");
	T_STREQ(str(inc, "health"), "Failure");
	T_STREQ(str(inc, "message"), "Detected 2 volatile double-bit ECC error(s) in GPU 3.");
	cJSON_Delete(f);

	f = one_block("dcgm", 0, "dcgmi-health-table.txt");
	T_STREQ(str(f, "dcgm.health"), "Warning");
	cJSON_Delete(f);

	f = one_block("dcgm", 255, "dcgmi-noengine.txt");
	T_ASSERT(hp_json_get(f, "dcgm.health") == NULL);
	T_STREQ(str(f, "dcgm.error"), "Error: unable to establish a connection to the specified host: localhost");
	cJSON_Delete(f);

	f = one_block("dcgm", 127, NULL);
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "dcgm.present")));
	cJSON_Delete(f);
}

static void t_neuron(void)
{
	cJSON *f = one_block("neuron", 0, "neuron-ls-trn1.txt");

	T_EQ(pt_num(f, "neuron.devices"), 16);
	T_EQ(pt_num(f, "neuron.cores"), 32);
	cJSON_Delete(f);
	f = one_block("neuron", 127, NULL);
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "neuron.present")));
	T_ASSERT(hp_json_get(f, "neuron.devices") == NULL);
	cJSON_Delete(f);
}

static void t_efa(void)
{
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	const cJSON *p;
	cJSON *f;
	int i;

	hp_buf_puts(&out, "@@HP@@ BEGIN ib_devices\nrdma_cm\n");
	for (i = 0; i < 32; i++)
		hp_buf_printf(&out, "uverbs%d\n", i);
	hp_buf_puts(&out, "@@HP@@ END ib_devices 0\n");
	pt_block(&out, "ib_ports", 0, "rdmap79s0 1 4: ACTIVE\nrdmap80s0 1 1: DOWN\nrdmap81s0");
	pt_block_file(&out, "fi_info", 0, "fi_info-efa.txt");
	pt_block(&out, "modules", 0, "efa 163840 0 - Live 0xffffffffc0ab3000\nib_uverbs 196608 2 efa, Live 0x0\n"
				     "nvidia_uvm 1794048 0 - Live 0x0");
	pt_done(&out);
	f = pt_parse(&out);
	T_EQ(pt_num(f, "efa.uverbs"), 32);
	T_ASSERT(cJSON_IsTrue(hp_json_get(f, "efa.rdma_cm")));
	T_ASSERT(cJSON_IsTrue(hp_json_get(f, "efa.dev_read")));
	T_EQ(pt_num(f, "efa.ib_devices"), 3);
	p = hp_json_get(f, "efa.ports");
	T_EQ(cJSON_GetArraySize(p), 2);
	T_STREQ(str(cJSON_GetArrayItem(p, 1), "state"), "DOWN");
	T_STREQ(str(cJSON_GetArrayItem(p, 0), "device"), "rdmap79s0");
	T_EQ(pt_num(f, "efa.fi_info.efa_providers"), 4);
	T_ASSERT(cJSON_IsTrue(hp_json_get(f, "modules.efa")));
	T_ASSERT(cJSON_IsTrue(hp_json_get(f, "modules.ib_uverbs")));
	/* nvidia_uvm is not the nvidia module. */
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "modules.nvidia")));
	cJSON_Delete(f);
	hp_buf_release(&out);

	hp_buf_init(&out, 1 << 20);
	pt_block(&out, "ib_devices", 2, NULL);
	pt_block_file(&out, "fi_info", 1, "fi_info-noefa.txt");
	pt_done(&out);
	f = pt_parse(&out);
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "efa.dev_read")));
	T_EQ(pt_num(f, "efa.uverbs"), 0);
	T_EQ(pt_num(f, "efa.fi_info.efa_providers"), 0);
	T_STREQ(str(f, "efa.fi_info.error"), "fi_getinfo: -61 (No data available)");
	cJSON_Delete(f);
	hp_buf_release(&out);
}

/* The whole probe as it ran on the development machine (no GPU, no systemd). */
static void t_captured_probe_run(void)
{
	char *text = pt_file("probe-debian-vm.txt");
	cJSON *f = hp_probe_parse(text, strlen(text));

	T_ASSERT(cJSON_IsFalse(get(f, "truncated")));
	T_EQ(pt_num(f, "node.probe"), 1);
	T_ASSERT(pt_num(f, "fs./.use_pct") >= 0);
	T_ASSERT(get(get(f, "mounts"), "/") != NULL);
	T_ASSERT(pt_num(f, "memory.total_kb") > 0);
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "chrony.present")));
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "nvidia.present")));
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "neuron.present")));
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "efa.fi_info.present")));
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "services.available")));
	T_STREQ(str(f, "kmsg.source"), "dmesg");
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "kmsg.events")), 0);
	cJSON_Delete(f);
	free(text);
}

T_MAIN(T(t_script_is_embedded), T(t_command_carries_script), T(t_framing_blocks_and_codes),
       T(t_framing_cr_and_escapes), T(t_framing_missing_end_and_done), T(t_framing_marker_mid_line),
       T(t_framing_garbage),  T(t_df_captured),
       T(t_df_hyperpod_layout), T(t_mountinfo), T(t_memory_and_environment),
       T(t_kmsg_captured_boot_is_clean), T(t_kmsg_kernel_faults), T(t_kmsg_xids),
       T(t_kmsg_driver_and_aer_texts), T(t_kmsg_storage), T(t_kmsg_storage_flood), T(t_kmsg_new_wordings), T(t_pci_link), T(t_kmsg_journal_and_plain), T(t_kmsg_unreadable), T(t_chrony), T(t_timedatectl),
       T(t_services), T(t_services_id_last), T(t_nvidia_p5), T(t_nvidia_failures),
       T(t_nvidia_handle_lost), T(t_nvidia_unreadable), T(t_nvlink),
       T(t_nvvs_netdev_provision_imds), T(t_pci),
       T(t_dcgm), T(t_neuron), T(t_efa), T(t_captured_probe_run))
