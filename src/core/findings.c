/*
 * Findings and the section table: how a check's run() records what it
 * found (hp_emit*), and the reference-section ids and titles that pointers
 * name. Formatting belongs to the reporter, not here.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/check.h"

static const struct {
	const char *id;
	const char *title;
} sections[] = {
	{ "A", "EFA / Security Group" },
	{ "A.1", "Security Group Self-Referencing Rules" },
	{ "A.2", "On-Node EFA Checks" },
	{ "A.3", "EFA Device Count" },
	{ "B", "VPC / Routing" },
	{ "B.1", "Common VPC / Routing Errors" },
	{ "B.2", "VPC DNS Support / Hostnames" },
	{ "B.3", "Private Subnets & NAT Gateway" },
	{ "B.4", "VPC Endpoints for Private VPCs" },
	{ "B.5", "EKS VPC / SG Alignment with HyperPod" },
	{ "B.6", "Subnet IPs and ENI Headroom" },
	{ "C", "Capacity / AZ" },
	{ "C.1", "Capacity by Availability Zone" },
	{ "D", "Lifecycle Scripts" },
	{ "E", "Software Versions" },
	{ "E.1", "Version Spot-Check on One Node" },
	{ "E.2", "CUDA Driver vs Toolkit Mismatch" },
	{ "E.3", "EFA / NCCL / libfabric Compatibility" },
	{ "E.4", "Container vs Host Mismatch" },
	{ "E.5", "Job-Launcher Environment" },
	{ "F", "Hardware / Auto-Repair" },
	{ "F.1", "HyperPod Node Status" },
	{ "F.2", "Reboot and Replace Nodes" },
	{ "F.3", "Auto-Repair Not Triggering" },
	{ "G", "GPU/Accelerator" },
	{ "G.1", "NVIDIA GPUs" },
	{ "G.1.a", "Row-Remap State" },
	{ "G.1.b", "DCGM Health and nvvs Logs" },
	{ "G.1.c", "Xid Classes" },
	{ "G.1.d", "GPU Recovery Action" },
	{ "G.2", "Trainium/Inferentia" },
	{ "G.3", "Drain Before Replacement" },
	{ "H", "Slurm Node Management" },
	{ "H.1", "Node Down / Unresponsive" },
	{ "H.2", "Node Unexpectedly Rebooted" },
	{ "H.3", "Jobs Stuck PENDING/COMPLETING" },
	{ "H.4", "Slurm Node Name to Instance ID" },
	{ "H.5", "slurmctld Not Responding" },
	{ "H.6", "munge Inactive" },
	{ "I", "Resource Exhaustion" },
	{ "I.1", "Cannot Allocate Memory at os.fork()" },
	{ "I.2", "Root Volume Exhausted" },
	{ "I.3", "OOM Events" },
	{ "I.4", "Inode Exhaustion" },
	{ "I.5", "Time Sync Not Healthy" },
	{ "I.6", "/opt/sagemaker Volume Full" },
	{ "I.7", "NVMe Instance Store Not Mounted" },
	{ "J", "Configuration" },
	{ "J.1", "Cluster Status" },
	{ "J.2", "ThreadsPerCore and vCPU Count" },
	{ "K", "Node Access via SSM" },
	{ "K.1", "Missing IAM Permissions" },
	{ "K.2", "AWS Credentials" },
	{ "K.3", "Connecting to a Node" },
	{ "K.4", "Session Manager Plugin" },
	{ "K.5", "SSM Session Errors" },
	{ "K.6", "amazon-ssm-agent Inactive" },
	{ "L", "Log Collection" },
	{ "M", "Container Runtime" },
	{ "M.1", "Pod Failure States" },
	{ "M.2", "containerd Inactive" },
	{ "N", "Kernel & System" },
	{ "N.1", "Panic, Lockup and Hardware Signals" },
	{ "N.2", "Previous Boot Logs" },
	{ "O", "CNI / Pod Networking" },
	{ "O.1", "aws-node and IPAMD Failures" },
	{ "O.2", "Pod IP and ENI Exhaustion" },
	{ "O.3", "kube-proxy Crash" },
	{ "O.4", "CoreDNS Crash" },
};

const char *const hp_section_ids[] = {
	"A", "A.1", "A.2", "A.3", "B", "B.1", "B.2", "B.3", "B.4", "B.5", "B.6", "C", "C.1",
	"D", "E", "E.1", "E.2", "E.3", "E.4", "E.5", "F", "F.1", "F.2", "F.3", "G", "G.1",
	"G.1.a", "G.1.b", "G.1.c", "G.1.d", "G.2", "G.3", "H", "H.1", "H.2", "H.3", "H.4",
	"H.5", "H.6", "I", "I.1", "I.2", "I.3", "I.4", "I.5", "I.6", "I.7", "J", "J.1", "J.2",
	"K", "K.1", "K.2", "K.3", "K.4", "K.5", "K.6", "L", "M", "M.1", "M.2", "N", "N.1",
	"N.2", "O", "O.1", "O.2", "O.3", "O.4", NULL
};

const char *hp_section_title(const char *id)
{
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(sections); i++)
		if (!strcmp(sections[i].id, id))
			return sections[i].title;
	return NULL;
}

static struct hp_finding *push(struct hp_emit *em, enum hp_tag tag, enum hp_prio prio,
			       const char *section, const char *node, const char *fmt, va_list ap)
	HP_PRINTF(6, 0);

static struct hp_finding *push(struct hp_emit *em, enum hp_tag tag, enum hp_prio prio,
			       const char *section, const char *node, const char *fmt, va_list ap)
{
	struct hp_findings *out = em->out;
	struct hp_finding *f;
	struct hp_buf msg = HP_BUF_INIT(HP_MAX_LINE);

	f = hp_array_push(out);
	f->check = em->check;
	f->tag = tag;
	if (tag == HP_TAG_FAIL || tag == HP_TAG_WARN)
		f->prio = prio;
	else
		f->prio = HP_PNONE;
	f->section = xstrdup(section ? section : (em->check ? em->check->section : ""));
	f->node = node ? xstrdup(node) : NULL;
	/* A message longer than the line cap is cut, never dropped. */
	if (hp_buf_vaddf(&msg, fmt, ap))
		hp_buf_puts(&msg, "(message too long)");
	f->message = hp_buf_detach(&msg, NULL);
	return f;
}

