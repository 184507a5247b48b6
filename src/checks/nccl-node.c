/*
 * The on-node checks of the NCCL probe (src/collect/probe/nccl-probe.sh,
 * facts in include/hp/nccl-facts.h), report group "NCCL On-Node Checks": each is
 * called once per node the NCCL probe reached, with that node's NCCL facts
 * (c->facts) and, when the node probe reached it too, its node facts
 * (c->node_facts: kernel, driver, EFA devices); results alike on many nodes
 * fold by the rule of fold.h. What the node probe judges already (GPUs, Xid,
 * ECC, NVLink status and counters, EFA devices and provider, DCGM, nvvs)
 * stays with triage's node checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hp/facts.h"
#include "hp/json.h"
#include "checks.h"
#include "nccl-check.h"
#include "node.h"

#define GIB (1024.0 * 1024 * 1024)

/* The node has EFA: its type's facts say so, else the node probe saw uverbs devices. */
static int has_efa(const struct node_ctx *c)
{
	int t = hp_node_type_efa(c);

	if (t >= 0)
		return t > 0;
	return hp_json_num(c->node_facts, "efa.uverbs", 0) > 0;
}

static int has_gpu(const struct node_ctx *c)
{
	int t = hp_node_type_gpus(c);

	if (t >= 0)
		return t > 0;
	return hp_json_num(c->facts, "topo.gpus", 0) > 0 || hp_json_len(c->node_facts, "nvidia.gpus") > 0;
}

/* A variable of /etc/environment or of a training process, with where it came from. */
static const char *node_env(const struct node_ctx *c, const char *name, char *where, size_t n)
{
	const cJSON *p, *v = cJSON_GetObjectItemCaseSensitive(hp_json_get(c->facts, "environment"), name);

	if (cJSON_IsString(v)) {
		snprintf(where, n, "/etc/environment");
		return v->valuestring;
	}
	cJSON_ArrayForEach(p, hp_json_arr(c->facts, "procs.list")) {
		v = cJSON_GetObjectItemCaseSensitive(hp_json_get(p, "env"), name);
		if (cJSON_IsTrue(cJSON_GetObjectItem(p, "training")) && cJSON_IsString(v)) {
			snprintf(where, n, "process %.0f", hp_json_num(p, "pid", 0));
			return v->valuestring;
		}
	}
	return NULL;
}

/* ---- nccl.node-probe ---- */

static void judge_probe(struct node_ctx *c)
{
	const cJSON *p = hp_json_get(c->facts, "probe");
	int blocks = cJSON_GetArraySize(hp_json_get(p, "blocks"));

	if (!blocks) {
		hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "NCCL probe gave no output",
			    "NCCL probe gave no output on %s: its NCCL checks are not run", c->who);
		return;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItem(p, "truncated")))
		hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "NCCL probe output cut short",
			    "NCCL probe output cut short on %s (%d blocks arrived): later checks may "
			    "lack data", c->who, blocks);
	if (cJSON_IsFalse(cJSON_GetObjectItem(p, "root")))
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "NCCL probe not run as root",
			    "NCCL probe ran as uid %.0f on %s, not root: ACS and firewall rules may be "
			    "unreadable", hp_json_num(p, "uid", -1), c->who);
}

/* ---- nccl.topology ---- */

