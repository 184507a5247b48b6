/*
 * The kubectl wrapper: the argument vector and environment it builds, how
 * it classifies kubectl's failures (from real kubectl messages), that a
 * failed run never yields data even when kubectl printed some, JSON and
 * size caps, server URL comparison and node name to instance id mapping.
 */
#include <stdlib.h>
#include <string.h>

#include "fake-sys.h"
#include "hp/facts.h"
#include "hp/kube.h"
#include "t.h"

/* One canned kubectl run. */
struct canned {
	int fail;          /* run() cannot start the child */
	int status, timed_out;
	const char *out, *err;
};

static struct canned queue[16];
static size_t nqueue, next;
static char argv_seen[8][1024], env_seen[8][2048];

static int q_run(struct hp_sys *s, const struct hp_run_req *req, struct hp_run_res *res)
{
	size_t i, k = next;
	const struct canned *c;

	(void)s;
	if (k < 8) {
		argv_seen[k][0] = env_seen[k][0] = '\0';
		for (i = 0; req->argv[i]; i++) {
			strcat(argv_seen[k], i ? " " : "");
			strcat(argv_seen[k], req->argv[i]);
		}
		for (i = 0; req->env && req->env[i]; i++) {
			strcat(env_seen[k], req->env[i]);
			strcat(env_seen[k], "\n");
		}
	}
	T_ASSERT(next < nqueue);
	c = &queue[next++];
	if (c->fail) {
		res->exit_status = -1;
		return -1;
	}
	res->exit_status = c->status;
	res->timed_out = c->timed_out;
	if (c->out && hp_buf_adds(&res->out, c->out))
		res->out.len = res->out.max;
	if (c->err)
		hp_buf_puts(&res->err, c->err);
	return 0;
}

/* Compare with a bounded message (the recorded buffers are larger than t.h's). */
#define ARGV_IS(i, want)                                                       \
	do {                                                                   \
		if (strcmp(argv_seen[i], (want)))                              \
			T_FAILF("%s:%d: argv is \"%.300s\"", __FILE__, __LINE__, argv_seen[i]); \
	} while (0)
#define ENV_HAS(i, want) T_ASSERT(strstr(env_seen[i], (want)) != NULL)
#define ENV_LACKS(i, want) T_ASSERT(strstr(env_seen[i], (want)) == NULL)

static void setup(struct fake_sys *f)
{
	fake_sys_init(f);
	f->sys.run = q_run;
	nqueue = next = 0;
	memset(queue, 0, sizeof(queue));
}

static void push(int status, const char *out, const char *err)
{
	queue[nqueue].status = status;
	queue[nqueue].out = out;
	queue[nqueue].err = err;
	nqueue++;
}

static void t_argv_and_env(void)
{
	struct fake_sys f;
	struct hp_kube k;
	struct hp_kube_result r;
	struct hp_kube_opts o = { "/tmp/kc", "ctx-a", "prof", NULL, 30000, 0, NULL, NULL };
	const char *args[] = { "get", "nodes", NULL };

	setup(&f);
	fake_setenv(&f, "PATH", "/usr/bin:/bin");
	fake_setenv(&f, "HOME", "/home/u");
	fake_setenv(&f, "AWS_PROFILE", "env-profile");
	fake_setenv(&f, "AWS_SECRET_ACCESS_KEY", "s3cr3t");
	fake_setenv(&f, "AWS_ENDPOINT_URL", "http://127.0.0.1:1");
	fake_setenv(&f, "KUBECONFIG", "/env/kubeconfig");
	fake_setenv(&f, "GITHUB_TOKEN", "ghp_x");
	fake_setenv(&f, "HTTPS_PROXY", "http://proxy:3128");
	hp_kube_init(&k, &f.sys, &o);
	push(0, "{\"items\":[]}", "");
	T_EQ(hp_kube_run(&k, args, HP_KUBE_JSON, &r), 0);
	ARGV_IS(0, "kubectl --kubeconfig /tmp/kc --context ctx-a --request-timeout=15s "
			      "get nodes -o json");
	ENV_HAS(0, "PATH=/usr/bin:/bin\n");
	ENV_HAS(0, "HOME=/home/u\n");
	ENV_HAS(0, "LANG=C\n");
	ENV_HAS(0, "AWS_SECRET_ACCESS_KEY=s3cr3t\n");
	ENV_HAS(0, "HTTPS_PROXY=http://proxy:3128\n");
	/* --profile replaces the environment's profile, once. */
	ENV_HAS(0, "AWS_PROFILE=prof\n");
	ENV_LACKS(0, "env-profile");
	/* Never: hpnode's test endpoint, unrelated secrets, KUBECONFIG when --kubeconfig is given. */
	ENV_LACKS(0, "AWS_ENDPOINT_URL");
	ENV_LACKS(0, "GITHUB_TOKEN");
	ENV_LACKS(0, "KUBECONFIG=");
	T_ASSERT(cJSON_IsArray(cJSON_GetObjectItem(r.json, "items")));
	hp_kube_result_release(&r);
	hp_kube_release(&k);

	/* Without flags: kubectl's defaults, KUBECONFIG passed through, default timeout. */
	setup(&f);
	fake_setenv(&f, "KUBECONFIG", "/env/kubeconfig");
	hp_kube_init(&k, &f.sys, NULL);
	push(0, "log line\n", "");
	T_EQ(hp_kube_run(&k, args, 0, &r), 0);
	ARGV_IS(0, "kubectl --request-timeout=60s get nodes");
	ENV_HAS(0, "KUBECONFIG=/env/kubeconfig\n");
	T_STREQ(r.out.buf, "log line\n");
	T_ASSERT(r.json == NULL);
	hp_kube_result_release(&r);
	hp_kube_release(&k);
	fake_sys_release(&f);
}

