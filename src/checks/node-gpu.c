/*
 * On-node NVIDIA GPU checks: GPU count against the instance type (or the
 * PCI functions when the type is unknown), Xids judged by the driver's own
 * words where it prints them ("Nonfatal", "Fatal", "caused by previous Xid
 * N"), else classified after NVIDIA's Xid catalog (application Xids are not
 * hardware failures), ECC counters
 * (volatile uncorrectable fails; lifetime counts are history), row-remap
 * failure and pending state, the driver's recovery action, hardware clock
 * throttling, and DCGM health. Nodes without GPUs are left alone.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hp/json.h"
#include "checks.h"
#include "node.h"

/* Corrected ECC errors per day above which memory is suspect (section G.1). */
#define CE_PER_DAY 100.0

/* NVML clock throttle reason bits. */
#define THR_HW_SLOWDOWN 0x8ULL
#define THR_SW_THERMAL 0x20ULL
#define THR_HW_THERMAL 0x40ULL
#define THR_HW_POWER_BRAKE 0x80ULL

/* How hpnode treats each Xid, after NVIDIA's catalog (Ampere and later). */
static const struct xid_class {
	int lo, hi;                /* a code or a range */
	const char *name;
	enum hp_tag tag;
	enum hp_prio prio;
	const char *action;
} xid_classes[] = {
	{ 13, 13, "Graphics Engine Exception", HP_TAG_INFO, HP_PNONE,
	  "an application fault, not a GPU failure: restart the application" },
	{ 31, 31, "GPU memory page fault", HP_TAG_INFO, HP_PNONE,
	  "mostly an application fault: restart the application; if it repeats on one GPU, look closer" },
	{ 43, 43, "GPU stopped processing", HP_TAG_INFO, HP_PNONE,
	  "an application fault; the GPU stays healthy" },
	{ 45, 45, "Preemptive cleanup", HP_TAG_INFO, HP_PNONE,
	  "follows an aborted application or a reset; judge by the Xids logged with it" },
	{ 63, 63, "GPU memory remapping event", HP_TAG_INFO, HP_PNONE,
	  "a row remap was recorded; the row-remap state says whether it needs a reset" },
	{ 68, 68, "NVDEC0 Exception", HP_TAG_INFO, HP_PNONE, "restart the application" },
	{ 69, 69, "Graphics Engine class error", HP_TAG_INFO, HP_PNONE, "restart the application" },
	{ 92, 92, "High single-bit ECC error rate", HP_TAG_WARN, HP_P2,
	  "many corrected errors: watch the corrected ECC rate" },
	{ 94, 94, "Contained memory error", HP_TAG_WARN, HP_P1,
	  "restart the affected application; reboot the node to reset the GPU when convenient" },
	{ 48, 48, "Double Bit ECC Error", HP_TAG_FAIL, HP_P0,
	  "uncorrectable memory error: reboot the node to reset the GPU; replace it if it recurs" },
	{ 54, 54, "Auxiliary power problem", HP_TAG_FAIL, HP_P0,
	  "a hardware fault: drain and replace the node" },
	{ 62, 62, "Internal micro-controller halt", HP_TAG_FAIL, HP_P0,
	  "reboot the node to reset the GPU; replace it if it recurs" },
	{ 64, 64, "GPU memory remapping failure", HP_TAG_FAIL, HP_P0,
	  "reboot the node to reset the GPU, then check the row-remap state" },
	{ 74, 74, "NVLink Error", HP_TAG_FAIL, HP_P0,
	  "reboot the node; replace it if the link stays down (a failed peer GPU also causes it)" },
	{ 79, 79, "GPU has fallen off the bus", HP_TAG_FAIL, HP_P0,
	  "reboot the node; replace it if it recurs" },
	{ 95, 95, "Uncontained memory error", HP_TAG_FAIL, HP_P0,
	  "reboot the node to reset the GPU before restarting work" },
	{ 109, 109, "Context Switch Timeout Error", HP_TAG_FAIL, HP_P0,
	  "reboot the node to reset the GPU; replace it if it recurs" },
	{ 119, 119, "GSP RPC Timeout", HP_TAG_FAIL, HP_P0,
	  "reboot the node; replace it if it recurs after a reboot" },
	{ 120, 120, "GSP Error", HP_TAG_FAIL, HP_P0,
	  "reboot the node; replace it if it recurs after a reboot" },
	{ 136, 136, "Link training failed", HP_TAG_FAIL, HP_P0,
	  "reboot the node; replace it if it recurs" },
	{ 140, 140, "ECC unrecovered error", HP_TAG_FAIL, HP_P0,
	  "reboot the node to reset the GPU; replace it if it recurs" },
	{ 144, 150, "NVLink error", HP_TAG_FAIL, HP_P0,
	  "reboot the node; replace it if the link stays down" },
};

/* A node that has, or should have, NVIDIA GPUs. */
static int gpu_node(const struct node_ctx *c)
{
	return hp_node_type_gpus(c) > 0 || cJSON_IsTrue(hp_json_get(c->facts, "nvidia.present")) ||
	       hp_json_num(c->facts, "pci.nvidia_gpus", 0) > 0;
}

static const cJSON *gpus(const struct node_ctx *c)
{
	return hp_json_arr(c->facts, "nvidia.gpus");
}