static void judge_topology(struct node_ctx *c)
{
	const cJSON *t = hp_json_get(c->facts, "topo"), *l, *e;
	double pairs = hp_json_num(t, "gpu_pairs", 0), nv = hp_json_num(t, "nvlink_pairs", 0);
	double pcie = hp_json_num(t, "pcie_pairs", 0), best = 0;
	struct node_say *s;
	char most[16] = "";

	if (!t || cJSON_IsFalse(cJSON_GetObjectItem(t, "present")))
		return;
	if (hp_json_num(t, "rc", 0) != 0 || !pairs) {
		if (hp_json_num(t, "rc", 0) != 0)
			hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "nvidia-smi topo -m failed",
				    "nvidia-smi topo -m failed on %s (exit %.0f): the GPU topology is not "
				    "judged", c->who, hp_json_num(t, "rc", 0));
		return;
	}
	if (!nv) {
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "GPUs connect over PCIe only",
			    "GPUs of %s connect over PCIe only (no NVLink in nvidia-smi topo -m)", c->who);
		return;
	}
	if (pcie > 0) {
		s = hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "GPU pairs on a PCIe path",
				"%.0f of %.0f GPU pairs of %s are on a PCIe path although its other pairs "
				"use NVLink: an NVLink or NVSwitch fault", pcie, pairs, c->who);
		cJSON_ArrayForEach(e, hp_json_arr(t, "pcie"))
			if (cJSON_IsString(e))
				hp_node_evidence(s, "%s", e->valuestring);
		return;
	}
	/* Pairs with fewer links than the others ("NV12" beside "NV18"). */
	cJSON_ArrayForEach(l, hp_json_get(t, "links"))
		if (l->string && !strncmp(l->string, "NV", 2) && atof(l->string + 2) > best) {
			best = atof(l->string + 2);
			hp_strlcpy(most, l->string, sizeof(most));
		}
	if (hp_json_num(t, "nvlink_min", best) < best) {
		s = hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "GPU pairs with fewer NVLinks",
				"GPU pairs of %s have fewer NVLinks (NV%.0f) than the others (%s): links "
				"are down", c->who, hp_json_num(t, "nvlink_min", 0), most);
		cJSON_ArrayForEach(l, hp_json_get(t, "links"))
			if (l->string && cJSON_IsNumber(l))
				hp_node_evidence(s, "%s: %.0f GPU pairs", l->string, l->valuedouble);
		return;
	}
	hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "All GPU pairs connected by NVLink",
		    "All %.0f GPU pairs of %s are connected by NVLink (%s)", pairs, c->who, most);
}

/* ---- nccl.p2p ---- */

static void judge_p2p(struct node_ctx *c)
{
	const cJSON *acs = hp_json_get(c->facts, "acs"), *io = hp_json_get(c->facts, "iommu"), *e;
	const char *dis;
	char where[64];
	struct node_say *s;
	int problem = 0;

	if (!has_gpu(c))
		return;
	if (acs && cJSON_IsTrue(cJSON_GetObjectItem(acs, "present"))) {
		if (cJSON_IsFalse(cJSON_GetObjectItem(acs, "readable"))) {
			hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "ACS not readable",
				    "PCIe ACS of %s not readable (lspci needs root)", c->who);
		} else if (hp_json_num(acs, "enabled", 0) > 0) {
			s = hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "ACS enabled on PCI bridges",
					"ACS is enabled on %.0f of %.0f PCI bridges of %s: GPU peer-to-peer "
					"traffic is forced through the root complex or blocked",
					hp_json_num(acs, "enabled", 0), hp_json_num(acs, "bridges", 0), c->who);
			cJSON_ArrayForEach(e, hp_json_arr(acs, "enabled_bridges"))
				if (cJSON_IsString(e))
					hp_node_evidence(s, "%s SrcValid+", e->valuestring);
			if (hp_json_len(acs, "enabled_bridges") == 1)
				hp_node_var(s, "DEVICE", hp_json_str(cJSON_GetArrayItem(
							 hp_json_get(acs, "enabled_bridges"), 0), ""));
			problem = 1;
		}
	}
	if (io && hp_json_num(io, "units", 0) > 0 && !cJSON_IsTrue(cJSON_GetObjectItem(io, "passthrough"))) {
		hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "IOMMU in translation mode",
			    "IOMMU in translation mode on %s (%.0f units, no iommu=pt): peer-to-peer may "
			    "be slow or refused", c->who, hp_json_num(io, "units", 0));
		problem = 1;
	}
	if ((dis = node_env(c, "NCCL_P2P_DISABLE", where, sizeof(where))) &&
	    (!strcmp(dis, "1") || !strcasecmp(dis, "true"))) {
		hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "NCCL_P2P_DISABLE=1 on the node",
			    "NCCL_P2P_DISABLE=1 in %s on %s: intra-node transfers go through host memory",
			    where, c->who);
		problem = 1;
	}
	if (!problem && acs && cJSON_IsTrue(cJSON_GetObjectItem(acs, "readable")))
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "No ACS or IOMMU in the GPU path",
			    "No ACS on the PCI bridges and no translating IOMMU on %s", c->who);
}

/* ---- nccl.peermem ---- */

