/*
 * On-node system state: what the probe returned, OOM kills, time sync
 * (numeric offset and leap status; no tool means unknown, not unhealthy),
 * amazon-ssm-agent, containerd (EKS nodes only), slurmd/slurmctld/munge
 * (Slurm nodes only), kernel panics, lockups, hung tasks, NMIs and
 * machine checks, and storage failures (block I/O errors, NVMe resets,
 * ext4 journal aborts and read-only remounts, XFS shutdowns), matched on
 * the kernel's own texts.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hp/json.h"
#include "checks.h"
#include "node.h"

/* OOM kills younger than this fail; older ones in the same boot warn. */
#define OOM_RECENT_S (24 * 3600.0)
/* Clock offsets, seconds. */
#define CLOCK_FAIL_S 1.0
#define CLOCK_WARN_S 0.1
/* Kernel lines shown per finding. */
#define KERNEL_EVIDENCE 5

/* A probe entry keeps what this check quotes of the node's stderr, no more. */
_Static_assert(HP_FACTS_STDERR_CHARS == HP_CHECK_CLIP_CHARS,
	       "an entry's stderr is cut where the check clips it");

static void judge_probe(struct node_ctx *c)
{
	const cJSON *blocks = cJSON_GetObjectItemCaseSensitive(c->facts, "blocks");
	const char *err = hp_json_str(c->entry, "stderr");
	int n = cJSON_GetArraySize(blocks);
	double ms = hp_json_num(c->entry, "duration_ms", -1);
	struct node_say *s;

	if (!n) {
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(c->entry, "exit_code");
		char status[48] = "no exit status";

		/* A session that ended without an exit code says so, never "-1". */
		if (cJSON_IsNumber(code))
			snprintf(status, sizeof(status), "exit status %.0f", code->valuedouble);
		s = hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "Probe output holds no probe data",
				"Probe output from %s holds no probe data; nothing on the node could "
				"be checked (%s)", c->who, status);
		if (err && *err) {
			char clip[HP_CHECK_CLIP_SIZE];

			hp_node_evidence(s, "stderr: %s", hp_check_clip(err, clip));
		}
		return;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c->facts, "truncated")) ||
	    hp_json_bool(c->entry, "truncated", 0)) {
		hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "Probe output ended early",
			    "Probe output from %s ended early (no end marker after %d blocks); the "
			    "checks used what arrived", c->who, n);
		return;
	}
	if (ms >= 0)
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "On-node probe output received",
			    "On-node probe output received from %s (%d blocks, %.1f s)", c->who, n,
			    ms / 1000);
	else
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "On-node probe output received",
			    "On-node probe output received from %s (%d blocks)", c->who, n);
}

/* Kernel messages readable: the events list exists. */
static const cJSON *kernel_events(const struct node_ctx *c)
{
	return hp_json_arr(c->facts, "kmsg.events");
}

static double kcount(const struct node_ctx *c, const char *kind)
{
	return hp_json_num(hp_json_get(c->facts, "kmsg.counts"), kind, 0);
}

/* Evidence: the last n events of a kind (or accepted by pick), oldest first. */
static void last_lines(struct node_say *s, const cJSON *ev, const char *kind,
		       int (*pick)(const char *kind), size_t n)
{
	const cJSON *hit[16], *e;
	size_t k = 0, i;

	if (n > HP_ARRAY_LEN(hit))
		n = HP_ARRAY_LEN(hit);
	cJSON_ArrayForEach(e, ev) {
		const char *kd = hp_check_str(e, "kind", "");

		if (kind ? strcmp(kd, kind) : !pick(kd))
			continue;
		if (k == n) {
			memmove(hit, hit + 1, (n - 1) * sizeof(*hit));
			k--;
		}
		hit[k++] = e;
	}
	for (i = 0; i < k; i++) {
		char clip[HP_CHECK_CLIP_SIZE];

		hp_node_evidence(s, "%s", hp_check_clip(hp_json_str(hit[i], "text"), clip));
	}
}

/* "Killed process 93811 (python3) ..." -> "python3". */
static void victim(const char *text, char *out, size_t n)
{
	const char *p = strstr(text, "Killed process "), *open, *close;

	out[0] = '\0';
	if (!p || !(open = strchr(p, '(')) || !(close = strchr(open, ')')))
		return;
	snprintf(out, n, "%.*s", (int)(close - open - 1 < 64 ? close - open - 1 : 64), open + 1);
}

