/*
 * The output of `hpnode nccl --exec`'s read-only script inside a container
 * (src/collect/nccl-exec.c) as facts: the NCCL environment, torch's NCCL
 * version, the libnccl files found and the size of /dev/shm. Pure: text in,
 * cJSON out; what the text does not say stays absent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/util.h"
#include "nccl-int.h"

int hp_nccl_env_name(const char *name)
{
	static const char *const prefixes[] = { "NCCL_", "FI_", "TORCH_NCCL_", "OMPI_MCA_btl_tcp_if_" };
	static const char *const names[] = { "TORCH_DISTRIBUTED_DEBUG", "MASTER_ADDR", "MASTER_PORT",
					     "WORLD_SIZE", "RANK", "LOCAL_RANK",
					     "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH",
					     "PYTORCH_CUDA_ALLOC_CONF" };
	static const char *const secret[] = { "KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL" };
	size_t i;
	int want = 0;

	if (!name)
		return 0;
	for (i = 0; i < HP_ARRAY_LEN(prefixes); i++)
		want |= pb_prefix(name, prefixes[i]);
	for (i = 0; i < HP_ARRAY_LEN(names); i++)
		want |= !strcmp(name, names[i]);
	for (i = 0; want && i < HP_ARRAY_LEN(secret); i++)
		if (strstr(name, secret[i]))
			return 0;
	return want;
}

static void decode_env(const struct pb_input *f, cJSON *out)
{
	const struct pb_block *b = pb_find(f, "env");
	cJSON *env;
	size_t i;

	if (!b)
		return;
	env = pb_obj(out, "env");
	for (i = 0; i < b->lines.n && cJSON_GetArraySize(env) < 200; i++) {
		const char *eq = strchr(b->lines.v[i], '=');
		char name[PB_FIELD];
		size_t n;

		if (!eq || eq == b->lines.v[i] || (n = (size_t)(eq - b->lines.v[i])) >= sizeof(name))
			continue;
		memcpy(name, b->lines.v[i], n);
		name[n] = '\0';
		/* Checked again here: the text came from a container. */
		if (!hp_nccl_env_name(name) || cJSON_GetObjectItemCaseSensitive(env, name))
			continue;
		pb_set_str(env, name, eq + 1);
	}
}

/* torch.cuda.nccl.version(): "(2, 21, 5)" or a number (2215 before NCCL 2.9, 21805 after). */
static int nccl_version(const char *v, char *out, size_t n)
{
	unsigned a, b, c;
	double code;

	if (sscanf(v, "(%u, %u, %u)", &a, &b, &c) == 3 || sscanf(v, "%u.%u.%u", &a, &b, &c) == 3) {
		snprintf(out, n, "%u.%u.%u", a, b, c);
		return 1;
	}
	if (!pb_count(v, &code) || code < 1000 || code > 999999)
		return 0;
	if (code >= 10000)
		snprintf(out, n, "%u.%u.%u", (unsigned)(code / 10000), (unsigned)code / 100 % 100,
			 (unsigned)code % 100);
	else
		snprintf(out, n, "%u.%u.%u", (unsigned)(code / 1000), (unsigned)code / 100 % 10,
			 (unsigned)code % 100);
	return 1;
}

static void decode_torch(const struct pb_input *f, cJSON *out)
{
	const struct pb_block *b = pb_find(f, "torch");
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->lines.n; i++) {
		const char *l = b->lines.v[i];
		char v[64];

		if (pb_prefix(l, "torch ")) {
			pb_set_str(out, "torch", pb_skip(l + 6));
		} else if (pb_prefix(l, "nccl ") && nccl_version(pb_skip(l + 5), v, sizeof(v))) {
			pb_set_str(out, "torch_nccl", v);
		} else if (!cJSON_GetObjectItem(out, "torch_error") && *l) {
			char clip[200];

			snprintf(clip, sizeof(clip), "%s", l);
			pb_set_str(out, "torch_error", clip);
		}
	}
}

/* "…/libnccl.so.2.21.5" -> "2.21.5"; 0 when the name holds no three-part version. */
static int lib_version(const char *path, char *out, size_t n)
{
	const char *p = strstr(path, "libnccl.so.");
	unsigned a, b, c;

	if (!p || sscanf(p + 11, "%u.%u.%u", &a, &b, &c) != 3)
		return 0;
	snprintf(out, n, "%u.%u.%u", a, b, c);
	return 1;
}

static void decode_libnccl(const struct pb_input *f, cJSON *out)
{
	const struct pb_block *b = pb_find(f, "libnccl");
	cJSON *libs;
	size_t i;

	if (!b)
		return;
	libs = pb_arr(out, "libnccl");
	for (i = 0; i < b->lines.n && i < NF_LIST; i++) {
		char v[64];

		if (b->lines.v[i][0] != '/')
			continue;
		cJSON_AddItemToArray(libs, cJSON_CreateString(b->lines.v[i]));
		if (lib_version(b->lines.v[i], v, sizeof(v)) && !cJSON_GetObjectItem(out, "libnccl_version"))
			pb_set_str(out, "libnccl_version", v);
	}
}

/* df -Pk: "tmpfs 65536 0 65536 0% /dev/shm" -> its size in KiB (exact, never rounded). */
static void decode_shm(const struct pb_input *f, cJSON *out)
{
	const char *l = pb_first_line(pb_find(f, "shm"));
	char w[6][PB_FIELD];
	double kib;

	if (!l)
		return;
	if (pb_words(l, w, 6) == 6 && pb_count(w[1], &kib))
		pb_set_num(out, "shm_kb", kib);
	else
		pb_set_str(out, "shm_error", l);
}

cJSON *hp_nccl_exec_parse(const char *text, size_t len)
{
	struct pb_input f;
	cJSON *out = cJSON_CreateObject();

	memset(&f, 0, sizeof(f));
	pb_frame(&f, text, text ? len : 0, &pb_nccl_frame);
	pb_set_bool(out, "done", f.done);
	decode_env(&f, out);
	decode_torch(&f, out);
	decode_libnccl(&f, out);
	decode_shm(&f, out);
	pb_release(&f);
	return out;
}