static void judge_peermem(struct node_ctx *c)
{
	const cJSON *pm = hp_json_get(c->facts, "peermem");
	const char *kernel = hp_json_str(c->node_facts, "node.kernel");
	unsigned major = 0, minor = 0;

	if (!pm || !cJSON_IsTrue(cJSON_GetObjectItem(pm, "read")) || !has_gpu(c) || !has_efa(c))
		return;
	if (cJSON_IsTrue(cJSON_GetObjectItem(pm, "loaded"))) {
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "GPUDirect RDMA module loaded",
			    "%s is loaded on %s: EFA reads and writes GPU memory directly",
			    hp_check_str(pm, "module", "nvidia_peermem"), c->who);
		return;
	}
	/* The (major, minor) pair, compared as a pair: 6.1 is newer than 5.12. */
	if (!kernel || sscanf(kernel, "%u.%u", &major, &minor) != 2) {
		hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "nvidia_peermem not loaded, kernel unknown",
			    "nvidia_peermem is not loaded on %s and its kernel version is not known: "
			    "GPUDirect RDMA may be off", c->who);
		return;
	}
	if (major > 5 || (major == 5 && minor >= 12))
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "nvidia_peermem not loaded, DMA-BUF kernel",
			    "nvidia_peermem is not loaded on %s; kernel %u.%u supports DMA-BUF, which "
			    "recent drivers and aws-ofi-nccl use instead", c->who, major, minor);
	else
		hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "No GPUDirect RDMA",
			    "nvidia_peermem is not loaded on %s and kernel %u.%u has no DMA-BUF: EFA "
			    "copies GPU memory through host memory", c->who, major, minor);
}

/* ---- nccl.ofi-plugin ---- */

static void judge_ofi(struct node_ctx *c)
{
	const cJSON *o = hp_json_get(c->facts, "ofi_plugin"), *l;
	const char *plugin, *prov;
	char where[64], pwhere[64];
	struct node_say *s;

	if (!o || !has_efa(c))
		return;
	plugin = node_env(c, "NCCL_NET_PLUGIN", where, sizeof(where));
	prov = node_env(c, "FI_PROVIDER", pwhere, sizeof(pwhere));
	if (plugin && plugin[0] == '/') {
		int found = 0;

		cJSON_ArrayForEach(l, hp_json_arr(o, "libs"))
			found |= cJSON_IsString(l) && !strcmp(l->valuestring, plugin);
		if (!found) {
			hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "NCCL_NET_PLUGIN names a missing file",
				    "NCCL_NET_PLUGIN=%s in %s on %s names a file that is not there: NCCL "
				    "falls back to TCP", plugin, where, c->who);
			return;
		}
	}
	if (!cJSON_IsTrue(cJSON_GetObjectItem(o, "found"))) {
		hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "aws-ofi-nccl plugin not found",
			    "aws-ofi-nccl plugin (libnccl-net.so) not found on %s, an EFA node: NCCL "
			    "falls back to TCP%s%s%s", c->who, prov ? " (FI_PROVIDER=" : "",
			    prov ? prov : "", prov ? ")" : "");
		return;
	}
	if (prov && strcasecmp(prov, "efa")) {
		hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "FI_PROVIDER is not efa on the node",
			    "FI_PROVIDER=%s in %s on %s: the OFI plugin will not use EFA", prov, pwhere,
			    c->who);
		return;
	}
	s = hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "aws-ofi-nccl plugin present",
			"aws-ofi-nccl plugin present on %s", c->who);
	cJSON_ArrayForEach(l, hp_json_arr(o, "libs"))
		if (cJSON_IsString(l))
			hp_node_evidence(s, "%s", l->valuestring);
}

/* ---- nccl.efa-software ---- */

/* a < b for dotted versions ("1.28.0" < "1.29.1"). */
static int version_below(const char *a, const char *b)
{
	unsigned x[3] = { 0, 0, 0 }, y[3] = { 0, 0, 0 };
	int i;

	if (sscanf(a, "%u.%u.%u", &x[0], &x[1], &x[2]) < 2 || sscanf(b, "%u.%u.%u", &y[0], &y[1], &y[2]) < 2)
		return 0;
	for (i = 0; i < 3; i++)
		if (x[i] != y[i])
			return x[i] < y[i];
	return 0;
}

