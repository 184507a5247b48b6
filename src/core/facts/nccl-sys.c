/*
 * NCCL probe decoders for the system side of a node: resource limits (the
 * probe shell's, the PAM limits files', and those of running training
 * processes with the NCCL environment they run with), huge pages, logind's
 * RemoveIPC, NCCL's /dev/shm segments, and NUMA nodes.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/util.h"
#include "nccl-int.h"

/*
 * A /proc/<pid>/limits line ("Max locked memory   65536   65536   bytes")
 * into <prefix>_soft and <prefix>_hard; the label has spaces, so the
 * values are the last three words.
 */
static int limit_line(const char *l, cJSON *o)
{
	static const struct {
		const char *label, *key;
	} labels[] = {
		{ "Max locked memory", "memlock" },
		{ "Max stack size", "stack" },
		{ "Max open files", "nofile" },
	};
	char w[8][PB_FIELD], key[32];
	size_t i, n;

	l = pb_skip(l);
	for (i = 0; i < HP_ARRAY_LEN(labels); i++) {
		if (!pb_prefix(l, labels[i].label))
			continue;
		n = pb_words(l + strlen(labels[i].label), w, 8);
		if (n < 2)
			return 0;
		snprintf(key, sizeof(key), "%s_soft", labels[i].key);
		nf_limit(o, key, w[0], 1);
		snprintf(key, sizeof(key), "%s_hard", labels[i].key);
		nf_limit(o, key, w[1], 1);
		return 1;
	}
	return 0;
}

void hp_nccl_decode_limits(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "limits");
	const struct pb_block *c = pb_find(f, "limits_conf");
	size_t i;

	if (b) {
		cJSON *o = pb_obj(facts, "limits");
		int any = 0;

		for (i = 0; b->rc == 0 && i < b->lines.n; i++)
			any |= limit_line(b->lines.v[i], o);
		pb_set_bool(o, "read", any);
	}
	if (c && c->rc == 0) {
		cJSON *list = pb_arr(pb_obj(facts, "limits_conf"), "entries");

		for (i = 0; i < c->lines.n && cJSON_GetArraySize(list) < NF_LIST; i++) {
			const char *l = c->lines.v[i], *colon = strstr(l, ": ");
			char w[5][PB_FIELD], *file;
			cJSON *x;

			if (!colon || pb_words(colon + 2, w, 5) < 4)
				continue;
			x = cJSON_CreateObject();
			file = xstrndup(l, (size_t)(colon - l));
			pb_set_str(x, "file", file);
			free(file);
			pb_set_str(x, "domain", w[0]);
			pb_set_str(x, "type", w[1]);
			pb_set_str(x, "item", w[2]);
			/* PAM's limits are in KiB; -1 means no limit as well. */
			if (!strcmp(w[3], "-1"))
				pb_set_str(x, "value", "unlimited");
			else if (!nf_limit(x, "value", w[3], 1))
				pb_set_str(x, "value_text", w[3]);
			cJSON_AddItemToArray(list, x);
		}
	}
}

/* Launchers and variables that mark a process as a training process. */
static int training_cmd(const char *cmd)
{
	static const char *const words[] = { "torchrun", "torch.distributed.run", "mpirun",
					     "deepspeed", "accelerate", "_perf" };
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(words); i++)
		if (strstr(cmd, words[i]))
			return 1;
	return 0;
}

static int training_env(const char *name)
{
	return !strcmp(name, "RANK") || !strcmp(name, "LOCAL_RANK") ||
	       !strcmp(name, "WORLD_SIZE") || !strcmp(name, "MASTER_ADDR");
}

void hp_nccl_decode_procs(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "procs");
	cJSON *o, *list, *cur = NULL, *env = NULL;
	int count = 0, training = 0;
	size_t i;

	if (!b)
		return;
	o = pb_obj(facts, "procs");
	if (b->rc != 0) {
		pb_set_bool(o, "read", 0);
		return;
	}
	pb_set_bool(o, "read", 1);
	list = pb_arr(o, "list");
	for (i = 0; i < b->lines.n; i++) {
		const char *l = b->lines.v[i];

		if (pb_prefix(l, "pid ")) {
			char w[1][PB_FIELD];
			const char *cmd;
			double pid;

			if (cur && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cur, "training")))
				training++;
			cur = NULL;
			env = NULL;
			if (pb_words(l + 4, w, 1) != 1 || !pb_count(w[0], &pid))
				continue;
			count++;
			cur = cJSON_CreateObject();
			pb_set_num(cur, "pid", pid);
			cmd = pb_skip(pb_skip(l + 4) + strlen(w[0]));
			{
				/* The probe turns each NUL of the command line into a space. */
				char *c = xstrdup(cmd);
				size_t cl = strlen(c);

				while (cl && c[cl - 1] == ' ')
					c[--cl] = '\0';
				pb_set_str(cur, "cmd", c);
				free(c);
			}
			pb_set_bool(cur, "training", training_cmd(cmd));
			cJSON_AddItemToArray(list, cur);
		} else if (pb_prefix(l, "limit ") && cur) {
			limit_line(l + 6, cur);
		} else if (pb_prefix(l, "env ") && cur) {
			const char *eq = strchr(l + 4, '=');
			char *name;

			if (!eq || eq == l + 4)
				continue;
			if (!env)
				env = pb_obj(cur, "env");
			name = xstrndup(l + 4, (size_t)(eq - (l + 4)));
			pb_set_str(env, name, eq + 1);
			if (training_env(name))
				pb_set_bool(cur, "training", 1);
			free(name);
		} else if (!strcmp(l, "more")) {
			pb_set_bool(o, "more", 1);
		}
	}
	if (cur && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cur, "training")))
		training++;
	pb_set_num(o, "count", count);
	pb_set_num(o, "training", training);
	if (!cJSON_GetObjectItemCaseSensitive(o, "more"))
		pb_set_bool(o, "more", 0);
}

