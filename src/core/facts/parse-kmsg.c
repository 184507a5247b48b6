/*
 * Kernel messages (dmesg --time-format iso, else journalctl -k): each
 * line is matched against the exact kernel texts of the events hpnode
 * judges (OOM kills, panics, lockups, hung tasks, kernel BUGs, NMIs,
 * machine checks, NVIDIA Xids, the driver's own texts for a GPU that is
 * lost or failed to initialise, and uncorrectable PCIe AER errors) and kept
 * with its time. Benign lines that merely look alike, such as "NMI
 * watchdog: Enabled" or a corrected AER error, are not events. A message
 * the kernel printed over several lines (dmesg indents the later ones,
 * without a time) is joined into one.
 */
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
};

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
	/* "PCIe Bus Error: severity=Uncorrected (Fatal), type=..."; Corrected ones are noise. */
	if (strstr(msg, "PCIe Bus Error: severity=Uncorrected"))
		return "pcie_aer";
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
	/* Xid 154: "... changed from 0x0 (None) to 0x2 (Node Reboot Required)". */
	if ((p = strstr(p, " to 0x")) && (p = strchr(p, '(')) && (close = strchr(p, ')'))) {
		char action[PB_FIELD];

		pb_copy_trim(p + 1, (size_t)(close - p - 1), action);
		if (*action)
			pb_set_str(ev, "action", action);
	}
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
	why = (jr && !(jr->ended && jr->rc == 127)) ? jr : dm;
	line = pb_first_line(why);
	if (why && why->ended && why->rc == 127)
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

/* Add every event after the first skip ones to events (the newest are kept). */
static void keep_events(const struct kmsg_src *src, size_t skip, cJSON *events,
			struct hp_buf *msg)
{
	size_t i;

	for (i = 0; i < src->b->lines.n;) {
		const char *kind;
		double t;

		i = record(src->b, i, src->journal, src->boot, &t, msg);
		kind = classify(msg->buf);
		if (!kind)
			continue;
		if (skip) {
			skip--;
			continue;
		}
		cJSON_AddItemToArray(events, make_event(kind, t, msg));
	}
}

void pb_parse_kmsg(const struct pb_input *in, cJSON *facts)
{
	struct hp_buf msg = HP_BUF_INIT(4096);
	struct kmsg_src src;
	size_t total;
	cJSON *k;

	if (!pb_find(in, "dmesg") && !pb_find(in, "journal"))
		return;
	k = pb_obj(facts, "kmsg");
	if (!(src.b = pick_source(in, k, &src.journal)))
		return;
	pb_set_str(k, "source", src.journal ? "journal" : "dmesg");
	pb_set_num(k, "lines", (double)src.b->lines.n);
	src.boot = boot_time(facts);
	/* Count every match, keep the newest PB_MAX_EVENTS. */
	total = count_events(&src, pb_obj(k, "counts"), &msg);
	keep_events(&src, total > PB_MAX_EVENTS ? total - PB_MAX_EVENTS : 0,
		    cJSON_AddArrayToObject(k, "events"), &msg);
	hp_buf_release(&msg);
}