static void judge_efa_software(struct node_ctx *c)
{
	const cJSON *ins = hp_json_get(c->facts, "efa_installer"), *lf = hp_json_get(c->facts, "libfabric");
	const char *iv = hp_json_str(ins, "version"), *nv = hp_json_str(c->facts, "nccl_lib.version");

	if (!has_efa(c) || (!ins && !lf))
		return;
	if (ins && !cJSON_IsTrue(cJSON_GetObjectItem(ins, "found"))) {
		hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "EFA installer not found",
			    "EFA installer not found on %s, an EFA node (no "
			    "/opt/amazon/efa_installed_packages): libfabric and the EFA provider may "
			    "be missing", c->who);
		return;
	}
	if (lf && cJSON_IsTrue(cJSON_GetObjectItem(lf, "present")) &&
	    !cJSON_IsTrue(cJSON_GetObjectItem(lf, "amazon")))
		hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "libfabric is not the EFA installer's",
			    "libfabric %s on %s is not the EFA installer's build (no amzn in its "
			    "version): its EFA provider may be missing or old", hp_check_str(lf, "version",
			    "?"), c->who);
	else if (iv && nv && version_below(iv, "1.29.1") && !version_below(nv, "2.19.0"))
		hp_node_say(c, HP_TAG_WARN, HP_P2, "NC17", "EFA installer older than 1.29.1 with NCCL "
			    "2.19 or later", "EFA installer %s with NCCL %s on %s: installers before "
			    "1.29.1 have been reported to fail memory registration with NCCL 2.19 and "
			    "later", iv, nv, c->who);
	else
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "EFA software installed",
			    "EFA installer %s, libfabric %s on %s (TCP providers %.0f)", iv ? iv : "?",
			    hp_check_str(lf, "version", "?"), c->who, hp_json_num(c->facts,
											  "fi_tcp.providers", 0));
}

/* ---- nccl.nccl-lib ---- */

static void judge_nccl_lib(struct node_ctx *c)
{
	const cJSON *lib = hp_json_get(c->facts, "nccl_lib");
	const char *ver = hp_json_str(lib, "version"), *cuda = hp_json_str(lib, "cuda");
	const char *driver = hp_json_str(cJSON_GetArrayItem(hp_json_get(c->node_facts, "nvidia.gpus"), 0),
					 "driver");
	double need = 0, have;

	if (!lib || !has_gpu(c))
		return;
	if (!cJSON_IsTrue(cJSON_GetObjectItem(lib, "found"))) {
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "No NCCL library on the node",
			    "No libnccl on %s (containers bring their own)", c->who);
		return;
	}
	/* CUDA 12 builds need a 525 or later driver, CUDA 11 builds 450.80. */
	if (cuda && atoi(cuda) >= 12)
		need = 525;
	else if (cuda && atoi(cuda) == 11)
		need = 450.80;
	have = driver ? atof(driver) : 0;
	if (need && have > 0 && have < need)
		hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "NVIDIA driver too old for the NCCL build",
			    "NCCL %s on %s is built for CUDA %s, which needs driver %.2f or later; the "
			    "driver is %s", ver ? ver : "?", c->who, cuda, need, driver);
	else
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "NCCL library fits the driver",
			    "NCCL %s (CUDA %s) on %s, driver %s", ver ? ver : "of unknown version",
			    cuda ? cuda : "?", c->who, driver ? driver : "unknown");
}

/* ---- nccl.mtu ---- */

static void judge_mtu(struct node_ctx *c)
{
	const cJSON *i;
	struct hp_buf low = HP_BUF_INIT(HP_MAX_LINE);
	int n = 0, up = 0;

	cJSON_ArrayForEach(i, hp_json_arr(c->facts, "netif.interfaces")) {
		const char *st = hp_json_str(i, "state");

		if (cJSON_IsTrue(cJSON_GetObjectItem(i, "virtual")) || !st || strcmp(st, "up"))
			continue;
		up++;
		if (hp_json_num(i, "mtu", 9001) < 9001 && n++ < 8)
			hp_buf_printf(&low, "%s%s %.0f", low.len ? ", " : "", hp_check_str(i, "name", "?"),
				      hp_json_num(i, "mtu", 0));
	}
	if (n)
		hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "Interfaces below MTU 9001",
			    "Interfaces of %s below MTU 9001 (the VPC's jumbo frames): %s", c->who, low.buf);
	else if (up)
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "Interfaces at MTU 9001",
			    "Every interface of %s that is up has MTU 9001 or more", c->who);
	hp_buf_release(&low);
}

/* ---- nccl.limits ---- */