/* Real kubectl 1.32 stderr texts and what they mean. */
static void t_classify(void)
{
	static const struct {
		int status, timed_out;
		const char *err;
		enum hp_kube_status want;
	} cases[] = {
		{ 0, 0, "", HP_KUBE_OK },
		{ 0, 1, "", HP_KUBE_TIMEOUT },
		{ 1, 0, "E1129 20:43:33.771510   25582 memcache.go:265] \"Unhandled Error\" "
			"err=\"couldn't get current server API group list: the server has asked for the "
			"client to provide credentials\"\nerror: You must be logged in to the server (the "
			"server has asked for the client to provide credentials)\n", HP_KUBE_AUTH },
		{ 1, 0, "error: You must be logged in to the server (Unauthorized)\n", HP_KUBE_AUTH },
		{ 1, 0, "Unable to connect to the server: getting credentials: exec: executable aws not "
			"found\n", HP_KUBE_AUTH },
		{ 1, 0, "error: current-context must exist in order to minify\n", HP_KUBE_CONFIG },
		{ 1, 0, "Error in configuration: context was not found for specified context: nope\n",
		  HP_KUBE_CONFIG },
		{ 1, 0, "error: stat /nonexistent: no such file or directory\n", HP_KUBE_CONFIG },
		{ 1, 0, "The connection to the server localhost:8080 was refused - did you specify the "
			"right host or port?\n", HP_KUBE_UNREACHABLE },
		{ 1, 0, "Unable to connect to the server: dial tcp: lookup ABC.gr7.us-west-2.eks."
			"amazonaws.com: no such host\n", HP_KUBE_UNREACHABLE },
		{ 1, 0, "Unable to connect to the server: tls: failed to verify certificate: x509: "
			"certificate signed by unknown authority\n", HP_KUBE_UNREACHABLE },
		{ 1, 0, "Unable to connect to the server: net/http: request canceled (Client.Timeout "
			"exceeded while awaiting headers)\n", HP_KUBE_TIMEOUT },
		{ 1, 0, "Error from server (Forbidden): events is forbidden: User \"dev\" cannot list "
			"resource \"events\" in API group \"\" at the cluster scope\n", HP_KUBE_FORBIDDEN },
		{ 1, 0, "Error from server (NotFound): daemonsets.apps \"aws-node\" not found\n",
		  HP_KUBE_NOT_FOUND },
		{ 1, 0, "error: unknown flag: --bogus\n", HP_KUBE_ERROR },
		{ 2, 0, NULL, HP_KUBE_ERROR },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum hp_kube_status got = hp_kube_classify(cases[i].status, cases[i].timed_out,
							   cases[i].err);
		if (got != cases[i].want)
			T_FAILF("case %zu: %s, expected %s", i, hp_kube_status_name(got),
				hp_kube_status_name(cases[i].want));
	}
	T_STREQ(hp_kube_status_name(HP_KUBE_FORBIDDEN), "forbidden");
}

