/*
 * Findings and the section table: how a check's run() records what it
 * found (hp_emit*), and the reference-section ids and titles that pointers
 * name. Formatting belongs to the reporter, not here.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/check.h"

static const struct {
	const char *id;
	const char *title;
} sections[] = {
	{ "A", "EFA / Security Group" },
	{ "B", "VPC / Routing" },
	{ "B.1", "Common VPC / Routing Errors" },
	{ "B.2", "VPC DNS Support / Hostnames" },
	{ "B.3", "Private Subnets & NAT Gateway" },
	{ "B.4", "VPC Endpoints for Private VPCs" },
	{ "B.5", "EKS VPC / SG Alignment with HyperPod" },
	{ "C", "Capacity / AZ" },
	{ "D", "Lifecycle Scripts" },
	{ "E", "Software Versions" },
	{ "F", "Hardware / Auto-Repair" },
	{ "G", "GPU/Accelerator" },
	{ "G.1", "NVIDIA GPUs" },
	{ "G.1.a", "Row-Remap State" },
	{ "G.1.b", "DCGM Health and nvvs Logs" },
	{ "G.2", "Trainium/Inferentia" },
	{ "H", "Slurm Node Management" },
	{ "I", "Resource Exhaustion" },
	{ "I.1", "Cannot Allocate Memory at os.fork()" },
	{ "I.2", "Root Volume Exhausted" },
	{ "I.3", "OOM Events" },
	{ "I.4", "Inode Exhaustion" },
	{ "I.5", "Time Sync Not Healthy" },
	{ "J", "Configuration" },
	{ "J.1", "Cluster Status" },
	{ "K", "Node Access via SSM" },
	{ "L", "Log Collection" },
	{ "M", "Container Runtime" },
	{ "N", "Kernel & System" },
	{ "O", "CNI / Pod Networking" },
};

const char *const hp_section_ids[] = {
	"A", "B", "B.1", "B.2", "B.3", "B.4", "B.5", "C", "D", "E", "F", "G", "G.1", "G.1.a",
	"G.1.b", "G.2", "H", "I", "I.1", "I.2", "I.3", "I.4", "I.5", "J", "J.1", "K", "L", "M",
	"N", "O", NULL
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
{
	struct hp_findings *out = em->out;
	struct hp_finding *f;
	struct hp_buf msg = HP_BUF_INIT(HP_MAX_LINE);

	if (out->n == out->alloc) {
		out->alloc = out->alloc ? out->alloc * 2 : 32;
		out->v = xrealloc(out->v, out->alloc * sizeof(*out->v));
	}
	f = &out->v[out->n++];
	memset(f, 0, sizeof(*f));
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

void hp_findings_release(struct hp_findings *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		free(f->v[i].section);
		free(f->v[i].message);
		free(f->v[i].node);
		cJSON_Delete(f->v[i].evidence);
	}
	free(f->v);
	f->v = NULL;
	f->n = f->alloc = 0;
}
