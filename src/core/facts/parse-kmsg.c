/*
 * Kernel messages (dmesg --time-format iso, else journalctl -k): each
 * line is matched against the exact kernel texts of the events hpnode
 * judges (OOM kills, panics, lockups, hung tasks, kernel BUGs, NMIs,
 * machine checks, NVIDIA Xids, the driver's own texts for a GPU that is
 * lost or failed to initialise, uncorrectable PCIe AER errors in every
 * wording the kernel has used, NVSwitch SXids, and storage failures: block
 * I/O errors, NVMe timeouts and resets, ext4 journal aborts and read-only
 * remounts, XFS shutdowns) and kept with its time. Benign lines that merely
 * look alike, such as "NMI watchdog: Enabled", a corrected AER error or
 * ext4's "errors=remount-ro" mount option, are not events. A message
 * the kernel printed over several lines (dmesg indents the later ones,
 * without a time) is joined into one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/json.h"
#include "hp/util.h"
#include "probe-int.h"

/* Characters of a kernel line kept as evidence. */
#define TEXT_MAX 300

static const char *kinds[] = {
	"xid", "oom_kill", "oom_invoked", "panic", "soft_lockup", "hard_lockup",
	"hung_task", "kernel_bug", "nmi", "mce", "gpu_lost", "gpu_init", "pcie_aer",
	"sxid", "storage",
};

/*
 * Kinds that can flood the log (an I/O error per failed request, several
 * SXid lines per switch event) keep only their newest lines, so that they
 * never push the rarer events out of the kept list.
 */
#define KIND_CAP 40
static int capped_kind(const char *kind)
{
	return !strcmp(kind, "storage") || !strcmp(kind, "sxid");
}

/*
 * A storage failure in the kernel's words, or NULL: what happened
 * ("io_error", "nvme_reset", "journal_abort", "readonly", "fs_shutdown").
 */
static const char *storage_what(const char *msg)
{
	const char *p;

	/* print_req_error: "<kind> error, dev nvme0n1, sector ..." with or without
	   the older "blk_update_request: " prefix. */
	if ((p = strstr(msg, " error, dev ")))
		/* Removable media (a virtual CD or floppy drive) are no node volume. */
		return strncmp(p + 12, "sr", 2) && strncmp(p + 12, "fd", 2) ? "io_error" : NULL;
	if (strstr(msg, "nvme nvme") &&
	    (strstr(msg, " timeout, reset controller") || strstr(msg, " timeout, aborting") ||
	     strstr(msg, "controller is down; will reset") ||
	     strstr(msg, "Removing after probe failure") ||
	     strstr(msg, "Device not ready; aborting reset")))
		return "nvme_reset";
	if (strstr(msg, "Aborting journal on device ") || strstr(msg, "Detected aborted journal"))
		return "journal_abort";
	if (strstr(msg, "Remounting filesystem read-only"))
		return "readonly";
	if (strstr(msg, "XFS (") &&
	    (strstr(msg, "Shutting down filesystem") || strstr(msg, "has been shut down")))
		return "fs_shutdown";
	return NULL;
}