static void judge_oom(struct node_ctx *c)
{
	const cJSON *ev = kernel_events(c), *e, *last = NULL;
	double kills = kcount(c, "oom_kill"), invoked = kcount(c, "oom_invoked");
	double now = hp_json_num(c->facts, "node.epoch", -1), t;
	int cgroup = 0, system = 0;
	char when[32], who[80];
	struct node_say *s;

	if (!ev)
		return;
	if (!kills && !invoked) {
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "No OOM kills since boot",
			    "No OOM kills on %s since boot", c->who);
		return;
	}
	cJSON_ArrayForEach(e, ev) {
		const char *kind = hp_json_str(e, "kind");

		if (!kind || (strcmp(kind, "oom_kill") && strcmp(kind, "oom_invoked")))
			continue;
		if (!strcmp(kind, "oom_kill")) {
			if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "cgroup")))
				cgroup++;
			else
				system++;
			last = e;
		} else if (!last) {
			last = e;
		}
	}
	t = hp_json_num(last, "t", -1);
	victim(hp_check_str(last, "text", ""), who, sizeof(who));
	hp_node_time(t, when);
	/* Unknown ages count as recent: better a second look than a missed kill. */
	if (t < 0 || now < 0 || now - t < OOM_RECENT_S)
		s = hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "OOM kills in the last 24 hours",
				"OOM events on %s: %.0f process%s killed since boot (%d by a "
				"container memory limit, %d system-wide), latest %s%s%s",
				c->who, kills, kills == 1 ? "" : "es", cgroup, system, when,
				*who ? ": " : "", who);
	else
		s = hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "OOM kills earlier in this boot",
				"OOM events on %s earlier in this boot: %.0f process%s killed, latest "
				"%s%s%s", c->who, kills, kills == 1 ? "" : "es", when, *who ? ": " : "",
				who);
	last_lines(s, ev, "oom_kill", NULL, 3);
}

static void judge_time(struct node_ctx *c)
{
	const cJSON *ch = cJSON_GetObjectItemCaseSensitive(c->facts, "chrony");
	const cJSON *td = cJSON_GetObjectItemCaseSensitive(c->facts, "timedatectl");
	const char *leap = hp_json_str(ch, "leap"), *cerr = hp_json_str(ch, "error");
	double off = hp_json_num(ch, "offset_s", NAN), stratum = hp_json_num(ch, "stratum", -1);
	char why[400];

	if (leap && !strcmp(leap, "Not synchronised")) {
		hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "Time sync not healthy",
			    "Time sync not healthy on %s: chrony reports 'Not synchronised' "
			    "(stratum %.0f)", c->who, stratum);
		return;
	}
	if (!isnan(off)) {
		const char *dir = off >= 0 ? "ahead of" : "behind";

		if (fabs(off) > CLOCK_FAIL_S)
			hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "Clock off by more than 1 s",
				    "Clock %.3f s %s NTP time on %s (chrony, leap status %s); signed "
				    "AWS requests, TLS and munge break on skewed clocks", fabs(off), dir,
				    c->who, leap ? leap : "unknown");
		else if (fabs(off) > CLOCK_WARN_S)
			hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "Clock off by more than 0.1 s",
				    "Clock %.3f s %s NTP time on %s (chrony, leap status %s)", fabs(off),
				    dir, c->who, leap ? leap : "unknown");
		else
			hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "Time in sync",
				    "Time in sync on %s (chrony: offset %+.6f s, stratum %.0f, leap "
				    "status %s)", c->who, off, stratum, leap ? leap : "unknown");
		return;
	}
	/* chronyc installed but without an answer: is chronyd down? */
	if (cerr && (hp_node_unit_loaded(c, "chronyd") || hp_node_unit_loaded(c, "chrony")) &&
	    strcmp(hp_node_unit_state(c, "chronyd"), "active") &&
	    strcmp(hp_node_unit_state(c, "chrony"), "active")) {
		hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "chronyd not running",
			    "Time sync not healthy on %s: chronyd is not running (chronyc: %s)", c->who,
			    cerr);
		return;
	}
	if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(td, "synchronized"))) {
		hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "Time sync not healthy",
			    "Time sync not healthy on %s: timedatectl reports the clock is not "
			    "synchronised (no offset available)", c->who);
		return;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(td, "synchronized"))) {
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "Time in sync",
			    "Time in sync on %s (timedatectl; no offset available)", c->who);
		return;
	}
	if (!ch && !td)
		return;
	snprintf(why, sizeof(why), "chronyc %s; timedatectl %s",
		 !ch ? "not probed" : cJSON_IsFalse(hp_json_get(ch, "present")) ? "not installed" :
		 cerr ? cerr : "gave no offset",
		 !td ? "not probed" : cJSON_IsFalse(hp_json_get(td, "present")) ? "not installed" :
		 hp_check_str(td, "error", "gave no answer"));
	hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "Time sync state unknown",
		    "Time sync state unknown on %s (%s)", c->who, why);
}