/* A limit in bytes: its number, or -1 for "unlimited", or -2 when unknown. */
static double limit_of(const cJSON *o, const char *key)
{
	const cJSON *v = hp_json_get(o, key);

	if (cJSON_IsString(v) && !strcmp(v->valuestring, "unlimited"))
		return -1;
	return cJSON_IsNumber(v) ? v->valuedouble : -2;
}

static void judge_limits(struct node_ctx *c)
{
	const cJSON *p, *src = NULL, *e;
	double mem, stack;
	char who[128], pid[32];
	struct node_say *s = NULL;

	cJSON_ArrayForEach(p, hp_json_arr(c->facts, "procs.list"))
		if (!src && cJSON_IsTrue(cJSON_GetObjectItem(p, "training")) &&
		    limit_of(p, "memlock_soft") != -2)
			src = p;
	if (src) {
		snprintf(who, sizeof(who), "training process %.0f", hp_json_num(src, "pid", 0));
	} else {
		src = hp_json_get(c->facts, "limits");
		hp_strlcpy(who, "the probe's shell (no training process runs)", sizeof(who));
	}
	mem = limit_of(src, "memlock_soft");
	stack = limit_of(src, "stack_soft");
	if (mem == -2)
		return;
	pid[0] = '\0';
	if (!strncmp(who, "training", 8))
		snprintf(pid, sizeof(pid), "%.0f", hp_json_num(src, "pid", 0));
	if (mem >= 0 && mem <= 65536) {
		s = hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "memlock too small for RDMA",
			    "memlock is %.0f KiB for %s on %s: EFA memory registration fails (ibv_reg_mr)",
			    mem / 1024, who, c->who);
	} else if (mem >= 0 && mem < 8 * GIB && has_efa(c)) {
		s = hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "memlock below 8 GiB",
			    "memlock is %.0f MiB for %s on %s: use 8388608 KiB (8 GiB) or more",
			    mem / 1048576, who, c->who);
	} else if (mem == -1 && stack == -1) {
		s = hp_node_say(c, HP_TAG_WARN, HP_P2, "NC17.2", "memlock and stack both unlimited",
			    "memlock and stack are both unlimited for %s on %s: large jobs have hung in "
			    "NCCL's topology search; use memlock 8388608 and stack 8192 KiB", who, c->who);
	} else if (stack >= 0 && stack < 4096.0 * 1024) {
		s = hp_node_say(c, HP_TAG_FAIL, HP_P1, "NC17.2", "stack too small for NCCL",
			    "stack is %.0f KiB for %s on %s: NCCL's threads need 4096 KiB or more",
			    stack / 1024, who, c->who);
	} else {
		char m[32], st[32];


		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "memlock and stack fit NCCL",
			    "memlock %s, stack %s for %s on %s",
			    mem == -1 ? "unlimited" : hp_nccl_check_kib(mem / 1024, m),
			    stack == -1 ? "unlimited" : stack >= 0 ? hp_nccl_check_kib(stack / 1024, st) : "unknown",
			    who, c->who);
	}
	if (s && *pid)
		hp_node_var(s, "PID", pid);
	/* The defaults of new sessions, when no process shows what a job really gets. */
	if (strncmp(who, "training", 8))
		cJSON_ArrayForEach(e, hp_json_arr(c->facts, "limits_conf.entries")) {
			const cJSON *v = hp_json_get(e, "value");

			if (!strcmp(hp_check_str(e, "item", ""), "memlock") && cJSON_IsNumber(v) &&
			    v->valuedouble < 8388608 && has_efa(c)) {
				hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "limits.conf memlock below 8 GiB",
					    "%s sets %s memlock %.0f KiB for %s on %s: use 8388608 or more",
					    hp_check_str(e, "file", "limits.conf"), hp_check_str(e, "type", ""),
					    v->valuedouble, hp_check_str(e, "domain", "*"), c->who);
				break;
			}
		}
}

/* ---- nccl.hugepages ---- */

static void judge_hugepages(struct node_ctx *c)
{
	const cJSON *sz;
	double total = 0, free_ = 0;

	if (!hp_json_get(c->facts, "hugepages") || !has_efa(c))
		return;
	cJSON_ArrayForEach(sz, hp_json_get(c->facts, "hugepages.sizes")) {
		total += hp_json_num(sz, "total", 0);
		free_ += hp_json_num(sz, "free", 0);
	}
	if (total > 0 && free_ == 0)
		hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "All huge pages in use",
			    "All %.0f huge pages of %s are in use: libfabric falls back to regular pages",
			    total, c->who);
	else if (total > 0)
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "Huge pages available",
			    "%.0f of %.0f huge pages free on %s", free_, total, c->who);
	else
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "No huge pages",
			    "No huge pages reserved on %s (libfabric uses regular pages)", c->who);
}