/* The event kind of one message, or NULL. */
static const char *classify(const char *msg)
{
	if (strstr(msg, "NVRM: Xid ("))
		return "xid";
	if (strstr(msg, "Killed process "))
		return "oom_kill";
	if (strstr(msg, " invoked oom-killer: ") || !strncmp(msg, "invoked oom-killer: ", 20))
		return "oom_invoked";
	if (strstr(msg, "Kernel panic - not syncing"))
		return "panic";
	if (strstr(msg, "soft lockup - CPU#"))
		return "soft_lockup";
	if (strstr(msg, "Watchdog detected hard LOCKUP"))
		return "hard_lockup";
	if (strstr(msg, "task ") && strstr(msg, " blocked for more than "))
		return "hung_task";
	if (strstr(msg, "BUG: unable to handle") || strstr(msg, "BUG: kernel NULL pointer dereference"))
		return "kernel_bug";
	if (strstr(msg, "NMI received for unknown reason") || strstr(msg, "NMI: PCI system error") ||
	    strstr(msg, "NMI: IOCK error"))
		return "nmi";
	if (strstr(msg, "[Hardware Error]"))
		return "mce";
	/* NVIDIA driver texts without an Xid: "GPU at 0000:01:00.0 has fallen off the bus",
	   "The NVIDIA GPU 0000:b3:00.0 ... fallen off the bus and is not responding". */
	if (strstr(msg, "NVRM") && strstr(msg, "fallen off the bus"))
		return "gpu_lost";
	if (strstr(msg, "NVRM") &&
	    (strstr(msg, "RmInitAdapter failed") || strstr(msg, "rm_init_adapter failed") ||
	     strstr(msg, "probe routine failed")))
		return "gpu_init";
	/*
	 * "PCIe Bus Error: severity=Uncorrected (Fatal), type=..." in older
	 * kernels, "severity=Uncorrectable (Non-Fatal)" in newer ones; the
	 * Corrected / Correctable ones are noise.
	 */
	if (strstr(msg, "PCIe Bus Error: severity=Uncorrect"))
		return "pcie_aer";
	if (strstr(msg, "SXid ("))
		return "sxid";
	if (storage_what(msg))
		return "storage";
	return NULL;
}

/* The first PCI address ("0000:b3:00.0") in msg, for events that name a device. */
static void find_pci(const char *msg, cJSON *ev)
{
	const char *p;

	for (p = msg; *p; p++) {
		static const char form[] = "hhhh:hh:hh.h";
		char pci[16];
		size_t i;

		for (i = 0; form[i]; i++) {
			char c = p[i];

			if (form[i] == 'h' ? !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
					       (c >= 'A' && c <= 'F'))
					   : c != form[i])
				break;
		}
		if (form[i])
			continue;
		memcpy(pci, p, 12);
		pci[12] = '\0';
		pb_set_str(ev, "pci", pci);
		return;
	}
}

/* A whole word in s (space or start before; space, comma or end after). */
static int has_word(const char *s, const char *w)
{
	size_t n = strlen(w);
	const char *p;

	for (p = strstr(s, w); p; p = strstr(p + 1, w))
		if ((p == s || p[-1] == ' ') && (!p[n] || p[n] == ' ' || p[n] == ','))
			return 1;
	return 0;
}

/* "NVRM: Xid (PCI:0000:97:00): 79, pid=..." -> code 79, pci "0000:97:00". */
static void parse_xid(const char *msg, cJSON *ev)
{
	const char *p = strstr(msg, "NVRM: Xid (") + 11, *close = strchr(p, ')');
	char pci[PB_FIELD], num[PB_FIELD];
	double code;
	size_t n;

	if (!close)
		return;
	if (!strncmp(p, "PCI:", 4))
		p += 4;
	pb_copy_trim(p, (size_t)(close - p), pci);
	if (*pci)
		pb_set_str(ev, "pci", pci);
	p = close + 1;
	if (*p == ':')
		p++;
	while (*p == ' ')
		p++;
	for (n = 0; p[n] >= '0' && p[n] <= '9' && n < 6; n++)
		;
	pb_copy_trim(p, n, num);
	if (pb_count(num, &code))
		pb_set_num(ev, "xid", code);
	/*
	 * The driver's own verdict, when it prints one: NVLink Xids name the
	 * unit, then "Nonfatal" or "Fatal" ("145, RLW_RXPIPE Nonfatal XC0 i0
	 * Link 13 (...)"); an Xid the driver raised because of another says so
	 * ("45, pid=..., Ch 00000001 caused by previous Xid 149").
	 */
	if (has_word(p + n, "Nonfatal") || has_word(p + n, "Non-fatal"))
		pb_set_str(ev, "severity", "nonfatal");
	else if (has_word(p + n, "Fatal"))
		pb_set_str(ev, "severity", "fatal");
	{
		const char *cause = strstr(p + n, "caused by previous Xid ");
		double prev;
		size_t k;

		if (cause) {
			cause += 23;
			for (k = 0; cause[k] >= '0' && cause[k] <= '9' && k < 6; k++)
				;
			pb_copy_trim(cause, k, num);
			if (pb_count(num, &prev))
				pb_set_num(ev, "cause_xid", prev);
		}
	}
	/* Xid 154: "... changed from 0x0 (None) to 0x2 (Node Reboot Required)". */
	if ((p = strstr(p, " to 0x")) && (p = strchr(p, '(')) && (close = strchr(p, ')'))) {
		char action[PB_FIELD];

		pb_copy_trim(p + 1, (size_t)(close - p - 1), action);
		if (*action)
			pb_set_str(ev, "action", action);
	}
}