/* Services could be read at all; otherwise say so once (from the ssm-agent check). */
static int services_ok(struct node_ctx *c, int say)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(c->facts, "services");

	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "available")))
		return 1;
	if (say && s)
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "Services not checked",
			    "Services not checked on %s: %s", c->who,
			    hp_check_str(s, "error", "systemctl gave no answer"));
	return 0;
}

static void judge_ssm_agent(struct node_ctx *c)
{
	static const char *const units[] = { "amazon-ssm-agent",
					     "snap.amazon-ssm-agent.amazon-ssm-agent" };
	const char *state = NULL;
	size_t i;

	if (!services_ok(c, 1))
		return;
	for (i = 0; i < HP_ARRAY_LEN(units); i++) {
		if (!strcmp(hp_node_unit_state(c, units[i]), "active")) {
			hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "amazon-ssm-agent active",
				    "amazon-ssm-agent active on %s", c->who);
			return;
		}
		if (hp_node_unit_loaded(c, units[i]) && !state)
			state = hp_node_unit_state(c, units[i]);
	}
	if (state)
		hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "amazon-ssm-agent inactive",
			    "amazon-ssm-agent inactive on %s (ActiveState %s)", c->who,
			    *state ? state : "unknown");
	else
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "amazon-ssm-agent not installed",
			    "amazon-ssm-agent is not installed as a systemd unit on %s", c->who);
}

static void judge_containerd(struct node_ctx *c)
{
	const char *state;

	/* Slurm nodes may run without containerd. */
	if (strcmp(c->orchestrator, "EKS") || !services_ok(c, 0))
		return;
	state = hp_node_unit_state(c, "containerd");
	if (!strcmp(state, "active"))
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "containerd active",
			    "containerd active on %s", c->who);
	else if (hp_node_unit_loaded(c, "containerd"))
		hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "containerd inactive",
			    "containerd inactive on %s (ActiveState %s); no pod on this node can run",
			    c->who, *state ? state : "unknown");
	else
		hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "containerd not installed",
			    "containerd is not installed on EKS %s", c->who);
}

static void judge_kubelet(struct node_ctx *c)
{
	const char *state;

	if (strcmp(c->orchestrator, "EKS") || !services_ok(c, 0))
		return;
	state = hp_node_unit_state(c, "kubelet");
	if (!strcmp(state, "active"))
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "kubelet active", "kubelet active on %s",
			    c->who);
	else if (hp_node_unit_loaded(c, "kubelet"))
		hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "kubelet inactive",
			    "kubelet inactive on %s (ActiveState %s); the node goes NotReady and no pod "
			    "is started on it", c->who, *state ? state : "unknown");
	else
		hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "kubelet not installed",
			    "kubelet is not installed as a systemd unit on EKS %s", c->who);
}