/* "GPU 3 (00000000:86:00.0)" */
static const char *gpu_name(const cJSON *g, char *out, size_t n)
{
	snprintf(out, n, "GPU %.0f (%.40s)", hp_json_num(g, "index", -1),
		 hp_check_str(g, "bus_id", "bus id unknown"));
	return out;
}

/* The value nvidia-smi printed instead of a reading of this query, or NULL. */
static const char *unreadable(const cJSON *g, const char *key)
{
	return hp_json_str(cJSON_GetObjectItemCaseSensitive(g, "unreadable"), key);
}

/*
 * One WARN naming the GPUs whose values of a query (key) could not be read;
 * returns how many. A value that cannot be read is unknown, never healthy.
 */
static int say_unreadable(struct node_ctx *c, const char *key, const char *what)
{
	struct hp_buf list = HP_BUF_INIT(HP_MAX_LINE);
	const char *first = NULL;
	const cJSON *g;
	char name[96], stem[64];
	int n = 0;

	cJSON_ArrayForEach(g, gpus(c)) {
		const char *v = unreadable(g, key);

		if (!v)
			continue;
		if (!first)
			first = v;
		n++;
		hp_buf_printf(&list, "%s%s", list.len ? ", " : "", gpu_name(g, name, sizeof(name)));
	}
	if (n) {
		/* [N/A] and [Not Supported] say the reading does not exist; anything else is an error. */
		int plain = !strcmp(first, "[N/A]") || !strcmp(first, "[Not Supported]");

		snprintf(stem, sizeof(stem), "Cannot read %s", what);
		hp_node_say(c, HP_TAG_WARN, plain ? HP_P2 : HP_P1, NULL, stem,
			    "Cannot read %s on %s of %s (nvidia-smi printed %.60s); unknown is not "
			    "healthy", what, list.buf, c->who, first);
	}
	hp_buf_release(&list);
	return n;
}

static void judge_count(struct node_ctx *c)
{
	const cJSON *nv = cJSON_GetObjectItemCaseSensitive(c->facts, "nvidia"), *e, *lost;
	int want = hp_node_type_gpus(c), have = cJSON_GetArraySize(gpus(c));
	double pci = hp_json_num(c->facts, "pci.nvidia_gpus", -1);
	char what[96] = "", gone[200];
	struct node_say *s;

	if (!nv)
		return;
	if (want >= 0)
		snprintf(what, sizeof(what), "%s has %d", c->type, want);
	else if (pci > 0) {
		/* No type data: the GPUs on the PCI bus are what nvidia-smi should see. */
		want = (int)pci;
		snprintf(what, sizeof(what), "%d on the PCI bus", want);
	}
	if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(nv, "present"))) {
		if (want > 0)
			hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "nvidia-smi not found on GPU nodes",
				    "nvidia-smi not found on %s (%s GPUs); the NVIDIA driver is not "
				    "installed", c->who, what);
		else if (!c->type_info)
			hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "No NVIDIA GPU",
				    "No NVIDIA GPU on %s (nvidia-smi not installed)", c->who);
		return;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(nv, "timed_out"))) {
		hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "nvidia-smi hangs",
			    "nvidia-smi did not answer within 10 s on %s; a GPU or the driver is hung",
			    c->who);
		return;
	}
	lost = hp_json_arr(nv, "unreachable");
	gone[0] = '\0';
	cJSON_ArrayForEach(e, lost) {
		size_t len = strlen(gone);

		if (cJSON_IsString(e) && len + strlen(e->valuestring) + 3 < sizeof(gone))
			snprintf(gone + len, sizeof(gone) - len, "%s%s", len ? ", " : "", e->valuestring);
	}
	if (!have && want != 0 && (*gone || hp_json_str(nv, "error"))) {
		/* nvidia-smi stopped: it says nothing about the GPUs it did not reach. */
		if (*gone)
			s = hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "nvidia-smi failed: a GPU is unreachable",
					"nvidia-smi failed on %s: it cannot reach GPU %s (%s) and stopped "
					"there (exit status %.0f), so the state of the other GPUs is unknown; "
					"the GPU fell off the bus or the driver lost it: reboot the node, "
					"replace it if it recurs", c->who, gone,
					hp_check_str(nv, "unreachable_reason", "no reason given"),
					hp_json_num(nv, "rc", -1));
		else
			s = hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "nvidia-smi failed",
					"nvidia-smi failed on %s (exit status %.0f): %s", c->who,
					hp_json_num(nv, "rc", -1), hp_check_str(nv, "error", "no GPU listed"));
		cJSON_ArrayForEach(e, hp_json_arr(nv, "errors"))
			if (cJSON_IsString(e))
				hp_node_evidence(s, "nvidia-smi: %s", e->valuestring);
		return;
	}
	if (want > 0 && have < want) {
		s = hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "GPUs missing",
				"GPU count %d of %d on %s (%s): %d GPU%s missing, fallen off the bus "
				"or the driver failed%s%s", have, want, c->who, what, want - have,
				want - have == 1 ? "" : "s", *gone ? "; nvidia-smi cannot reach " : "",
				gone);
		cJSON_ArrayForEach(e, hp_json_arr(nv, "errors"))
			if (cJSON_IsString(e))
				hp_node_evidence(s, "nvidia-smi: %s", e->valuestring);
		return;
	}
	if (!have) {
		if (want != 0)
			hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "nvidia-smi failed",
				    "nvidia-smi failed on %s: %s", c->who,
				    hp_check_str(nv, "error", "no GPU listed"));
		return;
	}
	if (want > 0)
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "All GPUs visible",
			    "%d of %d GPU%s visible on %s", have, want, want == 1 ? "" : "s", c->who);
	else
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "GPUs visible",
			    "%d GPU%s visible on %s (no instance type data to compare with)", have,
			    have == 1 ? "" : "s", c->who);
}

