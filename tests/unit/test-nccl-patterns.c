/*
 * The NCCL log error-pattern table and its matcher (src/core/nccl-patterns.c)
 * on published NCCL, aws-ofi-nccl, libfabric and PyTorch log lines
 * (tests/data/nccl/, its README names the source of each): every pattern
 * of the original tool's table is there with its code, every pattern is
 * matched by its own sample line, healthy logs match nothing, the case
 * and context rules hold, and a scan keeps each (pattern, source) once
 * with bounded, cleaned evidence.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/json.h"
#include "hp/nccl-facts.h"
#include "hp/refdoc.h"
#include "hp/text.h"
#include "hp/util.h"
#include "t.h"

static char *slurp(const char *name, size_t *len)
{
	return t_data("nccl", name, len);
}

static int has_code(const char *line, const char *code)
{
	size_t idx[64], n = hp_nccl_match(line, strlen(line), idx, 64), i;

	for (i = 0; i < n && i < 64; i++)
		if (!strcmp(hp_nccl_patterns[idx[i]].code, code))
			return 1;
	return 0;
}

static size_t nmatch(const char *line)
{
	size_t idx[64];

	return hp_nccl_match(line, strlen(line), idx, 64);
}

/* The original tool's 38 patterns with their codes (seed-nccl.md § 3.1). */
static const char *const original[][2] = {
	{ "Timeout waiting for", "TIMEOUT_RENDEZVOUS" }, { "Connection refused", "CONN_REFUSED" },
	{ "Address already in use", "PORT_CONFLICT" }, { "NCCL WARN Connect to", "CONNECT_FAIL" },
	{ "network is unreachable", "NET_UNREACHABLE" }, { "Error in Store", "STORE_ERR" },
	{ "DistStoreError", "STORE_ERR" }, { "RendezvousConnectionError", "RDZV_CONN_ERR" },
	{ "RendezvousTimeout", "RDZV_TIMEOUT" }, { "Name or service not known", "DNS_FAIL" },
	{ "getaddrinfo failed", "DNS_FAIL" }, { "Watchdog timeout", "WATCHDOG_TIMEOUT" },
	{ "unhandled system error", "SYSTEM_ERROR" }, { "unhandled cuda error", "CUDA_ERROR" },
	{ "peer access is not supported", "P2P_FAIL" }, { "NCCL WARN Cuda failure", "CUDA_ERROR" },
	{ "fi_getinfo failed", "EFA_INIT_FAIL" }, { "NCCL_OFI_RDMA", "OFI_ERROR" },
	{ "Call to ibv_reg_mr failed", "RDMA_REG_FAIL" }, { "NET/OFI Using TCP", "EFA_TCP_FALLBACK" },
	{ "Failed to load NCCL", "NCCL_LOAD_FAIL" }, { "libnccl-net.so", "OFI_LOAD_FAIL" },
	{ "OOMKilled", "OOM_KILL" }, { "CUDA out of memory", "CUDA_OOM" },
	{ "cudaMalloc failed", "CUDA_OOM" }, { "failed to extend /dev/shm", "SHM_FULL" },
	{ "Bus error", "SHM_FULL" }, { "NCCL function not found", "NCCL_VERSION_MISMATCH" },
	{ "Incompatible NCCL version", "NCCL_VERSION_MISMATCH" },
	{ "Could not find interface", "IFACE_NOT_FOUND" },
	{ "world_size mismatch", "WORLD_SIZE_MISMATCH" },
	{ "doesn't have NCCL built in", "NCCL_NOT_BUILT" },
	{ "CUDA_VISIBLE_DEVICES", "CUDA_VIS_DEV" }, { "unlink shared memory", "SHM_STALE" },
	{ "Call to ncclCommAbort", "NCCL_COMM_ABORT" }, { "MNNVL topology", "MNNVL_TOPO_FAIL" },
	{ "ENOMEM", "ENOMEM" }, { "invalid alignment", "CUDA_ALIGN_ERR" },
};