static void judge_provision(struct node_ctx *c)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(c->facts, "provision"), *x;
	double n = hp_json_num(d, "error_count", 0);
	struct node_say *s;

	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "found")))
		return;
	if (!n) {
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "provisioning.log shows no errors",
			    "/var/log/provision/provisioning.log on %s shows no errors (%.0f lines)",
			    c->who, hp_json_num(d, "lines", 0));
		return;
	}
	s = hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "provisioning.log shows lifecycle script errors",
			"Lifecycle script errors in /var/log/provision/provisioning.log on %s: %.0f "
			"error line%s of %.0f", c->who, n, n == 1 ? "" : "s", hp_json_num(d, "lines", 0));
	cJSON_ArrayForEach(x, hp_json_arr(d, "errors")) {
		char clip[HP_CHECK_CLIP_SIZE];

		if (cJSON_IsString(x))
			hp_node_evidence(s, "%s", hp_check_clip(x->valuestring, clip));
	}
}

static void judge_slurm(struct node_ctx *c)
{
	int slurmd, ctld;

	if (strcmp(c->orchestrator, "Slurm") || !services_ok(c, 0))
		return;
	if (!strcmp(hp_node_unit_state(c, "munge"), "active"))
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "munge active", "munge active on %s",
			    c->who);
	else if (hp_node_unit_loaded(c, "munge"))
		hp_node_say(c, HP_TAG_FAIL, HP_P0, "H.6", "munge inactive",
			    "munge inactive on %s (ActiveState %s); Slurm cannot authenticate",
			    c->who, hp_node_unit_state(c, "munge"));
	else
		hp_node_say(c, HP_TAG_WARN, HP_P1, "H.6", "munge not installed",
			    "munge is not installed on Slurm %s", c->who);
	slurmd = hp_node_unit_loaded(c, "slurmd");
	ctld = hp_node_unit_loaded(c, "slurmctld");
	if (ctld) {
		if (!strcmp(hp_node_unit_state(c, "slurmctld"), "active"))
			hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "slurmctld active",
				    "slurmctld active on controller %s", c->who);
		else
			hp_node_say(c, HP_TAG_FAIL, HP_P0, "H.5", "slurmctld inactive",
				    "slurmctld inactive on controller %s (ActiveState %s); every Slurm "
				    "operation is blocked", c->who, hp_node_unit_state(c, "slurmctld"));
	}
	if (slurmd) {
		if (!strcmp(hp_node_unit_state(c, "slurmd"), "active"))
			hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "slurmd active",
				    "slurmd active on %s", c->who);
		else
			hp_node_say(c, HP_TAG_FAIL, HP_P1, "H.1", "slurmd inactive",
				    "slurmd inactive on %s (ActiveState %s); Slurm will mark the node "
				    "down", c->who, hp_node_unit_state(c, "slurmd"));
	}
	if (!slurmd && !ctld)
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "No slurmd or slurmctld unit",
			    "No slurmd or slurmctld unit on %s (a login node?)", c->who);
}

static const struct {
	const char *kind, *label;
	enum hp_prio prio;
} kernel_kinds[] = {
	{ "panic", "kernel panic", HP_P0 },
	{ "soft_lockup", "soft lockup", HP_P0 },
	{ "hard_lockup", "hard lockup", HP_P0 },
	{ "kernel_bug", "kernel BUG", HP_P0 },
	{ "nmi", "NMI", HP_P0 },
	{ "hung_task", "hung task", HP_P1 },
	{ "mce", "machine check", HP_P1 },
};

static int is_kernel_kind(const char *kind)
{
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(kernel_kinds); i++)
		if (!strcmp(kind, kernel_kinds[i].kind))
			return 1;
	return 0;
}