/* ---- nccl.shm-stale ---- */

static void judge_shm_stale(struct node_ctx *c)
{
	const cJSON *lg = hp_json_get(c->facts, "logind"), *shm = hp_json_get(c->facts, "shm"), *e;
	double seg = hp_json_num(shm, "nccl_segments", 0), training = hp_json_num(c->facts, "procs.training", -1);
	int slurm = !strcmp(c->orchestrator, "Slurm");
	struct node_say *s;

	if (lg && cJSON_IsTrue(cJSON_GetObjectItem(lg, "remove_ipc")))
		hp_node_say(c, HP_TAG_WARN, slurm ? HP_P1 : HP_P2, "NC15.2", "RemoveIPC=yes",
			    "RemoveIPC=yes on %s (%s): systemd-logind removes a user's shared memory "
			    "when the session ends%s", c->who, hp_check_str(lg, "source", "default"),
			    slurm ? ", under running Slurm jobs" : "");
	if (!shm || !cJSON_IsTrue(cJSON_GetObjectItem(shm, "read")))
		return;
	if (seg > 0 && training == 0) {
		s = hp_node_say(c, HP_TAG_WARN, HP_P2, "NC15.1", "Stale NCCL shared memory segments",
				"%.0f stale /dev/shm/nccl-* segments on %s, where no training process runs",
				seg, c->who);
		cJSON_ArrayForEach(e, hp_json_arr(shm, "names"))
			if (cJSON_IsString(e))
				hp_node_evidence(s, "/dev/shm/%s", e->valuestring);
	} else if (seg > 0) {
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "NCCL segments of a running job",
			    "%.0f /dev/shm/nccl-* segments on %s belong to the training process running "
			    "there", seg, c->who);
	} else if (!lg || !cJSON_IsTrue(cJSON_GetObjectItem(lg, "remove_ipc"))) {
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "No stale shared memory",
			    "No stale /dev/shm/nccl-* segments and RemoveIPC=no on %s", c->who);
	}
}

/* ---- nccl.numa ---- */

static void judge_numa(struct node_ctx *c)
{
	const cJSON *n = hp_json_get(c->facts, "numa");

	if (!n || !has_gpu(c))
		return;
	if (hp_json_num(n, "nodes", 0) > 0)
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "NUMA nodes visible",
			    "%.0f NUMA nodes visible on %s", hp_json_num(n, "nodes", 0), c->who);
	else
		hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "No NUMA nodes visible",
			    "No NUMA node visible on %s: NCCL's cuMem host allocations fail; set "
			    "NCCL_CUMEM_HOST_ENABLE=0", c->who);
}

/* ---- nccl.firewall ---- */

static void judge_firewall(struct node_ctx *c)
{
	const cJSON *fw = hp_json_get(c->facts, "firewall"), *e, *pol;
	struct node_say *s;

	if (!fw || !cJSON_IsTrue(cJSON_GetObjectItem(fw, "present")))
		return;
	if (cJSON_IsFalse(cJSON_GetObjectItem(fw, "readable"))) {
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "Firewall rules not readable",
			    "Host firewall rules of %s not readable (%s needs root)", c->who,
			    hp_check_str(fw, "tool", "iptables"));
		return;
	}
	if (hp_json_num(fw, "blocking", 0) > 0 || hp_json_num(fw, "blocking_policies", 0) > 0) {
		s = hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "Host firewall drops or rejects traffic",
				"%.0f DROP/REJECT rules and %.0f DROP policies outside kube-proxy's and the "
				"CNI's chains on %s: they may block NCCL's ports",
				hp_json_num(fw, "blocking", 0), hp_json_num(fw, "blocking_policies", 0),
				c->who);
		cJSON_ArrayForEach(pol, hp_json_get(fw, "policies"))
			if (pol->string && cJSON_IsString(pol) && !strcmp(pol->valuestring, "DROP"))
				hp_node_evidence(s, "%s policy DROP", pol->string);
		cJSON_ArrayForEach(e, hp_json_arr(fw, "blocking_rules"))
			if (cJSON_IsString(e))
				hp_node_evidence(s, "%s", e->valuestring);
		return;
	}
	hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "No blocking host firewall rule",
		    "No DROP/REJECT rule outside kube-proxy's and the CNI's chains on %s (%.0f rules, "
		    "%.0f of them the CNI's)", c->who, hp_json_num(fw, "rules", 0),
		    hp_json_num(fw, "cni_blocking", 0));
}