static void t_table_holds_the_original_patterns(void)
{
	size_t i, j, found;

	T_EQ(HP_ARRAY_LEN(original), 38);
	for (i = 0; i < HP_ARRAY_LEN(original); i++) {
		found = 0;
		for (j = 0; j < hp_nccl_npatterns; j++) {
			if (strcmp(hp_nccl_patterns[j].text, original[i][0]))
				continue;
			found++;
			T_STREQ(hp_nccl_patterns[j].code, original[i][1]);
			if (hp_nccl_patterns[j].flags & HP_NCCL_ADDED)
				T_FAILF("original pattern '%s' is marked as added", original[i][0]);
		}
		if (found != 1)
			T_FAILF("original pattern '%s' is in the table %zu times", original[i][0], found);
	}
	/* Everything else is marked as added. */
	for (j = 0; j < hp_nccl_npatterns; j++) {
		found = 0;
		for (i = 0; i < HP_ARRAY_LEN(original); i++)
			found |= !strcmp(hp_nccl_patterns[j].text, original[i][0]);
		if (!found && !(hp_nccl_patterns[j].flags & HP_NCCL_ADDED))
			T_FAILF("pattern '%s' is neither original nor marked added",
				hp_nccl_patterns[j].text);
	}
	T_EQ(hp_nccl_nmarkers, 5);
	T_STREQ(hp_nccl_markers[0].text, "BASELINE TEST PASSED");
	T_STREQ(hp_nccl_markers[1].text, "AllReduce SUCCESS");
	T_STREQ(hp_nccl_markers[2].text, "Training complete");
}

static void t_table_well_formed(void)
{
	size_t i, j;

	T_ASSERT(hp_nccl_npatterns >= 38);
	for (i = 0; i < hp_nccl_npatterns; i++) {
		const struct hp_nccl_pattern *p = &hp_nccl_patterns[i];

		if (!*p->text || !*p->code || !*p->meaning || !*p->group || p->prio < 0 ||
		    p->prio > 2)
			T_FAILF("pattern %zu ('%s') is incomplete", i, p->text);
		if (!hp_refdoc_title(HP_REFDOC_NCCL, p->section))
			T_FAILF("pattern '%s' points to unknown section '%s'", p->text, p->section);
		if (strchr(p->text, '"') || strlen(p->text) >= 120)
			T_FAILF("pattern '%s' cannot be a CloudWatch term", p->text);
		for (j = 0; j < i; j++)
			if (!strcmp(hp_nccl_patterns[j].text, p->text))
				T_FAILF("pattern '%s' listed twice", p->text);
		/* Patterns sharing a code share its section and priority. */
		T_ASSERT(hp_nccl_pattern_by_code(p->code) != NULL);
		if (strcmp(hp_nccl_pattern_by_code(p->code)->section, p->section) ||
		    hp_nccl_pattern_by_code(p->code)->prio != p->prio)
			T_FAILF("code %s has patterns with different sections or priorities", p->code);
	}
	T_ASSERT(hp_nccl_pattern_by_code("NO_SUCH_CODE") == NULL);
	T_ASSERT(hp_nccl_pattern_by_code(NULL) == NULL);
}

/* Every sample gives its code, and every pattern is matched by a sample that names its code. */
static void t_every_pattern_matched_by_its_sample(void)
{
	char *text = slurp("log-samples.txt", NULL), *save = NULL, *row;
	unsigned char *seen = xcalloc(hp_nccl_npatterns, 1);
	size_t rows = 0, published = 0, i;

	for (row = strtok_r(text, "\n", &save); row; row = strtok_r(NULL, "\n", &save)) {
		char *code = row, *src, *line;
		size_t idx[64], n;

		if (*row == '#' || !*row)
			continue;
		src = strchr(code, '\t');
		T_ASSERT(src != NULL);
		*src++ = '\0';
		line = strchr(src, '\t');
		T_ASSERT(line != NULL);
		*line++ = '\0';
		rows++;
		published += src[0] == 'P';
		if (!has_code(line, code))
			T_FAILF("sample for %s does not match it: %s", code, line);
		n = hp_nccl_match(line, strlen(line), idx, 64);
		for (i = 0; i < n && i < 64; i++)
			if (!strcmp(hp_nccl_patterns[idx[i]].code, code))
				seen[idx[i]] = 1;
	}
	for (i = 0; i < hp_nccl_npatterns; i++)
		if (!seen[i])
			T_FAILF("pattern '%s' (%s) has no sample line of its own",
				hp_nccl_patterns[i].text, hp_nccl_patterns[i].code);
	T_ASSERT(rows >= 40);
	T_ASSERT(published >= 20);
	free(seen);
	free(text);
}