static void judge_kernel(struct node_ctx *c)
{
	const cJSON *ev = kernel_events(c), *e;
	struct hp_buf what = HP_BUF_INIT(HP_MAX_LINE);
	enum hp_prio worst = HP_PNONE;
	double latest = -1, total = 0, aer;
	struct node_say *s;
	char when[32];
	size_t i;

	if (!ev) {
		const char *err = hp_json_str(c->facts, "kmsg.error");

		if (err)
			hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "Kernel messages unreadable",
				    "Kernel messages unreadable on %s (%s); OOM, kernel and Xid checks "
				    "skipped", c->who, err);
		return;
	}
	for (i = 0; i < HP_ARRAY_LEN(kernel_kinds); i++) {
		double n = kcount(c, kernel_kinds[i].kind);

		if (!n)
			continue;
		hp_buf_printf(&what, "%s%s \xC3\x97%.0f", what.len ? ", " : "", kernel_kinds[i].label,
			      n);
		if (kernel_kinds[i].prio < worst)
			worst = kernel_kinds[i].prio;
		total += n;
	}
	aer = kcount(c, "pcie_aer");
	if (aer) {
		struct node_say *a;
		char devs[160] = "";

		cJSON_ArrayForEach(e, ev) {
			const char *pci = hp_json_str(e, "pci");
			size_t len = strlen(devs);

			if (strcmp(hp_check_str(e, "kind", ""), "pcie_aer") || !pci || strstr(devs, pci) ||
			    len + strlen(pci) + 3 >= sizeof(devs))
				continue;
			snprintf(devs + len, sizeof(devs) - len, "%s%s", len ? ", " : "", pci);
			if (hp_json_num(e, "t", -1) > latest)
				latest = hp_json_num(e, "t", -1);
		}
		hp_node_time(latest, when);
		a = hp_node_say(c, HP_TAG_FAIL, HP_P0, "G.1", "Uncorrectable PCIe errors (AER)",
				"Uncorrectable PCIe errors on %s: %.0f AER report%s since boot%s%s, latest "
				"%s; a GPU, NIC or link is failing: drain and replace the node if it "
				"recurs", c->who, aer, aer == 1 ? "" : "s", *devs ? " from " : "", devs,
				when);
		last_lines(a, ev, "pcie_aer", NULL, 3);
		latest = -1;
	}
	/*
	 * A GPU the driver lost is a hardware error too (node.gpu-xid reports
	 * it), and so are storage errors (node.storage-errors) and NVSwitch
	 * SXids (node.nvswitch): no all-clear over them.
	 */
	if (!total && (aer || kcount(c, "gpu_lost") || kcount(c, "gpu_init") ||
		       kcount(c, "storage") || kcount(c, "sxid"))) {
		hp_buf_release(&what);
		return;
	}
	if (!total) {
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "No kernel panic, lockup or hardware-error "
			    "messages since boot", "No kernel panic, lockup, hung-task or hardware-error "
			    "messages on %s since boot", c->who);
		hp_buf_release(&what);
		return;
	}
	cJSON_ArrayForEach(e, ev)
		if (is_kernel_kind(hp_check_str(e, "kind", "")) && hp_json_num(e, "t", -1) > latest)
			latest = hp_json_num(e, "t", -1);
	hp_node_time(latest, when);
	if (worst == HP_P0)
		s = hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "Kernel panic / lockup messages since boot",
				"Kernel panic / watchdog on %s: %s since boot, latest %s", c->who,
				what.buf, when);
	else
		s = hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL,
				"Hung-task or machine-check messages since boot",
				"Kernel hung-task or machine-check messages on %s: %s since boot, "
				"latest %s", c->who, what.buf, when);
	last_lines(s, ev, NULL, is_kernel_kind, KERNEL_EVIDENCE);
	hp_buf_release(&what);
}

/* What a storage event says, for the finding. */
static const char *storage_label(const char *what)
{
	if (!strcmp(what, "io_error"))
		return "I/O errors";
	if (!strcmp(what, "nvme_reset"))
		return "NVMe timeouts/resets";
	if (!strcmp(what, "journal_abort"))
		return "ext4 journal aborted";
	if (!strcmp(what, "readonly"))
		return "remounted read-only";
	if (!strcmp(what, "fs_shutdown"))
		return "XFS shut down";
	return "storage error";
}

/* The filesystem no longer takes writes. */
static int storage_stops_fs(const char *what)
{
	return !strcmp(what, "journal_abort") || !strcmp(what, "readonly") ||
	       !strcmp(what, "fs_shutdown");
}

static int is_storage(const char *kind)
{
	return !strcmp(kind, "storage");
}