static const struct xid_class *xid_class(int xid)
{
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(xid_classes); i++)
		if (xid >= xid_classes[i].lo && xid <= xid_classes[i].hi)
			return &xid_classes[i];
	return NULL;
}

/* The driver's own verdict on an Xid line: none printed, "Nonfatal", "Fatal". */
enum xid_sev { XID_SEV_NONE, XID_SEV_NONFATAL, XID_SEV_FATAL };

/*
 * One code's lines on this node, told apart by the driver's verdict and
 * by the earlier Xid it names as the cause: count, GPUs (PCI), latest
 * time, a sample.
 */
struct xid_seen {
	int xid;
	enum xid_sev sev;
	int cause; /* "caused by previous Xid N", else 0 */
	int n;
	double latest;
	char pcis[160];
	const char *text;
	const char *action; /* Xid 154 */
};

static void add_pci(struct xid_seen *x, const char *pci)
{
	size_t len = strlen(x->pcis);

	if (!pci || strstr(x->pcis, pci) || len + strlen(pci) + 3 >= sizeof(x->pcis))
		return;
	snprintf(x->pcis + len, sizeof(x->pcis) - len, "%s%s", len ? ", " : "", pci);
}

/* The class name of a code, for messages: "NVLink error", or "not in hpnode's table". */
static const char *xid_name(int xid)
{
	const struct xid_class *k = xid_class(xid);

	return k ? k->name : "not in hpnode's Xid table";
}

/* Whether this node's log holds lines of Xid code (any verdict, any cause). */
static int xid_logged(const struct xid_seen *seen, size_t n, int xid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (seen[i].xid == xid && !seen[i].cause)
			return 1;
	return 0;
}

/* An Xid the driver called non-fatal or fatal in its own line: that word decides. */
static struct node_say *say_xid_verdict(struct node_ctx *c, const struct xid_seen *x,
					const char *when)
{
	const struct xid_class *k = xid_class(x->xid);
	const char *gpu = *x->pcis ? x->pcis : "unknown GPU";
	char stem[96];

	if (x->sev == XID_SEV_NONFATAL) {
		snprintf(stem, sizeof(stem), "GPU Xid %d reported non-fatal by the driver", x->xid);
		return hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, stem,
				   "GPU Xid %d (%s) on %s: %d since boot on %s, latest %s; the driver "
				   "reports it Nonfatal (corrected, work went on): no reboot needed, "
				   "watch for it recurring or turning Fatal", x->xid, xid_name(x->xid),
				   c->who, x->n, gpu, when);
	}
	snprintf(stem, sizeof(stem), "GPU Xid %d reported fatal by the driver", x->xid);
	return hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, stem,
			   "GPU Xid %d (%s) on %s: %d since boot on %s, latest %s; the driver "
			   "reports it Fatal: %s", x->xid, xid_name(x->xid), c->who, x->n, gpu, when,
			   k && k->tag == HP_TAG_FAIL ? k->action :
			   "reboot the node to reset the GPU; replace it if it recurs");
}

/* An Xid the driver raised because of an earlier one: it carries that cause. */
static struct node_say *say_xid_caused(struct node_ctx *c, const struct xid_seen *x,
				       const char *when, int cause_logged)
{
	const char *gpu = *x->pcis ? x->pcis : "unknown GPU";
	char stem[112];

	if (cause_logged) {
		snprintf(stem, sizeof(stem), "Xid %d caused by Xid %d", x->xid, x->cause);
		return hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", stem,
				   "Xid %d (%s) on %s: %d since boot on %s, latest %s; the driver "
				   "reports it caused by the previous Xid %d (%s): judge by that one",
				   x->xid, xid_name(x->xid), c->who, x->n, gpu, when, x->cause,
				   xid_name(x->cause));
	}
	/* The cause's own line is not in the log hpnode read: its verdict is unknown. */
	snprintf(stem, sizeof(stem), "Xid %d caused by Xid %d, whose line is not in the log",
		 x->xid, x->cause);
	return hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, stem,
			   "Xid %d (%s) on %s: %d since boot on %s, latest %s; the driver reports it "
			   "caused by a previous Xid %d (%s), whose own line is not in the kernel log "
			   "read, so whether that error was fatal is unknown: read it with dmesg "
			   "on the node", x->xid, xid_name(x->xid), c->who, x->n, gpu, when, x->cause,
			   xid_name(x->cause));
}

