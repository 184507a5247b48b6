/*
 * Time synchronisation (chronyc -n tracking, timedatectl status) and
 * service states (systemctl show LoadState/ActiveState/SubState). The
 * offset is kept signed in seconds; a missing tool stays "not present",
 * which the checks report as unknown, never as unhealthy.
 */
#include <string.h>

#include "hp/util.h"
#include "probe-int.h"

/* "Key   : value" -> key and value, trimmed; 0 when the line has no colon. */
static int key_value(const char *line, char key[PB_FIELD], char val[PB_FIELD])
{
	const char *colon = strchr(line, ':');

	if (!colon)
		return 0;
	pb_copy_trim(line, (size_t)(colon - line), key);
	pb_copy_trim(colon + 1, strlen(colon + 1), val);
	return 1;
}

static void set_error(cJSON *obj, const struct pb_block *b)
{
	const char *line = pb_first_line(b);
	char e[PB_FIELD];

	if (b->ended && b->rc == 124) {
		pb_set_str(obj, "error", "timed out");
		return;
	}
	if (!line)
		return;
	pb_copy_trim(line, strlen(line), e);
	pb_set_str(obj, "error", e);
}

static void parse_chrony(const struct pb_block *b, cJSON *facts)
{
	cJSON *c = pb_rc_obj(facts, "chrony", b);
	size_t i;
	int seen = 0;

	if (pb_not_installed(b))
		return;
	for (i = 0; i < b->lines.n; i++) {
		char key[PB_FIELD], val[PB_FIELD], w[4][PB_FIELD];
		double v;

		if (!key_value(b->lines.v[i], key, val))
			continue;
		if (!strcmp(key, "System time")) {
			/* "0.000012345 seconds fast of NTP time": fast means ahead. */
			if (pb_words(val, w, 4) >= 3 && pb_num(w[0], &v)) {
				if (!strcmp(w[2], "slow"))
					v = -v;
				else if (strcmp(w[2], "fast"))
					continue;
				pb_set_num(c, "offset_s", v);
				seen = 1;
			}
		} else if (!strcmp(key, "Last offset")) {
			if (pb_words(val, w, 1) == 1 && pb_num(w[0], &v))
				pb_set_num(c, "last_offset_s", v);
		} else if (!strcmp(key, "Stratum")) {
			if (pb_count(val, &v))
				pb_set_num(c, "stratum", v);
		} else if (!strcmp(key, "Leap status")) {
			pb_set_str(c, "leap", val);
			pb_set_bool(c, "synchronized", strcmp(val, "Not synchronised") != 0);
			seen = 1;
		} else if (!strcmp(key, "Reference ID")) {
			const char *open = strchr(val, '('), *close = strrchr(val, ')');
			char ref[PB_FIELD];

			if (open && close && close > open + 1)
				pb_copy_trim(open + 1, (size_t)(close - open - 1), ref);
			else
				pb_copy_trim(val, strlen(val), ref);
			if (*ref)
				pb_set_str(c, "reference", ref);
		}
	}
	if (!seen)
		set_error(c, b);
}

static int yes_no(const char *v, int *out)
{
	if (!strcmp(v, "yes")) {
		*out = 1;
		return 1;
	}
	if (!strcmp(v, "no")) {
		*out = 0;
		return 1;
	}
	return 0;
}

static void parse_timedatectl(const struct pb_block *b, cJSON *facts)
{
	cJSON *t = pb_rc_obj(facts, "timedatectl", b);
	size_t i;
	int seen = 0, yn;

	if (pb_not_installed(b))
		return;
	for (i = 0; i < b->lines.n; i++) {
		char key[PB_FIELD], val[PB_FIELD];

		if (!key_value(b->lines.v[i], key, val))
			continue;
		/* Older systemd says "NTP synchronized". */
		if ((!strcmp(key, "System clock synchronized") || !strcmp(key, "NTP synchronized")) &&
		    yes_no(val, &yn)) {
			pb_set_bool(t, "synchronized", yn);
			seen = 1;
		} else if (!strcmp(key, "NTP service")) {
			pb_set_str(t, "ntp_service", val);
		}
	}
	if (!seen)
		set_error(t, b);
}

void pb_parse_time(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *b;

	if ((b = pb_find(in, "chrony")))
		parse_chrony(b, facts);
	if ((b = pb_find(in, "timedatectl")))
		parse_timedatectl(b, facts);
}

static void end_unit(cJSON *units, char *id, char *load, char *active, char *sub)
{
	size_t n = strlen(id);
	cJSON *u;

	if (n > 8 && !strcmp(id + n - 8, ".service"))
		id[n - 8] = '\0';
	if (*id && !cJSON_GetObjectItemCaseSensitive(units, id)) {
		u = pb_obj(units, id);
		if (*load)
			pb_set_str(u, "load", load);
		if (*active)
			pb_set_str(u, "active", active);
		if (*sub)
			pb_set_str(u, "sub", sub);
	}
	*id = *load = *active = *sub = '\0';
}

void pb_parse_services(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *b = pb_find(in, "systemd");
	char id[PB_FIELD] = "", load[PB_FIELD] = "", active[PB_FIELD] = "", sub[PB_FIELD] = "";
	cJSON *s, *units;
	size_t i;

	if (!b)
		return;
	s = pb_obj(facts, "services");
	if (pb_not_installed(b)) {
		pb_set_bool(s, "available", 0);
		pb_set_str(s, "error", "systemctl is not installed");
		return;
	}
	units = pb_obj(s, "units");
	/* One record per unit, records separated by blank lines. */
	for (i = 0; i <= b->lines.n; i++) {
		const char *line = i < b->lines.n ? b->lines.v[i] : "";
		const char *eq = strchr(line, '=');
		char key[PB_FIELD];

		if (!*line) {
			end_unit(units, id, load, active, sub);
			continue;
		}
		if (!eq)
			continue;
		pb_copy_trim(line, (size_t)(eq - line), key);
		if (!strcmp(key, "Id")) {
			if (*id)
				end_unit(units, id, load, active, sub);
			pb_copy_trim(eq + 1, strlen(eq + 1), id);
		} else if (!strcmp(key, "LoadState")) {
			pb_copy_trim(eq + 1, strlen(eq + 1), load);
		} else if (!strcmp(key, "ActiveState")) {
			pb_copy_trim(eq + 1, strlen(eq + 1), active);
		} else if (!strcmp(key, "SubState")) {
			pb_copy_trim(eq + 1, strlen(eq + 1), sub);
		}
	}
	pb_set_bool(s, "available", cJSON_GetArraySize(units) > 0);
	if (!cJSON_GetArraySize(units))
		set_error(s, b);
}
