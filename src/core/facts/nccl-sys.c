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
	char w[8][NF_FIELD], key[32];
	size_t i, n;

	l = nf_skip(l);
	for (i = 0; i < HP_ARRAY_LEN(labels); i++) {
		if (!nf_prefix(l, labels[i].label))
			continue;
		n = nf_words(l + strlen(labels[i].label), w, 8);
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

void hp_nccl_decode_limits(const struct hp_nccl_frame *f, cJSON *facts)
{
	const struct hp_nccl_block *b = hp_nccl_frame_find(f, "limits");
	const struct hp_nccl_block *c = hp_nccl_frame_find(f, "limits_conf");
	size_t i;

	if (b) {
		cJSON *o = nf_obj(facts, "limits");
		int any = 0;

		for (i = 0; b->rc == 0 && i < b->nkept; i++)
			any |= limit_line(b->lines[i], o);
		nf_bool(o, "read", any);
	}
	if (c && c->rc == 0) {
		cJSON *list = nf_arr(nf_obj(facts, "limits_conf"), "entries");

		for (i = 0; i < c->nkept && cJSON_GetArraySize(list) < NF_LIST; i++) {
			const char *l = c->lines[i], *colon = strstr(l, ": ");
			char w[5][NF_FIELD], *file;
			cJSON *x;

			if (!colon || nf_words(colon + 2, w, 5) < 4)
				continue;
			x = cJSON_CreateObject();
			file = xstrndup(l, (size_t)(colon - l));
			nf_str(x, "file", file);
			free(file);
			nf_str(x, "domain", w[0]);
			nf_str(x, "type", w[1]);
			nf_str(x, "item", w[2]);
			/* PAM's limits are in KiB; -1 means no limit as well. */
			if (!strcmp(w[3], "-1"))
				nf_str(x, "value", "unlimited");
			else if (!nf_limit(x, "value", w[3], 1))
				nf_str(x, "value_text", w[3]);
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

void hp_nccl_decode_procs(const struct hp_nccl_frame *f, cJSON *facts)
{
	const struct hp_nccl_block *b = hp_nccl_frame_find(f, "procs");
	cJSON *o, *list, *cur = NULL, *env = NULL;
	int count = 0, training = 0;
	size_t i;

	if (!b)
		return;
	o = nf_obj(facts, "procs");
	if (b->rc != 0) {
		nf_bool(o, "read", 0);
		return;
	}
	nf_bool(o, "read", 1);
	list = nf_arr(o, "list");
	for (i = 0; i < b->nkept; i++) {
		const char *l = b->lines[i];

		if (nf_prefix(l, "pid ")) {
			char w[1][NF_FIELD];
			const char *cmd;
			double pid;

			if (cur && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cur, "training")))
				training++;
			cur = NULL;
			env = NULL;
			if (nf_words(l + 4, w, 1) != 1 || !nf_count(w[0], &pid))
				continue;
			count++;
			cur = cJSON_CreateObject();
			nf_num(cur, "pid", pid);
			cmd = nf_skip(nf_skip(l + 4) + strlen(w[0]));
			{
				/* The probe turns each NUL of the command line into a space. */
				char *c = xstrdup(cmd);
				size_t cl = strlen(c);

				while (cl && c[cl - 1] == ' ')
					c[--cl] = '\0';
				nf_str(cur, "cmd", c);
				free(c);
			}
			nf_bool(cur, "training", training_cmd(cmd));
			cJSON_AddItemToArray(list, cur);
		} else if (nf_prefix(l, "limit ") && cur) {
			limit_line(l + 6, cur);
		} else if (nf_prefix(l, "env ") && cur) {
			const char *eq = strchr(l + 4, '=');
			char *name;

			if (!eq || eq == l + 4)
				continue;
			if (!env)
				env = nf_obj(cur, "env");
			name = xstrndup(l + 4, (size_t)(eq - (l + 4)));
			nf_str(env, name, eq + 1);
			if (training_env(name))
				nf_bool(cur, "training", 1);
			free(name);
		} else if (!strcmp(l, "more")) {
			nf_bool(o, "more", 1);
		}
	}
	if (cur && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cur, "training")))
		training++;
	nf_num(o, "count", count);
	nf_num(o, "training", training);
	if (!cJSON_GetObjectItemCaseSensitive(o, "more"))
		nf_bool(o, "more", 0);
}