static void say_xid(struct node_ctx *c, const struct xid_seen *x, int cause_logged)
{
	const struct xid_class *k = xid_class(x->xid);
	char when[32], stem[96], clip[HP_CHECK_CLIP_SIZE];
	struct node_say *s;

	hp_node_time(x->latest, when);
	if (x->xid == 154) {
		/* The driver names the recovery the accompanying error needs. */
		if (!x->action || !strcmp(x->action, "None"))
			return;
		s = hp_node_say(c, HP_TAG_FAIL, HP_P0, "G.1.d", "GPU recovery action required (Xid 154)",
				"GPU recovery action '%s' required on %s (Xid 154 on %s, latest %s)",
				x->action, c->who, *x->pcis ? x->pcis : "unknown GPU", when);
	} else if (x->sev != XID_SEV_NONE) {
		/* The driver's own words first; the code's class only when it gives none. */
		s = say_xid_verdict(c, x, when);
	} else if (x->cause) {
		s = say_xid_caused(c, x, when, cause_logged);
	} else if (!k) {
		snprintf(stem, sizeof(stem), "GPU Xid %d (not in hpnode's Xid table)", x->xid);
		s = hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, stem,
				"GPU Xid %d on %s: %d since boot on %s, latest %s; look the code up in "
				"NVIDIA's Xid catalog", x->xid, c->who, x->n,
				*x->pcis ? x->pcis : "unknown GPU", when);
	} else if (k->tag == HP_TAG_INFO) {
		snprintf(stem, sizeof(stem), "Application Xid %d (%s)", x->xid, k->name);
		s = hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", stem,
				"Application Xid %d (%s) on %s: %d since boot on %s, latest %s; %s",
				x->xid, k->name, c->who, x->n, *x->pcis ? x->pcis : "unknown GPU",
				when, k->action);
	} else {
		snprintf(stem, sizeof(stem), "GPU Xid %d (%s)", x->xid, k->name);
		s = hp_node_say(c, k->tag, k->prio, NULL, stem,
				"GPU Xid %d (%s) on %s: %d since boot on %s, latest %s; %s", x->xid,
				k->name, c->who, x->n, *x->pcis ? x->pcis : "unknown GPU", when,
				k->action);
	}
	hp_node_evidence(s, "%s", hp_check_clip(x->text, clip));
}

/* Count one kernel event into x: its GPU, time and text. */
static void seen_add(struct xid_seen *x, const cJSON *e)
{
	x->n++;
	x->text = hp_check_str(e, "text", "");
	if (hp_json_num(e, "t", -1) > x->latest)
		x->latest = hp_json_num(e, "t", -1);
	add_pci(x, hp_json_str(e, "pci"));
	if (hp_json_str(e, "action"))
		x->action = hp_json_str(e, "action");
}

/* The driver's texts for a lost GPU, or one it could not bring up, with no Xid line. */
static void say_driver_texts(struct node_ctx *c, const struct xid_seen *lost,
			     const struct xid_seen *init, int had_79)
{
	char when[32], clip[HP_CHECK_CLIP_SIZE];
	struct node_say *s;

	if (lost->n && !had_79) {
		hp_node_time(lost->latest, when);
		s = hp_node_say(c, HP_TAG_FAIL, HP_P0, "G.1", "GPU fallen off the bus (driver message)",
				"GPU fallen off the bus on %s: the NVIDIA driver reports %s lost (%d "
				"message%s since boot, latest %s, no Xid line); reboot the node; replace "
				"it if it recurs", c->who, *lost->pcis ? lost->pcis : "a GPU", lost->n,
				lost->n == 1 ? "" : "s", when);
		hp_node_evidence(s, "%s", hp_check_clip(lost->text, clip));
	}
	if (init->n) {
		hp_node_time(init->latest, when);
		s = hp_node_say(c, HP_TAG_FAIL, HP_P0, "G.1", "GPU failed to initialise",
				"NVIDIA driver could not initialise %s on %s (%d RmInitAdapter or probe "
				"failure%s since boot, latest %s); the GPU is unusable until a reboot; "
				"replace the node if it recurs", *init->pcis ? init->pcis : "a GPU",
				c->who, init->n, init->n == 1 ? "" : "s", when);
		hp_node_evidence(s, "%s", hp_check_clip(init->text, clip));
	}
}

static void judge_xid(struct node_ctx *c)
{
	const cJSON *ev = hp_json_arr(c->facts, "kmsg.events"), *e;
	struct xid_seen seen[32], lost, init;
	size_t n = 0, i;
	int had_79 = 0;

	if (!ev || !gpu_node(c))
		return;
	memset(&lost, 0, sizeof(lost));
	memset(&init, 0, sizeof(init));
	lost.latest = init.latest = -1;
	cJSON_ArrayForEach(e, ev) {
		const char *kind = hp_check_str(e, "kind", ""), *sevw;
		enum xid_sev sev;
		int xid, cause;

		if (!strcmp(kind, "gpu_lost")) {
			seen_add(&lost, e);
			continue;
		}
		if (!strcmp(kind, "gpu_init")) {
			seen_add(&init, e);
			continue;
		}
		if (strcmp(kind, "xid") || !hp_json_get(e, "xid"))
			continue;
		xid = (int)hp_json_num(e, "xid", -1);
		sevw = hp_check_str(e, "severity", "");
		sev = !strcmp(sevw, "nonfatal") ? XID_SEV_NONFATAL :
		      !strcmp(sevw, "fatal")    ? XID_SEV_FATAL :
						  XID_SEV_NONE;
		cause = (int)hp_json_num(e, "cause_xid", 0);
		had_79 |= xid == 79;
		for (i = 0; i < n && (seen[i].xid != xid || seen[i].sev != sev || seen[i].cause != cause);
		     i++)
			;
		if (i == n) {
			if (n == HP_ARRAY_LEN(seen))
				continue;
			memset(&seen[n], 0, sizeof(seen[n]));
			seen[n].xid = xid;
			seen[n].sev = sev;
			seen[n].cause = cause;
			seen[n].latest = -1;
			n++;
		}
		seen_add(&seen[i], e);
	}
	say_driver_texts(c, &lost, &init, had_79);
	if (!n) {
		if (!lost.n && !init.n)
			hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "No GPU Xid errors since boot",
				    "No GPU Xid errors on %s since boot", c->who);
		return;
	}
	for (i = 0; i < n; i++)
		say_xid(c, &seen[i], seen[i].cause && xid_logged(seen, n, seen[i].cause));
}