void hp_nccl_decode_hugepages(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "hugepages");
	char w[3][PB_FIELD];
	cJSON *sizes;
	size_t i;

	if (!b || b->rc != 0)
		return;
	sizes = pb_obj(pb_obj(facts, "hugepages"), "sizes");
	for (i = 0; i < b->lines.n && cJSON_GetArraySize(sizes) < 16; i++) {
		size_t n = pb_words(b->lines.v[i], w, 3);
		double kb, v;
		cJSON *x;

		if (!n || !pb_count(w[0], &kb))
			continue;
		x = pb_obj(sizes, w[0]);
		if (n > 1 && pb_count(w[1], &v))
			pb_set_num(x, "total", v);
		if (n > 2 && pb_count(w[2], &v))
			pb_set_num(x, "free", v);
	}
}

/* logind.conf's boolean words; -1 for anything else (logind ignores it). */
static int boolean(const char *v)
{
	static const char *const yes[] = { "yes", "true", "1", "on", "y", "t" };
	static const char *const no[] = { "no", "false", "0", "off", "n", "f" };
	char low[16];
	size_t i;

	for (i = 0; v[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)v[i]);
	low[i] = '\0';
	if (v[i])
		return -1;
	for (i = 0; i < HP_ARRAY_LEN(yes); i++) {
		if (!strcmp(low, yes[i]))
			return 1;
		if (!strcmp(low, no[i]))
			return 0;
	}
	return -1;
}

/* The drop-in's file name, which orders drop-ins across their directories. */
static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * systemd reads logind.conf, then the drop-ins (logind.conf.d, *.conf) of /usr/lib,
 * /etc and /run in the order of their file names; the last setting wins.
 */
void hp_nccl_decode_logind(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "logind");
	const char *win_file = NULL, *win_base = NULL;
	int value = 1, files = -1;
	cJSON *o, *lines;
	char *winner = NULL;
	size_t i;

	if (!b || b->rc != 0)
		return;
	o = pb_obj(facts, "logind");
	lines = pb_arr(o, "lines");
	for (i = 0; i < b->lines.n; i++) {
		const char *l = b->lines.v[i], *colon = strstr(l, ": "), *eq;
		char v[32], *file;
		size_t k = 0;
		int is_main, win_main, x;
		double n;

		if (pb_prefix(l, "files ") && pb_count(l + 6, &n)) {
			files = (int)n;
			continue;
		}
		if (!colon || !(eq = strchr(colon, '=')))
			continue;
		if (cJSON_GetArraySize(lines) < NF_LIST)
			cJSON_AddItemToArray(lines, cJSON_CreateString(l));
		eq = pb_skip(eq + 1);
		while (eq[k] && eq[k] != ' ' && eq[k] != '#' && k + 1 < sizeof(v)) {
			v[k] = eq[k];
			k++;
		}
		v[k] = '\0';
		x = boolean(v);
		if (x < 0)
			continue;
		file = xstrndup(l, (size_t)(colon - l));
		is_main = !strcmp(base(file), "logind.conf");
		/*
		 * The main file is read first (/etc's copy replaces /usr/lib's, which
		 * the probe lists first); a drop-in wins over it and over drop-ins
		 * whose names sort before its own.
		 */
		win_main = win_file && !strcmp(base(win_file), "logind.conf");
		if (!win_file || (is_main && win_main) ||
		    (!is_main && (win_main || strcmp(base(file), win_base) >= 0))) {
			free(winner);
			winner = file;
			win_file = winner;
			win_base = base(winner);
			value = x;
		} else {
			free(file);
		}
	}
	if (files >= 0)
		pb_set_num(o, "files", files);
	/*
	 * Without any logind.conf, logind may not be there at all: unknown.
	 * With one that sets nothing, systemd's built-in default (yes) holds.
	 */
	if (winner || files > 0) {
		pb_set_bool(o, "remove_ipc", value);
		pb_set_str(o, "source", winner ? winner : "default");
	}
	free(winner);
}

void hp_nccl_decode_shm(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "shm");
	cJSON *o, *names;
	size_t i;
	int counted = 0;

	if (!b)
		return;
	o = pb_obj(facts, "shm");
	if (b->rc != 0) {
		pb_set_bool(o, "read", 0);
		return;
	}
	names = pb_arr(o, "names");
	for (i = 0; i < b->lines.n; i++) {
		const char *l = b->lines.v[i];
		double n;

		if (pb_prefix(l, "file ") && cJSON_GetArraySize(names) < 20)
			cJSON_AddItemToArray(names, cJSON_CreateString(l + 5));
		else if (pb_prefix(l, "count ") && pb_count(l + 6, &n)) {
			pb_set_num(o, "nccl_segments", n);
			counted = 1;
		}
	}
	/* Without its count line the listing is incomplete: unknown. */
	pb_set_bool(o, "read", counted);
}

void hp_nccl_decode_numa(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "numa");
	char w[2][PB_FIELD];
	cJSON *o, *cpus;
	int nodes = 0;
	size_t i;

	if (!b || b->rc != 0)
		return;
	o = pb_obj(facts, "numa");
	cpus = pb_obj(o, "cpus");
	for (i = 0; i < b->lines.n; i++) {
		size_t n = pb_words(b->lines.v[i], w, 2);
		double id;

		if (!n || !pb_prefix(w[0], "node") || !pb_count(w[0] + 4, &id))
			continue;
		nodes++;
		if (cJSON_GetArraySize(cpus) < NF_LIST)
			pb_set_str(cpus, w[0], n > 1 ? w[1] : "");
	}
	pb_set_num(o, "nodes", nodes);
}