/* Copy the token at p (up to a space, comma, parenthesis or end) into out. */
static void token(const char *p, char out[PB_FIELD])
{
	size_t n = 0;

	while (p[n] && p[n] != ' ' && p[n] != ',' && p[n] != ')' && p[n] != '(' && p[n] != ':' &&
	       n < PB_FIELD - 1)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* The word after "after" in msg, as a device name, or "" . */
static int dev_after(const char *msg, const char *after, char out[PB_FIELD])
{
	const char *p = strstr(msg, after);

	out[0] = '\0';
	if (!p)
		return 0;
	token(p + strlen(after), out);
	return out[0] != '\0';
}

/* Storage event: what happened and the device the kernel names. */
static void parse_storage(const char *msg, cJSON *ev)
{
	const char *what = storage_what(msg);
	char dev[PB_FIELD] = "";
	size_t n;

	pb_set_str(ev, "what", what);
	if (!strcmp(what, "io_error"))
		dev_after(msg, " error, dev ", dev);
	else if (!strcmp(what, "nvme_reset")) {
		char num[PB_FIELD];

		/* "nvme nvme2: I/O 0 QID 0 timeout, reset controller" -> nvme2 */
		if (dev_after(msg, "nvme nvme", num))
			snprintf(dev, sizeof(dev), "nvme%.20s", num);
	}
	else if (!strcmp(what, "fs_shutdown"))
		dev_after(msg, "XFS (", dev);
	else if (!dev_after(msg, "(device ", dev) && !dev_after(msg, "EXT4-fs (", dev) &&
		 !dev_after(msg, "EXT3-fs (", dev) && dev_after(msg, "on device ", dev)) {
		/* "Aborting journal on device nvme0n1p1-8.": the journal's inode follows the dash. */
		char *dash = strrchr(dev, '-');

		if ((n = strlen(dev)) && dev[n - 1] == '.')
			dev[n - 1] = '\0';
		if (dash && dash[1] && strspn(dash + 1, "0123456789") == strlen(dash + 1))
			*dash = '\0';
	}
	if (*dev)
		pb_set_str(ev, "dev", dev);
}

/*
 * "nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Non-fatal, Link 44 ..."
 * -> sxid 22013, pci, and the driver's severity word when the line has one.
 */
static void parse_sxid(const char *msg, cJSON *ev)
{
	const char *p = strstr(msg, "SXid ("), *close = p ? strstr(p, "): ") : NULL;
	char num[PB_FIELD];
	double code;
	size_t n;

	find_pci(msg, ev);
	if (!close)
		return;
	for (p = close + 3, n = 0; p[n] >= '0' && p[n] <= '9' && n < 8; n++)
		;
	pb_copy_trim(p, n, num);
	if (pb_count(num, &code))
		pb_set_num(ev, "sxid", code);
	p += n;
	if (!strncmp(p, ", Non-fatal", 11) || !strncmp(p, ", Nonfatal", 10))
		pb_set_str(ev, "severity", "nonfatal");
	else if (!strncmp(p, ", Fatal", 7))
		pb_set_str(ev, "severity", "fatal");
}

/*
 * Split a line into its time and message: dmesg iso ("<time> msg"),
 * journal short-iso ("<time> host kernel: msg") or plain dmesg
 * ("[ secs] msg", placed with the boot time when it is known).
 */
static const char *split_time(const char *line, int journal, double boot, double *t)
{
	const char *end;

	*t = -1;
	if (pb_iso_time(line, t, &end)) {
		while (*end == ' ')
			end++;
		if (journal) {
			const char *k = strstr(end, "kernel: ");

			if (k)
				end = k + 8;
		}
		return end;
	}
	if (line[0] == '[') {
		char *e;
		double s = strtod(line + 1, &e);

		if (e != line + 1 && *e == ']') {
			if (boot > 0 && s >= 0)
				*t = boot + s;
			for (e++; *e == ' '; e++)
				;
			return e;
		}
	}
	return line;
}

/* A continuation line: indented, without a time of its own. */
static int continued(const char *line)
{
	double t;
	const char *end;

	return (line[0] == ' ' || line[0] == '\t') && !pb_iso_time(line, &t, &end);
}

/*
 * The message starting at line i, with its continuation lines joined on
 * single spaces, into msg; returns the index of the next record.
 */
static size_t record(const struct pb_block *b, size_t i, int journal, double boot, double *t,
		     struct hp_buf *msg)
{
	hp_buf_reset(msg);
	if (hp_buf_adds(msg, split_time(b->lines.v[i], journal, boot, t)))
		return i + 1;
	for (i++; i < b->lines.n && continued(b->lines.v[i]); i++) {
		const char *p = b->lines.v[i];

		while (*p == ' ' || *p == '\t')
			p++;
		if (hp_buf_addc(msg, ' ') || hp_buf_adds(msg, p))
			break;
	}
	return i;
}

/* The text of one kernel line kept as evidence: at most TEXT_MAX bytes, cut on a character. */
static void evidence_text(const struct hp_buf *msg, char text[TEXT_MAX + 1])
{
	size_t n = msg->len > TEXT_MAX ? TEXT_MAX : msg->len;

	while (n && n < msg->len && ((unsigned char)msg->buf[n] & 0xC0) == 0x80)
		n--;
	memcpy(text, msg->buf, n);
	text[n] = '\0';
}

/* One event: its kind, time when known, text, and what the kind names (Xid, device, cgroup). */
static cJSON *make_event(const char *kind, double t, const struct hp_buf *msg)
{
	cJSON *ev = cJSON_CreateObject();
	char text[TEXT_MAX + 1];

	pb_set_str(ev, "kind", kind);
	if (t >= 0)
		pb_set_num(ev, "t", t);
	evidence_text(msg, text);
	pb_set_str(ev, "text", text);
	if (!strcmp(kind, "xid"))
		parse_xid(msg->buf, ev);
	else if (!strcmp(kind, "sxid"))
		parse_sxid(msg->buf, ev);
	else if (!strcmp(kind, "storage"))
		parse_storage(msg->buf, ev);
	else if (strcmp(kind, "oom_kill") && strcmp(kind, "oom_invoked"))
		find_pci(msg->buf, ev);
	if (!strcmp(kind, "oom_kill"))
		pb_set_bool(ev, "cgroup", strstr(msg->buf, "Memory cgroup out of memory") != NULL);
	return ev;
}

/* A block that holds lines to read: it ended well, or was cut short (no END) after some. */
static int readable(const struct pb_block *b)
{
	return b && ((b->ended && b->rc == 0) || (!b->ended && b->lines.n));
}

/*
 * The source to read: dmesg, else the journal (*journal set). NULL when
 * neither could be read, after recording why under k.error.
 */
static const struct pb_block *pick_source(const struct pb_input *in, cJSON *k, int *journal)
{
	const struct pb_block *dm = pb_find(in, "dmesg"), *jr = pb_find(in, "journal"), *why;
	const char *line;
	char e[PB_FIELD];

	*journal = 0;
	if (readable(dm))
		return dm;
	if (readable(jr)) {
		*journal = 1;
		return jr;
	}
	why = (jr && !pb_not_installed(jr)) ? jr : dm;
	line = pb_first_line(why);
	if (why && pb_not_installed(why))
		hp_strlcpy(e, "neither dmesg nor journalctl is installed", sizeof(e));
	else if (why && why->ended && why->rc == 124)
		hp_strlcpy(e, "reading kernel messages timed out", sizeof(e));
	else if (line)
		pb_copy_trim(line, strlen(line), e);
	else
		hp_strlcpy(e, "kernel messages could not be read", sizeof(e));
	pb_set_str(k, "error", e);
	return NULL;
}

/* Epoch seconds of the boot, from the node block's clock and uptime; -1 when unknown. */
static double boot_time(const cJSON *facts)
{
	const cJSON *node = cJSON_GetObjectItemCaseSensitive(facts, "node");
	const cJSON *epoch = cJSON_GetObjectItemCaseSensitive(node, "epoch");
	const cJSON *up = cJSON_GetObjectItemCaseSensitive(node, "uptime_s");

	if (cJSON_IsNumber(epoch) && cJSON_IsNumber(up))
		return epoch->valuedouble - up->valuedouble;
	return -1;
}

/* The lines of a source and how to read their times. */
struct kmsg_src {
	const struct pb_block *b;
	int journal;
	double boot;
};

/* Count every event by kind into counts (all kinds present, zero or more); returns the total. */
static size_t count_events(const struct kmsg_src *src, cJSON *counts, struct hp_buf *msg)
{
	size_t i, total = 0;

	for (i = 0; i < HP_ARRAY_LEN(kinds); i++)
		pb_set_num(counts, kinds[i], 0);
	for (i = 0; i < src->b->lines.n;) {
		const char *kind;
		double t;
		cJSON *c;

		i = record(src->b, i, src->journal, src->boot, &t, msg);
		kind = classify(msg->buf);
		if (!kind)
			continue;
		c = cJSON_GetObjectItemCaseSensitive(counts, kind);
		cJSON_SetNumberValue(c, c->valuedouble + 1);
		total++;
	}
	return total;
}

/*
 * Add the newest events to events: at most KIND_CAP of each capped kind,
 * and the newest of the others up to what PB_MAX_EVENTS leaves.
 */
static void keep_events(const struct kmsg_src *src, const cJSON *counts, cJSON *events,
			struct hp_buf *msg)
{
	double storage = hp_json_num(counts, "storage", 0), sxid = hp_json_num(counts, "sxid", 0);
	double other = 0, skip_storage, skip_sxid, skip_other;
	const cJSON *c;
	size_t i;

	cJSON_ArrayForEach(c, counts)
		if (!capped_kind(c->string))
			other += c->valuedouble;
	skip_storage = storage > KIND_CAP ? storage - KIND_CAP : 0;
	skip_sxid = sxid > KIND_CAP ? sxid - KIND_CAP : 0;
	skip_other = other > PB_MAX_EVENTS - 2 * KIND_CAP ? other - (PB_MAX_EVENTS - 2 * KIND_CAP) : 0;
	for (i = 0; i < src->b->lines.n;) {
		const char *kind;
		double t, *skip;

		i = record(src->b, i, src->journal, src->boot, &t, msg);
		kind = classify(msg->buf);
		if (!kind)
			continue;
		skip = !strcmp(kind, "storage") ? &skip_storage :
		       !strcmp(kind, "sxid")    ? &skip_sxid :
						  &skip_other;
		if (*skip > 0) {
			(*skip)--;
			continue;
		}
		cJSON_AddItemToArray(events, make_event(kind, t, msg));
	}
}

void pb_parse_kmsg(const struct pb_input *in, cJSON *facts)
{
	struct hp_buf msg = HP_BUF_INIT(4096);
	struct kmsg_src src;
	cJSON *k, *counts;

	if (!pb_find(in, "dmesg") && !pb_find(in, "journal"))
		return;
	k = pb_obj(facts, "kmsg");
	if (!(src.b = pick_source(in, k, &src.journal)))
		return;
	pb_set_str(k, "source", src.journal ? "journal" : "dmesg");
	pb_set_num(k, "lines", (double)src.b->lines.n);
	src.boot = boot_time(facts);
	/* Count every match, keep the newest PB_MAX_EVENTS. */
	counts = pb_obj(k, "counts");
	count_events(&src, counts, &msg);
	keep_events(&src, counts, cJSON_AddArrayToObject(k, "events"), &msg);
	hp_buf_release(&msg);
}