static void judge_ecc(struct node_ctx *c)
{
	const cJSON *g;
	double up = hp_json_num(c->facts, "node.uptime_s", -1);
	struct hp_buf bad = HP_BUF_INIT(HP_MAX_LINE);
	int known = 0, unread;
	char name[96];

	cJSON_ArrayForEach(g, gpus(c)) {
		double unc = hp_json_num(g, "ecc_unc_vol", -1), corr = hp_json_num(g, "ecc_corr_vol", -1);
		double agg = hp_json_num(g, "ecc_unc_agg", -1);
		const char *mode = hp_json_str(g, "ecc_mode");

		gpu_name(g, name, sizeof(name));
		if (mode && !strcmp(mode, "Disabled"))
			hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "ECC disabled",
				    "ECC disabled on %s of %s; memory errors go undetected", name, c->who);
		if (unc < 0 || unreadable(g, "ecc"))
			continue;
		known++;
		if (unc > 0)
			hp_buf_printf(&bad, "%s%s: %.0f", bad.len ? ", " : "", name, unc);
		else if (agg > 0)
			hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "Lifetime uncorrectable ECC errors",
				    "%s of %s has %.0f uncorrectable ECC error%s in its lifetime, none "
				    "since the driver loaded", name, c->who, agg, agg == 1 ? "" : "s");
		if (corr > 0 && up > 3600 && corr / (up / 86400) > CE_PER_DAY)
			hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "High corrected ECC error rate",
				    "%s of %s: %.0f corrected ECC errors in %.1f days since boot (over "
				    "100 a day)", name, c->who, corr, up / 86400);
	}
	unread = say_unreadable(c, "ecc", "ECC counters");
	if (bad.len)
		hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "Uncorrectable ECC errors",
			    "Uncorrectable ECC errors on %s since the driver loaded: %s", c->who, bad.buf);
	else if (known && !unread)
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "No uncorrectable ECC errors",
			    "No uncorrectable ECC errors on %d GPU%s of %s", known, known == 1 ? "" : "s",
			    c->who);
	hp_buf_release(&bad);
}

static void judge_remap(struct node_ctx *c)
{
	const cJSON *g;
	struct hp_buf fail = HP_BUF_INIT(HP_MAX_LINE), pend = HP_BUF_INIT(HP_MAX_LINE);
	int known = 0;
	char name[96];

	cJSON_ArrayForEach(g, gpus(c)) {
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(g, "remap");
		double unc = hp_json_num(r, "unc", 0);

		if (!r || unreadable(g, "remap"))
			continue;
		known++;
		gpu_name(g, name, sizeof(name));
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "failure")))
			hp_buf_printf(&fail, "%s%s (%.0f uncorrectable remaps)", fail.len ? ", " : "",
				      name, unc);
		else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "pending")))
			hp_buf_printf(&pend, "%s%s", pend.len ? ", " : "", name);
		else if (unc > 0)
			hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "Rows remapped after uncorrectable errors",
				    "%s of %s has %.0f row%s remapped after uncorrectable errors "
				    "(remapped successfully; a high count is a warning about the part)",
				    name, c->who, unc, unc == 1 ? "" : "s");
	}
	if (fail.len)
		hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "GPU row-remap failure",
			    "GPU row-remap failure on %s (bad memory, replace GPU): %s", c->who,
			    fail.buf);
	if (pend.len)
		hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "GPU row-remap pending",
			    "GPU row-remap pending on %s (reset/reboot to finalize; if stuck, marginal "
			    "memory): %s", c->who, pend.buf);
	if (known && !fail.len && !pend.len && !say_unreadable(c, "remap", "row-remap state"))
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "Row remapping healthy",
			    "Row remapping healthy on %d GPU%s of %s", known, known == 1 ? "" : "s",
			    c->who);
	hp_buf_release(&fail);
	hp_buf_release(&pend);
}

static void judge_recovery(struct node_ctx *c)
{
	const cJSON *g;
	int known = 0, bad = 0;
	char name[96];

	cJSON_ArrayForEach(g, gpus(c)) {
		const char *a = hp_json_str(g, "recovery_action");

		if (!a)
			continue;
		known++;
		if (!strcmp(a, "None"))
			continue;
		bad++;
		hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "GPU recovery action required",
			    "GPU recovery action '%.60s' required on %s of %s", a,
			    gpu_name(g, name, sizeof(name)), c->who);
	}
	if (!say_unreadable(c, "recovery", "the GPU recovery action") && known && !bad)
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "No GPU recovery action pending",
			    "No GPU recovery action pending on %s", c->who);
}