void hp_nccl_decode_hugepages(const struct hp_nccl_frame *f, cJSON *facts)
{
	const struct hp_nccl_block *b = hp_nccl_frame_find(f, "hugepages");
	char w[3][NF_FIELD];
	cJSON *sizes;
	size_t i;

	if (!b || b->rc != 0)
		return;
	sizes = nf_obj(nf_obj(facts, "hugepages"), "sizes");
	for (i = 0; i < b->nkept && cJSON_GetArraySize(sizes) < 16; i++) {
		size_t n = nf_words(b->lines[i], w, 3);
		double kb, v;
		cJSON *x;

		if (!n || !nf_count(w[0], &kb))
			continue;
		x = nf_obj(sizes, w[0]);
		if (n > 1 && nf_count(w[1], &v))
			nf_num(x, "total", v);
		if (n > 2 && nf_count(w[2], &v))
			nf_num(x, "free", v);
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
void hp_nccl_decode_logind(const struct hp_nccl_frame *f, cJSON *facts)
{
	const struct hp_nccl_block *b = hp_nccl_frame_find(f, "logind");
	const char *win_file = NULL, *win_base = NULL;
	int value = 1, files = -1;
	cJSON *o, *lines;
	char *winner = NULL;
	size_t i;

	if (!b || b->rc != 0)
		return;
	o = nf_obj(facts, "logind");
	lines = nf_arr(o, "lines");
	for (i = 0; i < b->nkept; i++) {
		const char *l = b->lines[i], *colon = strstr(l, ": "), *eq;
		char v[32], *file;
		size_t k = 0;
		int is_main, win_main, x;
		double n;

		if (nf_prefix(l, "files ") && nf_count(l + 6, &n)) {
			files = (int)n;
			continue;
		}
		if (!colon || !(eq = strchr(colon, '=')))
			continue;
		if (cJSON_GetArraySize(lines) < NF_LIST)
			cJSON_AddItemToArray(lines, cJSON_CreateString(l));
		eq = nf_skip(eq + 1);
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
		nf_num(o, "files", files);
	/*
	 * Without any logind.conf, logind may not be there at all: unknown.
	 * With one that sets nothing, systemd's built-in default (yes) holds.
	 */
	if (winner || files > 0) {
		nf_bool(o, "remove_ipc", value);
		nf_str(o, "source", winner ? winner : "default");
	}
	free(winner);
}

void hp_nccl_decode_shm(const struct hp_nccl_frame *f, cJSON *facts)
{
	const struct hp_nccl_block *b = hp_nccl_frame_find(f, "shm");
	cJSON *o, *names;
	size_t i;
	int counted = 0;

	if (!b)
		return;
	o = nf_obj(facts, "shm");
	if (b->rc != 0) {
		nf_bool(o, "read", 0);
		return;
	}
	names = nf_arr(o, "names");
	for (i = 0; i < b->nkept; i++) {
		const char *l = b->lines[i];
		double n;

		if (nf_prefix(l, "file ") && cJSON_GetArraySize(names) < 20)
			cJSON_AddItemToArray(names, cJSON_CreateString(l + 5));
		else if (nf_prefix(l, "count ") && nf_count(l + 6, &n)) {
			nf_num(o, "nccl_segments", n);
			counted = 1;
		}
	}
	/* Without its count line the listing is incomplete: unknown. */
	nf_bool(o, "read", counted);
}

void hp_nccl_decode_numa(const struct hp_nccl_frame *f, cJSON *facts)
{
	const struct hp_nccl_block *b = hp_nccl_frame_find(f, "numa");
	char w[2][NF_FIELD];
	cJSON *o, *cpus;
	int nodes = 0;
	size_t i;

	if (!b || b->rc != 0)
		return;
	o = nf_obj(facts, "numa");
	cpus = nf_obj(o, "cpus");
	for (i = 0; i < b->nkept; i++) {
		size_t n = nf_words(b->lines[i], w, 2);
		double id;

		if (!n || !nf_prefix(w[0], "node") || !nf_count(w[0] + 4, &id))
			continue;
		nodes++;
		if (cJSON_GetArraySize(cpus) < NF_LIST)
			nf_str(cpus, w[0], n > 1 ? w[1] : "");
	}
	nf_num(o, "nodes", nodes);
}