static const cJSON *hit(const cJSON *r, const char *code, const char *source)
{
	const cJSON *h;

	cJSON_ArrayForEach(h, hp_json_arr(r, "hits")) {
		const char *c = hp_json_str(h, "code"), *s = hp_json_str(h, "source");

		if (c && !strcmp(c, code) && (!source || (s && !strcmp(s, source))))
			return h;
	}
	return NULL;
}

static int marker(const cJSON *r, const char *name)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, hp_json_arr(r, "markers"))
		if (!strcmp(hp_json_str(m, "marker"), name))
			return 1;
	return 0;
}

static void t_healthy_log_matches_nothing(void)
{
	size_t len;
	char *text = slurp("log-healthy-efa.txt", &len);
	struct hp_nccl_scan *s = hp_nccl_scan_new(NULL);
	cJSON *r;
	char *dump;

	hp_nccl_scan_text(s, "ml/train-worker-0/pytorch", text, len);
	r = hp_nccl_scan_json(s);
	dump = cJSON_PrintUnformatted(r);
	if (hp_json_len(r, "hits") != 0)
		T_FAILF("a healthy log gave hits: %s", dump);
	T_EQ(hp_json_num(r, "lines", 0), 29);
	T_ASSERT(marker(r, "ALLREDUCE_SUCCESS"));
	T_ASSERT(marker(r, "TRAINING_COMPLETE"));
	T_ASSERT(marker(r, "NCCL_INIT_COMPLETE"));
	T_ASSERT(marker(r, "OFI_EFA_SELECTED"));
	T_ASSERT(!marker(r, "BASELINE_PASSED"));
	free(dump);
	cJSON_Delete(r);
	hp_nccl_scan_free(s);
	free(text);
}

static void t_tcp_fallback_log(void)
{
	size_t len;
	char *text = slurp("log-tcp-fallback.txt", &len);
	struct hp_nccl_scan *s = hp_nccl_scan_new(NULL);
	const cJSON *h, *ev;
	cJSON *r;

	hp_nccl_scan_text(s, "ml/llm-0/main", text, len);
	r = hp_nccl_scan_json(s);
	h = hit(r, "EFA_TCP_FALLBACK", "ml/llm-0/main");
	T_ASSERT(h != NULL);
	T_EQ(hp_json_num(h, "count", 0), 4);
	T_EQ(hp_json_num(h, "last_line", 0), 16);
	T_STREQ(hp_json_str(h, "section"), "NC13");
	T_STREQ(hp_json_str(h, "priority"), "P1");
	ev = hp_json_get(h, "evidence");
	T_EQ(cJSON_GetArraySize(ev), 3);
	T_CONTAINS(cJSON_GetArrayItem(ev, 2)->valuestring, "[0] NCCL INFO Using network Socket");
	T_CONTAINS(cJSON_GetArrayItem(ev, 0)->valuestring, ":113 [2] NCCL INFO Using network Socket");
	h = hit(r, "OFI_LOAD_FAIL", NULL);
	T_ASSERT(h != NULL);
	T_EQ(hp_json_num(h, "count", 0), 1);
	/* "No plugin found (libnccl-net.so)" says nothing failed: not counted. */
	T_EQ(hp_json_num(h, "last_line", 0), 3);
	/* Two fallback wordings: "Using network Socket" and "NET/Socket : Using [0]eth0". */
	T_EQ(hp_json_len(r, "hits"), 3);
	cJSON_Delete(r);
	hp_nccl_scan_free(s);
	free(text);
}


