/*
 * The check registry: every check, by pointer, in report order, and the
 * loop that runs them over a snapshot. Also the few text helpers the area
 * files share (clipping remote text, formatting epoch times).
 */
#include <string.h>
#include <time.h>

#include "hp/json.h"
#include "checks.h"

/*
 * Order matters: findings come out in this order, and the reporter keeps
 * it within each group. A group's failed-call row sits before the checks
 * that read that data, so the reason a check is silent comes first.
 */
const struct hp_check *const hp_checks[] = {
	&hp_check_cluster_identity,
	&hp_check_api_identity,
	&hp_check_cluster_status,
	&hp_check_cluster_node_recovery,

	&hp_check_api_events,
	&hp_check_events_signals,

	&hp_check_api_nodes,
	&hp_check_nodes_target,
	&hp_check_nodes_status,
	&hp_check_cluster_instance_groups,
	&hp_check_cluster_threads_per_core,

	&hp_check_api_eks,
	&hp_check_kube_access,
	&hp_check_kube_node_health,
	&hp_check_kube_deep_health,
	&hp_check_kube_node_ready,
	&hp_check_kube_namespace,
	&hp_check_kube_aws_node,
	&hp_check_kube_kube_proxy,
	&hp_check_kube_coredns,
	&hp_check_kube_sandbox,
	&hp_check_kube_workload_pods,

	&hp_check_slurm_controller,
	&hp_check_slurm_slurmctld,
	&hp_check_slurm_munge,
	&hp_check_slurm_nodes,
	&hp_check_slurm_jobs,

	&hp_check_api_vpc,
	&hp_check_cluster_vpc_config,
	&hp_check_network_efa_sg,
	&hp_check_network_vpc,
	&hp_check_network_dns,
	&hp_check_network_routing,
	&hp_check_network_endpoints,
	&hp_check_network_eks,
	&hp_check_network_subnet_ips,
	&hp_check_network_eni,
	&hp_check_network_capacity,

	&hp_check_api_logs,
	&hp_check_logs_group,
	&hp_check_logs_lifecycle,
	&hp_check_logs_health_agent,

	&hp_check_api_ssm,
	&hp_check_ssm_targets,
	&hp_check_ssm_reachability,

	&hp_check_node_probe,
	&hp_check_node_disk_root,
	&hp_check_node_disk_sagemaker,
	&hp_check_node_inodes,
	&hp_check_node_shm,
	&hp_check_node_nvme,
	&hp_check_node_disk_containerd,
	&hp_check_node_memory,
	&hp_check_node_oom,
	&hp_check_node_time,
	&hp_check_node_ssm_agent,
	&hp_check_node_containerd,
	&hp_check_node_kubelet,
	&hp_check_node_provisioning,
	&hp_check_node_slurm,
	&hp_check_node_kernel,
	&hp_check_node_gpu_count,
	&hp_check_node_gpu_xid,
	&hp_check_node_gpu_ecc,
	&hp_check_node_gpu_remap,
	&hp_check_node_gpu_recovery,
	&hp_check_node_gpu_clocks,
	&hp_check_node_gpu_dcgm,
	&hp_check_node_gpu_nvvs,
	&hp_check_node_gpu_nvlink,
	&hp_check_node_neuron,
	&hp_check_node_efa,
	&hp_check_node_net_errors,
	&hp_check_node_imds,

	&hp_check_slurm_mapping,
};

const size_t hp_checks_count = HP_ARRAY_LEN(hp_checks);

const struct hp_check *hp_check_find(const char *id)
{
	size_t i;

	for (i = 0; i < hp_checks_count; i++)
		if (!strcmp(hp_checks[i]->id, id))
			return hp_checks[i];
	return NULL;
}

void hp_checks_run(const struct hp_snapshot *snap, struct hp_findings *out)
{
	size_t i;

	/* Node-scoped checks iterate the nodes themselves, so all get the snapshot. */
	for (i = 0; i < hp_checks_count; i++) {
		struct hp_emit em = { hp_checks[i], out };

		hp_checks[i]->run(snap, &em);
	}
}

/* Whether id is named by pattern: equal, or pattern "x.*" and id starts with "x.". */
static int id_matches(const char *pattern, const char *id)
{
	size_t n = strlen(pattern);

	if (n >= 2 && !strcmp(pattern + n - 2, ".*"))
		return !strncmp(pattern, id, n - 1);
	return !strcmp(pattern, id);
}

void hp_checks_run_only(const struct hp_snapshot *snap, const char *const *ids,
			struct hp_findings *out)
{
	size_t i, k;

	for (i = 0; i < hp_checks_count; i++) {
		for (k = 0; ids[k]; k++) {
			if (id_matches(ids[k], hp_checks[i]->id)) {
				struct hp_emit em = { hp_checks[i], out };

				hp_checks[i]->run(snap, &em);
				break;
			}
		}
	}
}

const char *hp_check_clip(const char *s, char out[HP_CHECK_CLIP_SIZE])
{
	size_t i = 0, chars = 0;

	if (!s)
		s = "";
	while (s[i] && chars < HP_CHECK_CLIP_CHARS) {
		size_t cont = 0;

		/*
		 * Step over one UTF-8 character: its lead byte and at most three
		 * continuation bytes (more would be malformed; they count anew).
		 */
		i++;
		while (cont < 3 && (s[i] & 0xC0) == 0x80) {
			i++;
			cont++;
		}
		chars++;
	}
	memcpy(out, s, i);
	if (s[i])
		memcpy(out + i, "\xE2\x80\xA6", 4);
	else
		out[i] = '\0';
	return out;
}

const char *hp_check_iso_time(double s, char out[32])
{
	struct tm tm;
	time_t t;

	/* Beyond year 9999 is not a time any API sends. */
	if (!(s >= 0 && s < 253402300800.0)) {
		hp_strlcpy(out, "unknown time", 32);
		return out;
	}
	t = (time_t)s;
	if (!gmtime_r(&t, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		hp_strlcpy(out, "unknown time", 32);
	return out;
}

const char *hp_check_str(const cJSON *obj, const char *path, const char *def)
{
	const char *v = hp_json_str(obj, path);

	return v && *v ? v : def;
}
