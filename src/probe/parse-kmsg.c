/*
 * Kernel messages (dmesg --time-format iso, else journalctl -k): each
 * line is matched against the exact kernel texts of the events hpnode
 * judges (OOM kills, panics, lockups, hung tasks, kernel BUGs, NMIs,
 * machine checks, NVIDIA Xids) and kept with its time. Benign lines that
 * merely look alike, such as "NMI watchdog: Enabled", are not events.
 */
#include <stdlib.h>
#include <string.h>

#include "hp/util.h"
#include "probe-int.h"

/* Characters of a kernel line kept as evidence. */
#define TEXT_MAX 300

static const char *kinds[] = {
	"xid", "oom_kill", "oom_invoked", "panic", "soft_lockup", "hard_lockup",
	"hung_task", "kernel_bug", "nmi", "mce",
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
	return NULL;
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

void pb_parse_kmsg(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *dm = pb_find(in, "dmesg"), *jr = pb_find(in, "journal"), *b;
	const cJSON *node = cJSON_GetObjectItemCaseSensitive(facts, "node");
	cJSON *k, *events, *counts;
	double boot = -1, epoch, up;
	size_t i, first;
	int journal;

	if (!dm && !jr)
		return;
	k = pb_obj(facts, "kmsg");
	/* A block cut short (no END) still holds good lines. */
	if (dm && ((dm->ended && dm->rc == 0) || (!dm->ended && dm->nkept))) {
		b = dm;
		journal = 0;
	} else if (jr && ((jr->ended && jr->rc == 0) || (!jr->ended && jr->nkept))) {
		b = jr;
		journal = 1;
	} else {
		/* Neither source could be read: say why, judge nothing. */
		const struct pb_block *why = (jr && !(jr->ended && jr->rc == 127)) ? jr : dm;
		const char *line = pb_first_line(why);
		char e[PB_FIELD];

		if (why && why->ended && why->rc == 127)
			hp_strlcpy(e, "neither dmesg nor journalctl is installed", sizeof(e));
		else if (why && why->ended && why->rc == 124)
			hp_strlcpy(e, "reading kernel messages timed out", sizeof(e));
		else if (line)
			pb_copy_trim(line, strlen(line), e);
		else
			hp_strlcpy(e, "kernel messages could not be read", sizeof(e));
		pb_set_str(k, "error", e);
		return;
	}
	pb_set_str(k, "source", journal ? "journal" : "dmesg");
	pb_set_num(k, "lines", (double)b->nkept);
	if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(node, "epoch")) &&
	    cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(node, "uptime_s"))) {
		epoch = cJSON_GetObjectItemCaseSensitive(node, "epoch")->valuedouble;
		up = cJSON_GetObjectItemCaseSensitive(node, "uptime_s")->valuedouble;
		boot = epoch - up;
	}
	counts = pb_obj(k, "counts");
	for (i = 0; i < HP_ARRAY_LEN(kinds); i++)
		pb_set_num(counts, kinds[i], 0);
	events = cJSON_AddArrayToObject(k, "events");
	if (!events)
		hp_die("out of memory");
	/* Count every match, keep the newest PB_MAX_EVENTS. */
	for (i = 0, first = 0; i < b->nkept; i++) {
		double t;
		const char *msg = split_time(b->lines[i], journal, boot, &t), *kind = classify(msg);
		cJSON *c;

		if (!kind)
			continue;
		c = cJSON_GetObjectItemCaseSensitive(counts, kind);
		cJSON_SetNumberValue(c, c->valuedouble + 1);
		first++;
	}
	first = first > PB_MAX_EVENTS ? first - PB_MAX_EVENTS : 0;
	for (i = 0; i < b->nkept; i++) {
		double t;
		const char *msg = split_time(b->lines[i], journal, boot, &t), *kind = classify(msg);
		char text[TEXT_MAX + 1];
		cJSON *ev;
		size_t n;

		if (!kind)
			continue;
		if (first) {
			first--;
			continue;
		}
		ev = cJSON_CreateObject();
		if (!ev)
			hp_die("out of memory");
		pb_set_str(ev, "kind", kind);
		if (t >= 0)
			pb_set_num(ev, "t", t);
		n = strlen(msg);
		if (n > TEXT_MAX)
			n = TEXT_MAX;
		/* Cut on a UTF-8 character boundary. */
		while (n && n < strlen(msg) && ((unsigned char)msg[n] & 0xC0) == 0x80)
			n--;
		memcpy(text, msg, n);
		text[n] = '\0';
		pb_set_str(ev, "text", text);
		if (!strcmp(kind, "xid"))
			parse_xid(msg, ev);
		if (!strcmp(kind, "oom_kill"))
			pb_set_bool(ev, "cgroup", strstr(msg, "Memory cgroup out of memory") != NULL);
		cJSON_AddItemToArray(events, ev);
	}
}