/* Real healthy logs (README: the OFI plugin's start on EFA, nccl-tests, c10d's benign warnings). */
static void t_healthy_logs_stay_quiet(void)
{
	static const char *const files[] = { "log-healthy-efa.txt", "log-healthy-nccl-tests.txt",
					     "log-healthy-ofi-init.txt", "log-healthy-c10d.txt" };
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(files); i++) {
		size_t len;
		char *text = slurp(files[i], &len), *dump;
		struct hp_nccl_scan *s = hp_nccl_scan_new(NULL);
		cJSON *r;

		hp_nccl_scan_text(s, "ml/train-worker-0/pytorch", text, len);
		r = hp_nccl_scan_json(s);
		dump = cJSON_PrintUnformatted(r);
		if (hp_json_len(r, "hits") != 0)
			T_FAILF("healthy log %s gave hits: %s", files[i], dump);
		T_ASSERT(hp_json_num(r, "lines", 0) >= 8);
		free(dump);
		cJSON_Delete(r);
		hp_nccl_scan_free(s);
		free(text);
	}
	/* c10d's IPv6 lookup with glibc's EAI_AGAIN (gai error -3) is no DNS failure ... */
	T_EQ(nmatch("[W socket.cpp:601] [c10d] The IPv6 network addresses of (localhost, 51595) "
		    "cannot be retrieved (gai error: -3 - Temporary failure in name resolution)."), 0);
	/* ... but a lookup that stopped the job is. */
	T_ASSERT(has_code("socket.gaierror: [Errno -3] Temporary failure in name resolution",
			  "DNS_FAIL"));
}

/* The scan of lines as one source's log; the hit of code, or NULL. */
static cJSON *scan_lines(const char *const *lines, size_t n)
{
	struct hp_nccl_scan *s = hp_nccl_scan_new(NULL);
	cJSON *r;
	size_t i;

	for (i = 0; i < n; i++)
		hp_nccl_scan_line(s, "ml/w-2/pytorch", lines[i], strlen(lines[i]));
	r = hp_nccl_scan_json(s);
	hp_nccl_scan_free(s);
	return r;
}

static const char *cause_of(const cJSON *r, const char *code)
{
	const cJSON *h = hit(r, code, NULL);

	return h ? hp_json_str(h, "cause") : "(no hit)";
}