static void judge_clocks(struct node_ctx *c)
{
	static const struct {
		unsigned long long bit;
		const char *label;
		enum hp_prio prio;
	} reasons[] = {
		{ THR_HW_SLOWDOWN, "HW slowdown", HP_P1 },
		{ THR_HW_THERMAL, "HW thermal slowdown", HP_P1 },
		{ THR_HW_POWER_BRAKE, "HW power brake", HP_P1 },
		{ THR_SW_THERMAL, "SW thermal slowdown", HP_P2 },
	};
	const cJSON *g;
	int known = 0, bad = 0;
	char name[96];
	size_t i;

	cJSON_ArrayForEach(g, gpus(c)) {
		double v = hp_json_num(g, "throttle", -1);
		unsigned long long bits;
		struct hp_buf why = HP_BUF_INIT(HP_MAX_LINE);
		enum hp_prio worst = HP_PNONE;

		if (v < 0 || unreadable(g, "clocks"))
			continue;
		known++;
		bits = (unsigned long long)v;
		for (i = 0; i < HP_ARRAY_LEN(reasons); i++) {
			if (!(bits & reasons[i].bit))
				continue;
			hp_buf_printf(&why, "%s%s", why.len ? ", " : "", reasons[i].label);
			if (reasons[i].prio < worst)
				worst = reasons[i].prio;
		}
		if (why.len) {
			bad++;
			hp_node_say(c, HP_TAG_WARN, worst, NULL,
				    worst == HP_P1 ? "GPUs throttled by hardware"
						   : "GPUs throttled by a software thermal limit",
				    "%s of %s throttled: %s (%.0f C, SM %.0f of %.0f MHz)",
				    gpu_name(g, name, sizeof(name)), c->who, why.buf,
				    hp_json_num(g, "temp_c", -1), hp_json_num(g, "sm_mhz", -1),
				    hp_json_num(g, "sm_max_mhz", -1));
		}
		hp_buf_release(&why);
	}
	if (!say_unreadable(c, "clocks", "clocks and throttle reasons") && known && !bad)
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "No GPU throttling by hardware",
			    "No hardware or thermal clock throttling on %d GPU%s of %s", known,
			    known == 1 ? "" : "s", c->who);
}

static void judge_dcgm(struct node_ctx *c)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(c->facts, "dcgm"), *i;
	const char *health = hp_json_str(d, "health");
	struct node_say *s;

	if (!d || !gpu_node(c))
		return;
	if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(d, "present"))) {
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "dcgmi not installed",
			    "dcgmi not installed on %s; DCGM health not checked", c->who);
		return;
	}
	if (!health) {
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "DCGM health not available",
			    "DCGM health not available on %s: %s", c->who,
			    hp_check_str(d, "error", "no answer"));
		return;
	}
	if (!strcmp(health, "Healthy")) {
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "DCGM health Healthy",
			    "DCGM health Healthy on %s", c->who);
		return;
	}
	if (!strcmp(health, "Failure") || !strcmp(health, "Fail"))
		s = hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "DCGM health Failure",
				"DCGM health Fail/Warn on %s: %s", c->who, health);
	else
		s = hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "DCGM health Warning",
				"DCGM health Fail/Warn on %s: %.40s", c->who, health);
	cJSON_ArrayForEach(i, hp_json_arr(d, "incidents")) {
		char clip[HP_CHECK_CLIP_SIZE];

		hp_node_evidence(s, "%.40s %.40s: %.20s%s%s", hp_check_str(i, "entity", "?"),
				 hp_check_str(i, "system", "?"), hp_check_str(i, "health", "?"),
				 hp_json_str(i, "message") ? ": " : "",
				 hp_check_clip(hp_json_str(i, "message"), clip));
	}
}

static void judge_nvlink(struct node_ctx *c)
{
	const cJSON *g;
	struct hp_buf down = HP_BUF_INIT(HP_MAX_LINE), errs = HP_BUF_INIT(HP_MAX_LINE);
	int gpus_with_links = 0, links = 0, recovery = 0, counted = 0;
	char name[96];

	if (!gpu_node(c) || !cJSON_GetObjectItemCaseSensitive(c->facts, "nvidia"))
		return;
	cJSON_ArrayForEach(g, gpus(c)) {
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(g, "nvlink"), *x;
		const cJSON *inactive = cJSON_GetObjectItemCaseSensitive(l, "inactive");
		struct hp_buf one = HP_BUF_INIT(256);

		if (!l)
			continue;
		gpu_name(g, name, sizeof(name));
		if (hp_json_num(l, "links", 0) > 0) {
			gpus_with_links++;
			links += (int)hp_json_num(l, "links", 0);
		}
		if (cJSON_GetArraySize(inactive)) {
			cJSON_ArrayForEach(x, inactive)
				hp_buf_printf(&one, "%s%.0f", one.len ? "," : "", x->valuedouble);
			hp_buf_printf(&down, "%s%s link%s %s", down.len ? "; " : "", name,
				      cJSON_GetArraySize(inactive) == 1 ? "" : "s", one.buf);
		}
		hp_buf_reset(&one);
		counted |= cJSON_GetObjectItemCaseSensitive(l, "errors") != NULL;
		cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(l, "errors")) {
			if (!cJSON_IsNumber(x) || x->valuedouble <= 0)
				continue;
			hp_buf_printf(&one, "%s%s %.0f", one.len ? ", " : "", x->string, x->valuedouble);
			recovery |= !strcmp(x->string, "Recovery");
		}
		if (one.len)
			hp_buf_printf(&errs, "%s%s: %s", errs.len ? "; " : "", name, one.buf);
		hp_buf_release(&one);
	}
	if (down.len)
		hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "NVLink links inactive",
			    "NVLink links inactive on %s: %s; GPU-to-GPU traffic is slower or fails: "
			    "reboot the node, replace it if the links stay down", c->who, down.buf);
	if (errs.len)
		hp_node_say(c, HP_TAG_WARN, recovery ? HP_P1 : HP_P2, NULL, "NVLink error counters not zero",
			    "NVLink error counters not zero on %s (since the driver loaded): %s", c->who,
			    errs.buf);
	if (!gpus_with_links) {
		const char *err = hp_json_str(c->facts, "nvidia.nvlink_error");

		if (err && cJSON_GetArraySize(gpus(c)))
			hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "NVLink state not read",
				    "NVLink state not read on %s: %s", c->who, err);
	} else if (!down.len && !errs.len) {
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "All NVLink links active",
			    "All %d NVLink links active on %d GPU%s of %s%s", links, gpus_with_links,
			    gpus_with_links == 1 ? "" : "s", c->who,
			    counted ? ", error counters zero" : "");
	}
	hp_buf_release(&down);
	hp_buf_release(&errs);
}