struct hp_finding *hp_emit(struct hp_emit *em, enum hp_tag tag, const char *fmt, ...)
{
	struct hp_finding *f;
	va_list ap;

	va_start(ap, fmt);
	f = push(em, tag, em->check ? em->check->prio : HP_P2, NULL, NULL, fmt, ap);
	va_end(ap);
	return f;
}

struct hp_finding *hp_emitx(struct hp_emit *em, enum hp_tag tag, enum hp_prio prio,
			    const char *section, const char *node, const char *fmt, ...)
{
	struct hp_finding *f;
	va_list ap;

	va_start(ap, fmt);
	f = push(em, tag, prio, section, node, fmt, ap);
	va_end(ap);
	return f;
}

void hp_finding_evidence(struct hp_finding *f, const char *line)
{
	if (!f->evidence)
		f->evidence = cJSON_CreateArray();
	cJSON_AddItemToArray(f->evidence, cJSON_CreateString(line));
}

/* Sets one placeholder value on a finding, replacing an earlier one. */
void hp_finding_var(struct hp_finding *f, const char *name, const char *value)
{
	if (!f->vars && !(f->vars = cJSON_CreateObject()))
		hp_die("out of memory");
	cJSON_DeleteItemFromObjectCaseSensitive(f->vars, name);
	if (!cJSON_AddStringToObject(f->vars, name, value))
		hp_die("out of memory");
}

void hp_finding_node(struct hp_finding *f, const char *id)
{
	if (!id)
		return;
	if (!f->nodes && !(f->nodes = cJSON_CreateArray()))
		hp_die("out of memory");
	cJSON_AddItemToArray(f->nodes, cJSON_CreateString(id));
}

void hp_findings_release(struct hp_findings *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		free(f->v[i].section);
		free(f->v[i].message);
		free(f->v[i].node);
		cJSON_Delete(f->v[i].evidence);
		cJSON_Delete(f->v[i].vars);
		cJSON_Delete(f->v[i].nodes);
	}
	hp_array_release(f);
}