static void t_error_line(void)
{
	char out[128];

	hp_kube_error_line("E1129 20:43:33.771510   25582 memcache.go:265] noise\n"
			   "E1129 20:43:33.774642   25582 memcache.go:265] more noise\n"
			   "error: You must be logged in to the server (Unauthorized)\r\n", out,
			   sizeof(out));
	T_STREQ(out, "You must be logged in to the server (Unauthorized)");
	hp_kube_error_line("Error from server (NotFound): pods \"x\" not found\n", out, sizeof(out));
	T_STREQ(out, "Error from server (NotFound): pods \"x\" not found");
	hp_kube_error_line("W0101 00:00:00.000000 1 x.go:1] only klog\n", out, sizeof(out));
	T_STREQ(out, "W0101 00:00:00.000000 1 x.go:1] only klog");
	hp_kube_error_line("", out, sizeof(out));
	T_STREQ(out, "");
	hp_kube_error_line("error: 0123456789012345678901234567890123456789", out, 11);
	T_STREQ(out, "0123456789");
}

static void t_failures_carry_no_data(void)
{
	struct fake_sys f;
	struct hp_kube k;
	struct hp_kube_result r;
	const char *args[] = { "get", "namespaces", NULL };

	setup(&f);
	hp_kube_init(&k, &f.sys, NULL);
	/* kubectl prints an empty List on stdout even when the token is rejected. */
	push(1, "{\"apiVersion\":\"v1\",\"items\":[],\"kind\":\"List\"}",
	     "error: You must be logged in to the server (Unauthorized)\n");
	T_EQ(hp_kube_run(&k, args, HP_KUBE_JSON, &r), -1);
	T_EQ(r.status, HP_KUBE_AUTH);
	T_ASSERT(r.json == NULL);
	T_STREQ(r.message, "You must be logged in to the server (Unauthorized)");
	hp_kube_result_release(&r);

	queue[nqueue++].fail = 1;
	T_EQ(hp_kube_run(&k, args, HP_KUBE_JSON, &r), -1);
	T_EQ(r.status, HP_KUBE_MISSING);
	T_EQ(r.exit_status, -1);
	T_CONTAINS(r.message, "cannot run 'kubectl'");
	hp_kube_result_release(&r);

	queue[nqueue].timed_out = 1;
	queue[nqueue++].status = 137;
	T_EQ(hp_kube_run(&k, args, HP_KUBE_JSON, &r), -1);
	T_EQ(r.status, HP_KUBE_TIMEOUT);
	T_CONTAINS(r.message, "did not finish within 120 s");
	hp_kube_result_release(&r);

	push(0, "[1,2]", "");
	T_EQ(hp_kube_run(&k, args, HP_KUBE_JSON, &r), -1);
	T_EQ(r.status, HP_KUBE_PARSE);
	hp_kube_result_release(&r);

	push(0, "{\"items\":[", "");
	T_EQ(hp_kube_run(&k, args, HP_KUBE_JSON, &r), -1);
	T_EQ(r.status, HP_KUBE_PARSE);
	hp_kube_result_release(&r);

	/* A document followed by garbage is garbage. */
	push(0, "{\"items\":[]}\n\x01garbage{{{", "");
	T_EQ(hp_kube_run(&k, args, HP_KUBE_JSON, &r), -1);
	T_EQ(r.status, HP_KUBE_PARSE);
	hp_kube_result_release(&r);
	push(0, "{\"items\":[]}\n", "");
	T_EQ(hp_kube_run(&k, args, HP_KUBE_JSON, &r), 0);
	hp_kube_result_release(&r);

	/* An exit status without any stderr still says something. */
	push(3, "", "");
	T_EQ(hp_kube_run(&k, args, HP_KUBE_JSON, &r), -1);
	T_EQ(r.status, HP_KUBE_ERROR);
	T_STREQ(r.message, "kubectl exited with status 3");
	hp_kube_result_release(&r);

	/* Output that fills the cap is too big, not a short list. */
	k.max_out = 16;
	push(0, "{\"items\":[1,2,3,4,5,6,7,8]}", "");
	T_EQ(hp_kube_run(&k, args, HP_KUBE_JSON, &r), -1);
	T_EQ(r.status, HP_KUBE_TOO_BIG);
	hp_kube_result_release(&r);
	hp_kube_release(&k);
	fake_sys_release(&f);
}