static void judge_nvvs(struct node_ctx *c)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(c->facts, "nvvs"), *x;
	const char *file = hp_check_str(d, "file", "nvvs log");
	double n = hp_json_num(d, "signal_count", 0);
	struct node_say *s;

	/* No DCGM log directory or no nvvs log: no diagnostic has run here. */
	if (!d || !gpu_node(c) || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "found")))
		return;
	if (!n) {
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "DCGM nvvs log shows no failure",
			    "DCGM nvvs log %s on %s shows no failure in its last %.0f lines", file,
			    c->who, hp_json_num(d, "lines", 0));
		return;
	}
	s = hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "DCGM nvvs log shows failure/row-remap signals",
			"DCGM nvvs log shows failure/row-remap signals on %s: %.0f line%s in the tail "
			"of /var/log/nvidia-dcgm/%s; read it on the node", c->who, n,
			n == 1 ? "" : "s", file);
	cJSON_ArrayForEach(x, hp_json_arr(d, "signals")) {
		char clip[HP_CHECK_CLIP_SIZE];

		if (cJSON_IsString(x))
			hp_node_evidence(s, "%s", hp_check_clip(x->valuestring, clip));
	}
}

/*
 * An NVSwitch system: NVSwitches on the PCI bus, or an instance type whose
 * GPUs meet through NVSwitches (on Blackwell HGX the switches are not PCI
 * functions of the host, so the type decides there).
 */
static int nvswitch_node(const struct node_ctx *c)
{
	static const char *const families[] = { "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200",
						"p6-b300" };
	const char *t = c->type;
	size_t i, n;

	if (hp_json_num(c->facts, "pci.nvswitches", 0) > 0)
		return 1;
	if (!t)
		return 0;
	if (!strncmp(t, "ml.", 3))
		t += 3;
	n = strcspn(t, ".");
	for (i = 0; i < HP_ARRAY_LEN(families); i++)
		if (strlen(families[i]) == n && !strncmp(t, families[i], n))
			return 1;
	return 0;
}

/* One SXid code on one switch: its lines, and the driver's verdict if any line has one. */
struct sxid_seen {
	int sxid;
	char pci[24];
	int n;
	int fatal, nonfatal;
	double latest;
	const char *text;
};

static void judge_nvswitch(struct node_ctx *c)
{
	const cJSON *ev = hp_json_arr(c->facts, "kmsg.events"), *e;
	struct sxid_seen seen[16];
	size_t n = 0, i;
	int nvs = nvswitch_node(c);

	if (!ev)
		return;
	cJSON_ArrayForEach(e, ev) {
		const char *pci = hp_check_str(e, "pci", "unknown switch"), *sev;
		int code;

		if (strcmp(hp_check_str(e, "kind", ""), "sxid"))
			continue;
		code = (int)hp_json_num(e, "sxid", -1);
		for (i = 0; i < n && (seen[i].sxid != code || strcmp(seen[i].pci, pci)); i++)
			;
		if (i == n) {
			if (n == HP_ARRAY_LEN(seen))
				continue;
			memset(&seen[n], 0, sizeof(seen[n]));
			seen[n].sxid = code;
			snprintf(seen[n].pci, sizeof(seen[n].pci), "%s", pci);
			seen[n].latest = -1;
			n++;
		}
		seen[i].n++;
		sev = hp_check_str(e, "severity", "");
		seen[i].fatal |= !strcmp(sev, "fatal");
		seen[i].nonfatal |= !strcmp(sev, "nonfatal");
		/* The line with the verdict says most; else the latest. */
		if (*sev || !seen[i].text)
			seen[i].text = hp_check_str(e, "text", "");
		if (hp_json_num(e, "t", -1) > seen[i].latest)
			seen[i].latest = hp_json_num(e, "t", -1);
	}
	if (!n) {
		if (nvs)
			hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "No NVSwitch SXid errors since boot",
				    "No NVSwitch SXid errors in the kernel log of %s since boot", c->who);
		return;
	}
	for (i = 0; i < n; i++) {
		const struct sxid_seen *x = &seen[i];
		char when[32], stem[80], clip[HP_CHECK_CLIP_SIZE];
		struct node_say *sy;

		hp_node_time(x->latest, when);
		if (x->fatal) {
			snprintf(stem, sizeof(stem), "NVSwitch SXid %d reported fatal", x->sxid);
			sy = hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, stem,
					 "NVSwitch SXid %d on %s (switch %s): the driver reports it Fatal "
					 "(%d line%s since boot, latest %s); NVLink traffic through the switch "
					 "stalls and CUDA jobs end with Xid 45: reboot the node to reset the "
					 "GPUs and NVSwitches, replace it if it recurs", x->sxid, c->who, x->pci,
					 x->n, x->n == 1 ? "" : "s", when);
		} else if (x->nonfatal) {
			snprintf(stem, sizeof(stem), "NVSwitch SXid %d reported non-fatal", x->sxid);
			sy = hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, stem,
					 "NVSwitch SXid %d on %s (switch %s): the driver reports it Non-fatal "
					 "(%d line%s since boot, latest %s); corrected, no reboot needed: watch "
					 "for it recurring", x->sxid, c->who, x->pci, x->n, x->n == 1 ? "" : "s",
					 when);
		} else {
			snprintf(stem, sizeof(stem), "NVSwitch SXid %d without a verdict", x->sxid);
			sy = hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, stem,
					 "NVSwitch SXid %d on %s (switch %s): %d line%s since boot, latest %s, "
					 "none saying whether it was fatal; look the code up in NVIDIA's SXid "
					 "catalog (Fabric Manager user guide)", x->sxid, c->who, x->pci, x->n,
					 x->n == 1 ? "" : "s", when);
		}
		hp_node_evidence(sy, "%s", hp_check_clip(x->text, clip));
	}
}

