/*
 * The section table of the NCCL guide (references/nccl-diagnostics-detail.md):
 * the ids NCCL findings point to and their heading titles. Its ids are
 * "NC<n>" and "NC<n>.<m>", a form no node guide id has (include/hp/refdoc.h).
 * tests/unit/test-refdoc.c checks that the headings match, in order.
 */
#include <string.h>

#include "hp/nccl.h"
#include "hp/util.h"

static const struct {
	const char *id;
	const char *title;
} sections[] = {
	{ "NC1", "NCCL Timeout / Rendezvous Hang" },
	{ "NC1.1", "Where the Hang Happens" },
	{ "NC1.2", "Collective Timeouts at Scale" },
	{ "NC2", "Security Group Self-Reference" },
	{ "NC3", "NCCL_SOCKET_IFNAME — Interface Selection" },
	{ "NC4", "Container OOM (exit code 137)" },
	{ "NC5", "Wrong Results — Gradient Sync" },
	{ "NC6", "EFA Configuration" },
	{ "NC6.1", "EFA Device Plugin and Pod Resources" },
	{ "NC6.2", "EFA on the Node" },
	{ "NC7", "Node Hardware Failures" },
	{ "NC8", "Slurm Procedures" },
	{ "NC9", "NCCL RAS — Live Job Health" },
	{ "NC10", "NCCL Version Mismatch" },
	{ "NC11", "GPU Out of Memory" },
	{ "NC12", "MASTER_ADDR DNS and the Headless Service" },
	{ "NC13", "EFA TCP Fallback" },
	{ "NC14", "GPU Peer-to-Peer Blocked (ACS / IOMMU)" },
	{ "NC14.1", "NVLink and Topology" },
	{ "NC15", "Stale Shared Memory and RemoveIPC" },
	{ "NC16", "Host Firewall" },
	{ "NC17", "RDMA Memory Registration (memlock)" },
	{ "NC17.1", "/dev/shm Size" },
	{ "NC17.2", "Stack Size and Unlimited memlock" },
	{ "NC18", "Framework Tuning" },
	{ "NC19", "Advanced Tuning (NVLS, PXN, Topology, Cross-NIC)" },
	{ "NC19.1", "EFA Interfaces per Instance Type" },
	{ "NC20", "Pending / CrashLoopBackOff / Init-Container Failures" },
	{ "NC21", "GPU Row-Remap and DCGM Health" },
	{ "NC22", "NetworkPolicy Blocking Training Traffic" },
	{ "NC23", "Log Error Patterns" },
	{ "NC24", "Environment Variables" },
	{ "NC25", "Performance Baselines" },
	{ "NC26", "Permissions" },
	{ "NC27", "Training Logs in CloudWatch" },
};

const char *const hp_nccl_section_ids[] = {
	"NC1", "NC1.1", "NC1.2", "NC2", "NC3", "NC4", "NC5", "NC6", "NC6.1", "NC6.2", "NC7",
	"NC8", "NC9", "NC10", "NC11", "NC12", "NC13", "NC14", "NC14.1", "NC15", "NC16", "NC17",
	"NC17.1", "NC17.2", "NC18", "NC19", "NC19.1", "NC20", "NC21", "NC22", "NC23", "NC24",
	"NC25", "NC26", "NC27", NULL
};

const char *hp_nccl_section_title(const char *id)
{
	size_t i;

	for (i = 0; id && i < HP_ARRAY_LEN(sections); i++)
		if (!strcmp(sections[i].id, id))
			return sections[i].title;
	return NULL;
}