/* A wrapper takes the cause of the specific line before it (or just after it), in real logs. */
static void t_wrapper_rule(void)
{
	/* P35: PyTorch prints NCCL's last error after its message. */
	static const char *const after[] = {
		"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
		"ProcessGroupNCCL.cpp:1333, unhandled system error (run with NCCL_DEBUG=INFO for "
		"details), NCCL version 2.18.6",
		("ncclSystemError: System call (e.g. socket, malloc) or external library call failed "
		 "or device error. "),
		"Last error:",
		"socketStartConnect: Connect to 192.168.19.14<52822> failed : No route to host",
	};
	/*
	 * P31's lines (the proxy line's cut end completed in NCCL's wording: marked edit),
	 * then P6's PyTorch line: assembled from two published logs.
	 */
	static const char *const before[] = {
		"ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'",
		"ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc "
		"6291456 bytes",
		"ng30903:3063028:3066152 [3] NCCL INFO transport/p2p.cc:204 -> 1",
		"ng30903:3063028:3066152 [3] proxy.cc:1519 NCCL WARN [Proxy Service 3] Failed to "
		"execute operation Setup from rank 3, retcode 1",
		"RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, "
		"unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3",
	};
	/* P24 then P41's wording: the plugin's failure explains the internal error. */
	static const char *const ofi[] = {
		"algo-1:17778:17848 [5] nccl_ofi_ofiutils_init_connection:274 NCCL WARN NET/OFI "
		"Couldn't open CQ. RC: -22, ERROR: Invalid argument",
		"RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1646755953518/work/torch/"
		"csrc/distributed/c10d/ProcessGroupNCCL.cpp:1102, internal error, NCCL version 21.0.3",
	};
	/* P42 alone: NCCL's last error names no pattern, so the wrapper stands alone. */
	static const char *const alone[] = {
		"torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/"
		"c10d/NCCLUtils.hpp:268, remote process exited or there was a network error, NCCL "
		"version 2.21.5",
		("ncclRemoteError: A call failed possibly due to a network error or a remote process "
		 "exiting prematurely."),
		"Last error:",
		"socketProgressOpt: Call to recv from 172....<33759> failed : Connection reset by peer",
	};
	cJSON *r;
	const cJSON *h;

	r = scan_lines(after, HP_ARRAY_LEN(after));
	T_STREQ(cause_of(r, "SYSTEM_ERROR"), "NO_ROUTE");
	T_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(hit(r, "SYSTEM_ERROR", NULL), "wrapper")));
	T_ASSERT(hit(r, "CONNECT_FAIL", NULL) == NULL);
	T_STREQ(hp_json_str(hit(r, "NO_ROUTE", NULL), "section"), "NC3");
	cJSON_Delete(r);
	r = scan_lines(before, HP_ARRAY_LEN(before));
	T_STREQ(cause_of(r, "CUDA_ERROR"), "CUDA_OOM");
	/* 'out of memory' is GPU memory, not a CUDA fault of the node. */
	h = hit(r, "CUDA_OOM", NULL);
	T_ASSERT(h != NULL);
	T_STREQ(hp_json_str(h, "pattern"), "Cuda failure 'out of memory'");
	T_STREQ(hp_json_str(h, "section"), "NC11");
	/* The CUDA_ERROR hit is the wrapper's alone: NCCL's 'out of memory' warning is not one. */
	T_EQ(hp_json_num(hit(r, "CUDA_ERROR", NULL), "count", 0), 1);
	cJSON_Delete(r);
	r = scan_lines(ofi, HP_ARRAY_LEN(ofi));
	T_STREQ(cause_of(r, "INTERNAL_ERROR"), "OFI_INIT_FAIL");
	T_STREQ(hp_json_str(hit(r, "OFI_INIT_FAIL", NULL), "section"), "NC6");
	cJSON_Delete(r);
	r = scan_lines(alone, HP_ARRAY_LEN(alone));
	h = hit(r, "REMOTE_ERROR", NULL);
	T_ASSERT(h != NULL);
	T_ASSERT(hp_json_get(h, "cause") == NULL);
	T_STREQ(hp_json_str(h, "priority"), "P1");
	cJSON_Delete(r);
	/* A cause too far before the wrapper is not its cause. */
	{
		const char *far[HP_NCCL_WRAP_BEFORE + 2];
		size_t i;

		far[0] = ofi[0];
		for (i = 1; i <= HP_NCCL_WRAP_BEFORE; i++)
			far[i] = "step 1 loss 2.0";
		far[HP_NCCL_WRAP_BEFORE + 1] = ofi[1];
		r = scan_lines(far, HP_ARRAY_LEN(far));
		T_ASSERT(hp_json_get(hit(r, "INTERNAL_ERROR", NULL), "cause") == NULL);
		cJSON_Delete(r);
	}
	/* Every wrapper is P1 or lower on its own: never P0 without its cause. */
	{
		size_t i;

		for (i = 0; i < hp_nccl_npatterns; i++)
			if ((hp_nccl_patterns[i].flags & HP_NCCL_WRAPPER) && hp_nccl_patterns[i].prio < 1)
				T_FAILF("wrapper '%s' is P0", hp_nccl_patterns[i].text);
	}
}