static void judge_fabric_manager(struct node_ctx *c)
{
	const cJSON *unit, *l;
	const char *state;
	struct node_say *s;
	double sw = hp_json_num(c->facts, "pci.nvswitches", 0);
	char what[96];

	if (!gpu_node(c) || !nvswitch_node(c))
		return;
	/* A probe that did not ask systemd about the unit (older probes) says nothing here. */
	if (!(unit = hp_node_unit(c, "nvidia-fabricmanager")))
		return;
	if (sw > 0)
		snprintf(what, sizeof(what), "%.0f NVSwitch%s on the PCI bus", sw, sw == 1 ? "" : "es");
	else
		snprintf(what, sizeof(what), "%s, an NVSwitch type", c->type ? c->type : "type unknown");
	state = hp_node_unit_state(c, "nvidia-fabricmanager");
	if (!strcmp(state, "active")) {
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "Fabric Manager active",
			    "nvidia-fabricmanager active on %s (%s)", c->who, what);
		return;
	}
	if (hp_node_unit_loaded(c, "nvidia-fabricmanager"))
		s = hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "Fabric Manager not running",
				"nvidia-fabricmanager is %s on %s (%s): the GPUs cannot join the NVLink "
				"fabric, so CUDA fails with 'system not yet initialized' (error 802) while "
				"nvidia-smi still lists every GPU", *state ? state : "not active", c->who,
				what);
	else
		s = hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "Fabric Manager not installed",
				"nvidia-fabricmanager is not installed as a systemd unit on %s (%s); "
				"NVSwitch systems need it (or the GPU Operator's driver container running "
				"it): check that CUDA initialises", c->who, what);
	cJSON_ArrayForEach(l, hp_json_arr(c->facts, "fabricmanager.lines")) {
		char clip[HP_CHECK_CLIP_SIZE];

		if (cJSON_IsString(l))
			hp_node_evidence(s, "journal: %s", hp_check_clip(l->valuestring, clip));
	}
}

HP_CHECK(node_gpu_count, HP_GROUP_ONNODE, 170,
	 .id = "node.gpu-count", .section = "G.1", .prio = HP_P0, .each_node = judge_count);
HP_CHECK(node_gpu_xid, HP_GROUP_ONNODE, 180,
	 .id = "node.gpu-xid", .section = "G.1.c", .prio = HP_P0, .each_node = judge_xid);
HP_CHECK(node_gpu_ecc, HP_GROUP_ONNODE, 190,
	 .id = "node.gpu-ecc", .section = "G.1", .prio = HP_P0, .each_node = judge_ecc);
HP_CHECK(node_gpu_remap, HP_GROUP_ONNODE, 200,
	 .id = "node.gpu-remap", .section = "G.1.a", .prio = HP_P0, .each_node = judge_remap);
HP_CHECK(node_gpu_recovery, HP_GROUP_ONNODE, 210,
	 .id = "node.gpu-recovery", .section = "G.1.d", .prio = HP_P0, .each_node = judge_recovery);
HP_CHECK(node_gpu_clocks, HP_GROUP_ONNODE, 220,
	 .id = "node.gpu-clocks", .section = "G.1", .prio = HP_P1, .each_node = judge_clocks);
HP_CHECK(node_gpu_dcgm, HP_GROUP_ONNODE, 230,
	 .id = "node.gpu-dcgm", .section = "G.1.b", .prio = HP_P0, .each_node = judge_dcgm);
HP_CHECK(node_gpu_nvvs, HP_GROUP_ONNODE, 240,
	 .id = "node.gpu-nvvs", .section = "G.1.b", .prio = HP_P1, .each_node = judge_nvvs);
HP_CHECK(node_gpu_nvlink, HP_GROUP_ONNODE, 250,
	 .id = "node.gpu-nvlink", .section = "G.1", .prio = HP_P1, .each_node = judge_nvlink);
HP_CHECK(node_nvswitch, HP_GROUP_ONNODE, 252,
	 .id = "node.nvswitch", .section = "G.5", .prio = HP_P0, .each_node = judge_nvswitch);
HP_CHECK(node_fabric_manager, HP_GROUP_ONNODE, 254,
	 .id = "node.fabric-manager", .section = "G.5", .prio = HP_P0,
	 .each_node = judge_fabric_manager);