/* ---- nccl.node-versions (across the nodes) ---- */

struct distinct {
	char v[8][64];
	size_t count[8];
	char first_node[8][32];
	size_t n;
};

static void distinct_add(struct distinct *d, const char *v, const char *node)
{
	size_t i;

	if (!v || !*v)
		return;
	for (i = 0; i < d->n; i++)
		if (!strcmp(d->v[i], v)) {
			d->count[i]++;
			return;
		}
	if (d->n < HP_ARRAY_LEN(d->v)) {
		hp_strlcpy(d->v[d->n], v, sizeof(d->v[0]));
		hp_strlcpy(d->first_node[d->n], node, sizeof(d->first_node[0]));
		d->count[d->n++] = 1;
	}
}

static void report_distinct(struct hp_emit *em, const struct distinct *d, const char *what,
			    size_t nodes, int *problems)
{
	struct hp_finding *f;
	size_t i;
	char line[200];

	if (d->n < 2)
		return;
	(*problems)++;
	f = hp_emit(em, HP_TAG_WARN, "%s versions differ across the %zu probed nodes: %zu versions",
		    what, nodes, d->n);
	hp_finding_class(f, what);   /* one key per kind of version */
	for (i = 0; i < d->n; i++) {
		snprintf(line, sizeof(line), "%s on %zu node%s (e.g. %s)", d->v[i], d->count[i],
			 d->count[i] == 1 ? "" : "s", d->first_node[i]);
		hp_finding_evidence(f, line);
	}
}

static void run_node_versions(const struct hp_snapshot *snap, struct hp_emit *em)
{
	struct distinct nccl = { .n = 0 }, lf = { .n = 0 }, efa = { .n = 0 }, drv = { .n = 0 };
	struct hp_probe_iter it;
	const cJSON *p;
	size_t nodes = 0;
	int problems = 0;

	/* The NCCL sweep's entries and each node's own probe, from the document or the store. */
	for (p = hp_probes_first(snap, "nccl_probes", &it); p; p = hp_probes_next(&it)) {
		const char *st = hp_json_str(p, "state");
		struct hp_probe_iter nit;
		const cJSON *np;
		cJSON *f, *nf = NULL;

		if (!p->string || !st || strcmp(st, "probed"))
			continue;
		nodes++;
		f = hp_probes_facts(&it);
		distinct_add(&nccl, hp_json_str(f, "nccl_lib.version"), p->string);
		distinct_add(&lf, hp_json_str(f, "libfabric.version"), p->string);
		distinct_add(&efa, hp_json_str(f, "efa_installer.version"), p->string);
		np = hp_probes_find(snap, "probes", p->string, &nit);
		if (np && hp_json_str(np, "state") && !strcmp(hp_json_str(np, "state"), "probed")) {
			nf = hp_probes_facts(&nit);
			distinct_add(&drv, hp_json_str(cJSON_GetArrayItem(hp_json_get(nf, "nvidia.gpus"), 0),
						       "driver"), p->string);
		}
		hp_probes_end(&nit);
		cJSON_Delete(f);
		cJSON_Delete(nf);
	}
	if (nodes < 2)
		return;
	report_distinct(em, &nccl, "NCCL library", nodes, &problems);
	report_distinct(em, &lf, "libfabric", nodes, &problems);
	report_distinct(em, &efa, "EFA installer", nodes, &problems);
	report_distinct(em, &drv, "NVIDIA driver", nodes, &problems);
	if (!problems && (nccl.n || lf.n || drv.n))
		hp_emit(em, HP_TAG_PASS, "The %zu probed nodes run one NCCL library (%s), libfabric (%s) "
			"and driver (%s)", nodes, nccl.n ? nccl.v[0] : "none found",
			lf.n ? lf.v[0] : "unknown", drv.n ? drv.v[0] : "unknown");
}