/* kubectl runs within the run budget: cut to what is left, not run once it is spent. */
static void t_run_budget(void)
{
	struct fake_sys f;
	struct hp_kube k;
	struct hp_kube_result r;
	const char *args[] = { "get", "namespaces", NULL };

	setup(&f);
	hp_kube_init(&k, &f.sys, NULL);
	k.budget_s = 30;
	k.deadline_ms = f.sys.monotonic_ms(&f.sys) + 5000;
	queue[nqueue].timed_out = 1;
	queue[nqueue++].status = 137;
	T_EQ(hp_kube_run(&k, args, HP_KUBE_JSON, &r), -1);
	T_EQ(r.status, HP_KUBE_TIMEOUT);
	T_CONTAINS(r.message, "end of the run budget (--max-runtime 30 s)");
	hp_kube_result_release(&r);
	T_EQ(next, 1);

	k.deadline_ms = f.sys.monotonic_ms(&f.sys);
	push(0, "{\"items\":[]}", "");
	T_EQ(hp_kube_run(&k, args, HP_KUBE_JSON, &r), -1);
	T_EQ(r.status, HP_KUBE_TIMEOUT);
	T_CONTAINS(r.message, "not run: the run budget (--max-runtime 30 s) was spent");
	T_EQ(next, 1);
	hp_kube_result_release(&r);
	hp_kube_release(&k);
	fake_sys_release(&f);
}


static void t_same_server(void)
{
	static const struct {
		const char *a, *b;
		int same;
	} cases[] = {
		{ "https://ABC123.gr7.us-west-2.eks.amazonaws.com",
		  "https://abc123.gr7.us-west-2.eks.amazonaws.com", 1 },
		{ "https://abc.eks.amazonaws.com", "https://abc.eks.amazonaws.com:443/", 1 },
		{ "HTTPS://abc.eks.amazonaws.com/", "https://abc.eks.amazonaws.com", 1 },
		{ "https://127.0.0.1:6443", "https://127.0.0.1:6443", 1 },
		{ "https://127.0.0.1:6443", "https://127.0.0.1:6444", 0 },
		{ "https://127.0.0.1:6443", "https://127.0.0.1:6443/other-cluster", 0 },
		{ "https://abc.eks.amazonaws.com", "http://abc.eks.amazonaws.com", 0 },
		{ "https://abc.eks.amazonaws.com", "https://abd.eks.amazonaws.com", 0 },
		{ "https://[::1]:6443", "https://[::1]:6443/", 1 },
		{ "https://abc.eks.amazonaws.com", "abc.eks.amazonaws.com", 0 },
		{ "https://abc:99999", "https://abc:99999", 0 },
		{ "https://:443", "https://:443", 0 },
		{ NULL, "https://abc", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (hp_kube_same_server(cases[i].a, cases[i].b) != cases[i].same)
			T_FAILF("case %zu: '%s' vs '%s'", i, cases[i].a ? cases[i].a : "(null)",
				cases[i].b);
}

static void t_instance_id(void)
{
	char out[32];
	cJSON *labels = cJSON_Parse("{\"kubernetes.io/hostname\":\"i-0123456789abcdef0\","
				    "\"sagemaker.amazonaws.com/instance-id\":\"i-0fedcba9876543210\"}");

	T_EQ(hp_kube_instance_id("x", "aws:///us-west-2a/i-0123456789abcdef0", NULL, out,
				 sizeof(out)), 0);
	T_STREQ(out, "i-0123456789abcdef0");
	T_EQ(hp_kube_instance_id("hyperpod-i-0123456789abcdef0", "", NULL, out, sizeof(out)), 0);
	T_STREQ(out, "i-0123456789abcdef0");
	T_EQ(hp_kube_instance_id("ip-10-1-2-3.ec2.internal", "aws:///usw2-az1/i-1234abcd", NULL, out,
				 sizeof(out)), 0);
	T_STREQ(out, "i-1234abcd");
	/* Only sagemaker labels count, and only whole ids. */
	T_EQ(hp_kube_instance_id("node-a", NULL, labels, out, sizeof(out)), 0);
	T_STREQ(out, "i-0fedcba9876543210");
	/* Not an id: wrong length, upper case, inside a word. */
	T_EQ(hp_kube_instance_id("hi-0123456789abcdef0", "aws:///x/i-0123456", NULL, out, sizeof(out)),
	     -1);
	T_STREQ(out, "");
	T_EQ(hp_kube_instance_id("i-0123456789ABCDEF0", NULL, NULL, out, sizeof(out)), -1);
	T_EQ(hp_kube_instance_id("i-0123456789abcdef0x", NULL, NULL, out, sizeof(out)), -1);
	T_EQ(hp_kube_instance_id("i-0123456789abcdef0", NULL, NULL, out, 10), -1);
	cJSON_Delete(labels);
}

T_MAIN(T(t_argv_and_env), T(t_classify), T(t_error_line), T(t_failures_carry_no_data),
       T(t_run_budget),
       T(t_same_server), T(t_instance_id))