static void t_case_and_context_rules(void)
{
	/* Any case where the table says so. */
	T_ASSERT(has_code("connect() failed: Network is unreachable", "NET_UNREACHABLE"));
	T_ASSERT(has_code("NETWORK IS UNREACHABLE", "NET_UNREACHABLE"));
	T_ASSERT(has_code("timeout Waiting For peers", "TIMEOUT_RENDEZVOUS"));
	/* Exact case otherwise: the PCIe AER "Bus Error" is no SIGBUS. */
	T_ASSERT(!has_code("pcieport 0000:00:01.0: PCIe Bus Error: severity=Corrected", "SHM_FULL"));
	T_ASSERT(!has_code("oomkilled", "OOM_KILL"));
	T_ASSERT(has_code("Reason: OOMKilled", "OOM_KILL"));
	/* Context: an environment dump and a plugin that loaded are healthy. */
	T_EQ(nmatch("CUDA_VISIBLE_DEVICES=0,1,2,3"), 0);
	T_EQ(nmatch("NCCL INFO NET/Plugin: Loaded net plugin Libfabric (v8) from libnccl-net.so"), 0);
	T_EQ(nmatch("errno ENOMEM is 12"), 0);
	T_ASSERT(has_code("fi_mr_reg failed: ENOMEM", "ENOMEM"));
	T_EQ(nmatch("NCCL INFO Call to connect returned Connection refused, retrying"), 0);
	T_ASSERT(has_code("[c10d] The client socket has failed to connect to [m]:29500 "
			  "(errno: 111 - Connection refused).", "CONN_REFUSED"));
	/* Unless: c10d's IPv6 lookup warning. */
	T_EQ(nmatch("[W socket.cpp:601] [c10d] The IPv6 network addresses of (localhost, 51595) "
		    "cannot be retrieved (gai error: -2 - Name or service not known)."), 0);
	/* Catch-alls only when nothing more specific matched. */
	T_ASSERT(has_code("[1] misc/shmutils.cc:103 NCCL WARN Cuda failure 'invalid argument'",
			  "CUDA_ERROR"));
	T_ASSERT(!has_code("[1] misc/shmutils.cc:103 NCCL WARN Cuda failure 'invalid argument'",
			   "NCCL_WARN"));
	T_ASSERT(has_code("proxy.cc:1519 NCCL WARN [Proxy Service 0] Failed to execute operation",
			  "NCCL_WARN"));
	T_ASSERT(has_code("nccl error in: x.cpp:1, remote process exited", "NCCL_ERROR"));
	/* A NUL inside a line hides nothing after it. */
	T_ASSERT(hp_nccl_match("a\0Bus error", 11, NULL, 0) == 1);
	T_EQ(hp_nccl_match(NULL, 5, NULL, 0), 0);
	T_EQ(hp_nccl_marker("x AllReduce SUCCESS", 19), 1);
	T_EQ(hp_nccl_marker("allreduce success", 17), -1);
}

static void t_long_lines(void)
{
	size_t n = HP_NCCL_MATCH_BYTES + 100;
	char *l = xmalloc(n + 1);

	memset(l, 'x', n);
	l[n] = '\0';
	memcpy(l + 10, "Bus error", 9);
	T_EQ(hp_nccl_match(l, n, NULL, 0), 1);
	memset(l, 'x', n);
	memcpy(l + n - 20, "Bus error", 9);
	T_EQ(hp_nccl_match(l, n, NULL, 0), 0);
	free(l);
}