HP_CHECK(nccl_node_versions, HP_GROUP_NCCL_ENV, 40,
	 .id = "nccl.node-versions", .doc = HP_REFDOC_NCCL, .section = "NC10", .prio = HP_P1,
	 .run = run_node_versions);
HP_CHECK(nccl_node_probe, HP_GROUP_NCCL_NODE, 10,
	 .id = "nccl.node-probe", .doc = HP_REFDOC_NCCL, .section = "NC28", .prio = HP_P2,
	 .each_node = judge_probe, .source = HP_SOURCE_NCCL_PROBE);
HP_CHECK(nccl_topology, HP_GROUP_NCCL_NODE, 20,
	 .id = "nccl.topology", .doc = HP_REFDOC_NCCL, .section = "NC14.1", .prio = HP_P1,
	 .each_node = judge_topology, .source = HP_SOURCE_NCCL_PROBE);
HP_CHECK(nccl_p2p, HP_GROUP_NCCL_NODE, 30,
	 .id = "nccl.p2p", .doc = HP_REFDOC_NCCL, .section = "NC14", .prio = HP_P1,
	 .each_node = judge_p2p, .source = HP_SOURCE_NCCL_PROBE);
HP_CHECK(nccl_peermem, HP_GROUP_NCCL_NODE, 40,
	 .id = "nccl.peermem", .doc = HP_REFDOC_NCCL, .section = "NC6.2", .prio = HP_P1,
	 .each_node = judge_peermem, .source = HP_SOURCE_NCCL_PROBE);
HP_CHECK(nccl_ofi_plugin, HP_GROUP_NCCL_NODE, 50,
	 .id = "nccl.ofi-plugin", .doc = HP_REFDOC_NCCL, .section = "NC13", .prio = HP_P1,
	 .each_node = judge_ofi, .source = HP_SOURCE_NCCL_PROBE);
HP_CHECK(nccl_efa_software, HP_GROUP_NCCL_NODE, 60,
	 .id = "nccl.efa-software", .doc = HP_REFDOC_NCCL, .section = "NC6.2", .prio = HP_P1,
	 .each_node = judge_efa_software, .source = HP_SOURCE_NCCL_PROBE);
HP_CHECK(nccl_nccl_lib, HP_GROUP_NCCL_NODE, 70,
	 .id = "nccl.nccl-lib", .doc = HP_REFDOC_NCCL, .section = "NC10", .prio = HP_P1,
	 .each_node = judge_nccl_lib, .source = HP_SOURCE_NCCL_PROBE);
HP_CHECK(nccl_mtu, HP_GROUP_NCCL_NODE, 80,
	 .id = "nccl.mtu", .doc = HP_REFDOC_NCCL, .section = "NC3", .prio = HP_P2,
	 .each_node = judge_mtu, .source = HP_SOURCE_NCCL_PROBE);
HP_CHECK(nccl_limits, HP_GROUP_NCCL_NODE, 90,
	 .id = "nccl.limits", .doc = HP_REFDOC_NCCL, .section = "NC17", .prio = HP_P1,
	 .each_node = judge_limits, .source = HP_SOURCE_NCCL_PROBE);
HP_CHECK(nccl_hugepages, HP_GROUP_NCCL_NODE, 100,
	 .id = "nccl.hugepages", .doc = HP_REFDOC_NCCL, .section = "NC6.2", .prio = HP_P2,
	 .each_node = judge_hugepages, .source = HP_SOURCE_NCCL_PROBE);
HP_CHECK(nccl_shm_stale, HP_GROUP_NCCL_NODE, 110,
	 .id = "nccl.shm-stale", .doc = HP_REFDOC_NCCL, .section = "NC15", .prio = HP_P2,
	 .each_node = judge_shm_stale, .source = HP_SOURCE_NCCL_PROBE);
HP_CHECK(nccl_numa, HP_GROUP_NCCL_NODE, 120,
	 .id = "nccl.numa", .doc = HP_REFDOC_NCCL, .section = "NC24", .prio = HP_P2,
	 .each_node = judge_numa, .source = HP_SOURCE_NCCL_PROBE);
HP_CHECK(nccl_firewall, HP_GROUP_NCCL_NODE, 130,
	 .id = "nccl.firewall", .doc = HP_REFDOC_NCCL, .section = "NC16", .prio = HP_P1,
	 .each_node = judge_firewall, .source = HP_SOURCE_NCCL_PROBE);
