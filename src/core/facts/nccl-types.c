/*
 * What an instance type offers NCCL, by its DescribeInstanceTypes facts in
 * the snapshot (key "instance_types", EC2's XML names): GPUs and EFA
 * interfaces. Whether a group is accelerated is read from these facts,
 * never guessed from the type's name. Also Kubernetes resource quantities.
 */
#include <stdlib.h>
#include <string.h>

#include "hp/json.h"
#include "hp/nccl-facts.h"
#include "hp/snapshot.h"
#include "hp/util.h"

const cJSON *hp_nccl_type_info(const struct hp_snapshot *s, const char *type)
{
	if (!s || !type)
		return NULL;
	if (hp_starts_with(type, "ml."))
		type += 3;
	return cJSON_GetObjectItemCaseSensitive(hp_snapshot_get(s, "instance_types"), type);
}

int hp_nccl_type_gpus(const struct hp_snapshot *s, const char *type)
{
	const cJSON *info = hp_nccl_type_info(s, type), *g;
	double n = 0;

	if (!cJSON_IsObject(info))
		return -1;
	cJSON_ArrayForEach(g, hp_json_arr(info, "gpuInfo.gpus"))
		n += hp_json_num(g, "count", 0);
	return n > 0 && n < 1e6 ? (int)n : 0;
}

int hp_nccl_type_efa(const struct hp_snapshot *s, const char *type)
{
	const cJSON *info = hp_nccl_type_info(s, type);
	double n;

	if (!cJSON_IsObject(info))
		return -1;
	if (!hp_json_bool(info, "networkInfo.efaSupported", 0))
		return 0;
	n = hp_json_num(info, "networkInfo.efaInfo.maximumEfaInterfaces", 1);
	return n >= 1 && n < 1e6 ? (int)n : 1;
}

int hp_nccl_type_accelerated(const struct hp_snapshot *s, const char *type)
{
	int gpus = hp_nccl_type_gpus(s, type);

	if (gpus < 0)
		return -1;
	return gpus > 0 || hp_nccl_type_efa(s, type) > 0;
}

/* A Kubernetes quantity ("64Mi", "10Gi", "1G", "500000000") in bytes; -1 when unreadable. */
double hp_nccl_quantity_bytes(const char *q)
{
	static const struct {
		const char *suffix;
		double mul;
	} units[] = {
		{ "Ki", 1024.0 }, { "Mi", 1048576.0 }, { "Gi", 1073741824.0 },
		{ "Ti", 1099511627776.0 }, { "Pi", 1125899906842624.0 }, { "k", 1e3 }, { "K", 1e3 },
		{ "M", 1e6 }, { "G", 1e9 }, { "T", 1e12 }, { "P", 1e15 }, { "m", 1e-3 }, { "", 1 },
	};
	char *end;
	double v;
	size_t i;

	if (!q || !*q)
		return -1;
	v = strtod(q, &end);
	if (end == q || v < 0)
		return -1;
	for (i = 0; i < HP_ARRAY_LEN(units); i++)
		if (!strcmp(end, units[i].suffix))
			return v * units[i].mul;
	return -1;
}