static void t_scan_dedups_and_bounds(void)
{
	struct hp_nccl_scan_opts o = { 2, 40, 2 };
	struct hp_nccl_scan *s = hp_nccl_scan_new(&o);
	const cJSON *h, *ev;
	cJSON *r;
	char line[128];
	int i;

	for (i = 1; i <= 10; i++) {
		snprintf(line, sizeof(line), "step %d: RuntimeError: CUDA error: invalid alignment", i);
		hp_nccl_scan_line(s, "ns/a/c", line, strlen(line));
		hp_nccl_scan_line(s, "ns/b/c", line, strlen(line));
	}
	hp_nccl_scan_line(s, "ns/a/c", "fine\r", 5);
	/* A third source is over max_sources: counted, not kept. */
	hp_nccl_scan_line(s, "ns/c/c", "Bus error", 9);
	hp_nccl_scan_line(s, "ns/c/c", "Bus error", 9);
	/* Control characters, escape sequences and invalid UTF-8 never reach the evidence. */
	{
		static const char l[] = "\x1b[31mBus\x01 error\x1b[0m \xff\xfe\t\xc2\x85ok";

		hp_nccl_scan_line(s, "ns/b/c", l, sizeof(l) - 1);
	}
	r = hp_nccl_scan_json(s);
	T_EQ(hp_json_num(r, "lines", 0), 24);
	T_EQ(hp_json_num(r, "sources", 0), 2);
	T_EQ(hp_json_num(r, "sources_dropped", 0), 1);
	h = hit(r, "CUDA_ALIGN_ERR", "ns/a/c");
	T_ASSERT(h != NULL);
	T_EQ(hp_json_num(h, "count", 0), 10);
	T_EQ(hp_json_num(h, "last_line", 0), 10);
	ev = hp_json_get(h, "evidence");
	T_EQ(cJSON_GetArraySize(ev), 2);
	/* Clipped to 40 bytes, oldest first. */
	T_STREQ(cJSON_GetArrayItem(ev, 0)->valuestring, "step 9: RuntimeError: CUDA error: invali");
	T_STREQ(cJSON_GetArrayItem(ev, 1)->valuestring, "step 10: RuntimeError: CUDA error: inval");
	T_ASSERT(hit(r, "CUDA_ALIGN_ERR", "ns/b/c") != NULL);
	T_ASSERT(hit(r, "SHM_FULL", "ns/c/c") == NULL);
	/* The ESC-wrapped line: the SOH splits "Bus" from " error", so it is no match. */
	T_ASSERT(hit(r, "SHM_FULL", "ns/b/c") == NULL);
	T_EQ(hp_json_len(r, "hits"), 2);
	cJSON_Delete(r);
	hp_nccl_scan_free(s);

	s = hp_nccl_scan_new(NULL);
	{
		static const char l[] = "\x1b[1mfailed to extend /dev/shm\x1b[0m \xff\tz";

		hp_nccl_scan_line(s, "x\x1b[2Jy\x7f", l, sizeof(l) - 1);
	}
	r = hp_nccl_scan_json(s);
	h = hit(r, "SHM_FULL", "xy");
	T_ASSERT(h != NULL);
	T_STREQ(cJSON_GetArrayItem(hp_json_get(h, "evidence"), 0)->valuestring,
		"failed to extend /dev/shm ? z");
	cJSON_Delete(r);
	hp_nccl_scan_free(s);
	/* NULL scans and texts are harmless. */
	hp_nccl_scan_line(NULL, "a", "b", 1);
	hp_nccl_scan_free(NULL);
	r = hp_nccl_scan_json(NULL);
	T_ASSERT(cJSON_IsObject(r));
	cJSON_Delete(r);
}

static void t_clean(void)
{
	struct hp_buf b = HP_BUF_INIT(4096);

	/* A two-byte character is never cut in two. */
	hp_text_addn(HP_TEXT_LOG, "ab\xc3\xa9", 4, 3, &b);
	T_STREQ(b.buf, "ab");
	hp_buf_reset(&b);
	/* Overlong forms, surrogates and C1 controls are not text. */
	{
		static const char t[] = "\xc0\xaf|\xed\xa0\x80|\xc2\x9b|\xe2\x86\x92";

		hp_text_addn(HP_TEXT_LOG, t, sizeof(t) - 1, 100, &b);
	}
	T_STREQ(b.buf, "??|???|??|\xe2\x86\x92");
	hp_buf_reset(&b);
	hp_text_addn(HP_TEXT_LOG, "\x1b]0;title\x07x", 11, 100, &b);
	T_STREQ(b.buf, "x");
	T_NOT_CONTAINS(b.buf, "\x07");
	hp_buf_release(&b);
}