static void judge_storage(struct node_ctx *c)
{
	struct {
		char dev[48];
		char whats[160];
		int n;
	} devs[8];
	const cJSON *ev = kernel_events(c), *e;
	struct hp_buf list = HP_BUF_INIT(HP_MAX_LINE);
	double total = kcount(c, "storage"), latest = -1;
	size_t nd = 0, i;
	int stops = 0, more = 0;
	struct node_say *s;
	char when[32];

	if (!ev)
		return;
	if (!total) {
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "No storage errors in the kernel log since boot",
			    "No block I/O errors, NVMe resets, journal aborts, read-only remounts or XFS "
			    "shutdowns in the kernel log of %s since boot", c->who);
		hp_buf_release(&list);
		return;
	}
	cJSON_ArrayForEach(e, ev) {
		const char *what, *dev;

		if (strcmp(hp_check_str(e, "kind", ""), "storage"))
			continue;
		what = hp_check_str(e, "what", "");
		dev = hp_check_str(e, "dev", "device unknown");
		stops |= storage_stops_fs(what);
		if (hp_json_num(e, "t", -1) > latest)
			latest = hp_json_num(e, "t", -1);
		for (i = 0; i < nd && strcmp(devs[i].dev, dev); i++)
			;
		if (i == nd) {
			if (nd == HP_ARRAY_LEN(devs)) {
				more = 1;
				continue;
			}
			snprintf(devs[nd].dev, sizeof(devs[nd].dev), "%s", dev);
			devs[nd].whats[0] = '\0';
			devs[nd].n = 0;
			nd++;
		}
		devs[i].n++;
		if (!strstr(devs[i].whats, storage_label(what))) {
			size_t len = strlen(devs[i].whats);

			snprintf(devs[i].whats + len, sizeof(devs[i].whats) - len, "%s%s",
				 len ? ", " : "", storage_label(what));
		}
	}
	for (i = 0; i < nd; i++)
		hp_buf_printf(&list, "%s%s (%s)", i ? "; " : "", devs[i].dev, devs[i].whats);
	if (more)
		hp_buf_puts(&list, "; more devices");
	hp_node_time(latest, when);
	if (stops)
		s = hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "Filesystem stopped by storage errors",
				"Storage failure on %s: a filesystem stopped taking writes after errors "
				"(%.0f kernel message%s since boot, latest %s): %s; drain the node and "
				"replace it (or its volume)", c->who, total, total == 1 ? "" : "s", when,
				list.buf);
	else
		s = hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "Storage I/O errors in the kernel log",
				"Storage errors on %s: %.0f kernel message%s since boot, latest %s: %s; "
				"the device is failing or was lost", c->who, total, total == 1 ? "" : "s",
				when, list.buf);
	last_lines(s, ev, NULL, is_storage, KERNEL_EVIDENCE);
	hp_buf_release(&list);
}

HP_CHECK(node_probe, HP_GROUP_ONNODE, 10,
	 .id = "node.probe", .section = "K.5", .prio = HP_P2, .each_node = judge_probe);
HP_CHECK(node_oom, HP_GROUP_ONNODE, 90,
	 .id = "node.oom", .section = "I.3", .prio = HP_P1, .each_node = judge_oom);
HP_CHECK(node_time, HP_GROUP_ONNODE, 100,
	 .id = "node.time", .section = "I.5", .prio = HP_P1, .each_node = judge_time);
HP_CHECK(node_ssm_agent, HP_GROUP_ONNODE, 110,
	 .id = "node.ssm-agent", .section = "K.6", .prio = HP_P1, .each_node = judge_ssm_agent);
HP_CHECK(node_containerd, HP_GROUP_ONNODE, 120,
	 .id = "node.containerd", .section = "M.2", .prio = HP_P0, .each_node = judge_containerd);
HP_CHECK(node_kubelet, HP_GROUP_ONNODE, 130,
	 .id = "node.kubelet", .section = "M", .prio = HP_P0, .each_node = judge_kubelet);
HP_CHECK(node_provisioning, HP_GROUP_ONNODE, 140,
	 .id = "node.provisioning", .section = "D", .prio = HP_P1, .each_node = judge_provision);
HP_CHECK(node_slurm, HP_GROUP_ONNODE, 150,
	 .id = "node.slurm", .section = "H", .prio = HP_P1, .each_node = judge_slurm);
HP_CHECK(node_kernel, HP_GROUP_ONNODE, 160,
	 .id = "node.kernel", .section = "N.1", .prio = HP_P0, .each_node = judge_kernel);
HP_CHECK(node_storage_errors, HP_GROUP_ONNODE, 165,
	 .id = "node.storage-errors", .section = "I.8", .prio = HP_P0, .each_node = judge_storage);
