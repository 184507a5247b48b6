/*
 * The kubectl JSON readers (src/collect/kube/read.c, src/collect/kube/kubectl.c): the
 * Kubernetes collector of an EKS cluster with a scripted kubectl whose
 * answers are the input's parts, then every check and both reports.
 * Parts, NUL-separated: `config view`, namespaces, nodes, daemonsets,
 * pods, events (the sandbox and the node events reads both), logs; a part
 * "!N text" makes that run exit N with text on
 * stderr. Oracles: the reports are clean.
 */
#include <stdlib.h>
#include <string.h>

#include "base-snap.h"
#include "fake-sys.h"
#include "fuzz.h"
#include "hp/collect.h"
#include "hp/kube.h"

static const struct fz_parts *parts;

static int answer(size_t i, struct hp_run_res *res)
{
	const char *p;

	if (i >= parts->n) {
		res->exit_status = 1;
		hp_buf_puts(&res->err, "error: the server doesn't have a resource type\n");
		return 0;
	}
	p = parts->p[i];
	if (p[0] == '!' && p[1] >= '0' && p[1] <= '9') {
		res->exit_status = p[1] - '0';
		p += 2;
		if (*p == ' ')
			p++;
		if (hp_buf_adds(&res->err, p))
			res->err.len = 0; /* over kubectl's stderr cap: treat as empty */
		return 0;
	}
	res->exit_status = 0;
	if (hp_buf_adds(&res->out, p))
		res->out.len = 0;
	return 0;
}

static int run_kubectl(struct hp_sys *s, const struct hp_run_req *req, struct hp_run_res *res)
{
	static const char *const words[] = { "config", "namespaces", "nodes", "daemonsets",
					     "pods", "events", "logs" };
	size_t i, w;

	(void)s;
	for (i = 1; req->argv[i]; i++)
		for (w = 0; w < sizeof(words) / sizeof(words[0]); w++)
			if (!strcmp(req->argv[i], words[w]))
				return answer(w, res);
	res->exit_status = 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_parts ps;
	struct fake_sys f;
	struct hp_aws a;
	struct hp_snapshot s;
	struct hp_kube_opts o;
	cJSON *eks;

	if (size > (4u << 20))
		return 0;
	fz_split(data, size, 7, &ps);
	parts = &ps;
	memset(&f, 0, sizeof(f));
	fz_aws(&f, &a, NULL, 0, 0);
	f.sys.run = run_kubectl;
	hp_snapshot_init(&s);
	cJSON_Delete(s.root);
	s.root = cJSON_Parse(fz_base_eks);
	eks = cJSON_CreateObject();
	cJSON_AddStringToObject(eks, "name", "ml-eks");
	cJSON_AddStringToObject(eks, "endpoint", "https://ABC.gr7.us-west-2.eks.amazonaws.com");
	cJSON_AddStringToObject(eks, "status", "ACTIVE");
	hp_snapshot_set(&s, "eks", eks);
	memset(&o, 0, sizeof(o));
	hp_collect_kube(&a, &o, &s);
	fz_check_report(&s, NULL);
	hp_snapshot_release(&s);
	fake_sys_release(&f);
	fz_parts_release(&ps);
	return 0;
}