static void t_cloudwatch_filters(void)
{
	char *f[32];
	size_t n = hp_nccl_cloudwatch_filters(f, 32, 1000), i, j, total = 0;

	T_ASSERT(n >= 2);
	for (i = 0; i < n; i++) {
		T_ASSERT(strlen(f[i]) <= 1000);
		T_ASSERT(hp_starts_with(f[i], "?\""));
		total += strlen(f[i]);
	}
	/* Every pattern and marker text is searched for, once. */
	for (j = 0; j < hp_nccl_npatterns + hp_nccl_nmarkers; j++) {
		const char *t = j < hp_nccl_npatterns ? hp_nccl_patterns[j].text
						      : hp_nccl_markers[j - hp_nccl_npatterns].text;
		char term[160];
		size_t hits = 0;

		snprintf(term, sizeof(term), "?\"%s\"", t);
		for (i = 0; i < n; i++) {
			const char *p = f[i];

			while ((p = strstr(p, term)) != NULL) {
				hits++;
				p++;
			}
		}
		if (hits != 1)
			T_FAILF("term %s appears %zu times in the filters", term, hits);
	}
	/* Case variants of any-case patterns, since CloudWatch matches case. */
	for (i = 0, j = 0; i < n; i++)
		j += strstr(f[i], "?\"Network is unreachable\"") != NULL;
	T_EQ(j, 1);
	for (i = 0; i < n; i++)
		free(f[i]);
	/* A small limit only makes more filters; a limit below any term makes none of it. */
	n = hp_nccl_cloudwatch_filters(f, 32, 100);
	for (i = 0; i < n; i++) {
		T_ASSERT(strlen(f[i]) <= 100);
		free(f[i]);
	}
	T_ASSERT(n > 3);
	T_EQ(hp_nccl_cloudwatch_filters(f, 2, 1000), 2);
	free(f[0]);
	free(f[1]);
	T_ASSERT(total > 0);
}

/* The first "NCCL version X.Y.Z" of each source: NCCL's start line and PyTorch's error (P21, P35). */
static void t_versions(void)
{
	size_t len;
	char *text = slurp("log-tcp-fallback.txt", &len);
	struct hp_nccl_scan *s = hp_nccl_scan_new(NULL);
	static const char torch[] = "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/"
				    "distributed/c10d/ProcessGroupNCCL.cpp:1333, unhandled system error "
				    "(run with NCCL_DEBUG=INFO for details), NCCL version 2.18.6";
	const cJSON *v;
	cJSON *r;

	hp_nccl_scan_text(s, "ml/a-0/main", text, len);
	hp_nccl_scan_line(s, "ml/b-0/main", torch, strlen(torch));
	hp_nccl_scan_line(s, "ml/b-0/main", "NCCL version 2.21.5+cuda12.4", 28);
	hp_nccl_scan_line(s, "ml/c-0/main", "cudaDriverVersion 12080", 23);
	r = hp_nccl_scan_json(s);
	T_EQ(hp_json_len(r, "versions"), 2);
	v = cJSON_GetArrayItem(hp_json_get(r, "versions"), 0);
	T_STREQ(hp_json_str(v, "source"), "ml/a-0/main");
	T_STREQ(hp_json_str(v, "version"), "2.21.5");
	v = cJSON_GetArrayItem(hp_json_get(r, "versions"), 1);
	T_STREQ(hp_json_str(v, "version"), "2.18.6");
	cJSON_Delete(r);
	hp_nccl_scan_free(s);
	free(text);
}

T_MAIN(T(t_table_holds_the_original_patterns), T(t_table_well_formed),
       T(t_every_pattern_matched_by_its_sample), T(t_healthy_log_matches_nothing),
       T(t_tcp_fallback_log), T(t_case_and_context_rules), T(t_long_lines),
       T(t_scan_dedups_and_bounds), T(t_clean), T(t_cloudwatch_filters),
       T(t_healthy_logs_stay_quiet), T(t_wrapper_rule), T(t_versions))
