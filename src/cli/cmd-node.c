/*
 * `hpnode node`: the on-node checks on the machine hpnode runs on. It runs
 * the same probe script locally, asks the instance metadata service (1 s
 * at most) which instance this is, and reports like triage. It calls no
 * AWS API, so expected GPU/EFA counts come from the PCI bus only.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "hp/check.h"
#include "hp/cmd.h"
#include "hp/err.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/probe.h"
#include "hp/report.h"
#include "hp/snapshot.h"

#define IMDS_DEFAULT "http://169.254.169.254"
#define IMDS_TIMEOUT_MS 1000
#define PROBE_TIMEOUT_S 180
#define MAX_STDERR ((size_t)64 << 10)

struct node_opts {
	const char *save, *replay, *orchestrator;
	int json, no_color, print_probe;
	long timeout_s;
	enum hp_prio fail_on;
};

static const char usage_text[] =
	"usage: hpnode node [options]\n"
	"\n"
	"Runs the on-node checks of hpnode triage on this machine: disks, memory,\n"
	"kernel messages, time sync, services, GPUs, Neuron and EFA devices.\n"
	"\n"
	"  --output text|json     report format (default text)\n"
	"  --fail-on P0|P1|P2     exit 3 when a finding of that priority or worse exists\n"
	"  --orchestrator eks|slurm  judge containerd (eks) or slurmd/munge (slurm);\n"
	"                         default: guessed from the kubelet/slurmd units\n"
	"  --timeout S            stop the probe after S seconds (default 180)\n"
	"  --save-snapshot FILE   write what was collected to FILE (JSON)\n"
	"  --snapshot FILE        report on a saved snapshot instead of probing\n"
	"  --print-probe          print the probe script (read-only POSIX sh) and exit\n"
	"  --no-color             no ANSI colours (also NO_COLOR, TERM=dumb, non-terminal)\n"
	"  -h, --help             this help\n"
	"\n"
	"Exit status: 0 check complete, 1 the probe could not run, 2 usage,\n"
	"3 findings at or above --fail-on.\n";

static int bad_usage(const char *fmt, ...) HP_PRINTF(1, 2);

static int bad_usage(const char *fmt, ...)
{
	char raw[1024], msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	hp_safe_text(raw, msg, sizeof(msg));
	fprintf(stderr, "hpnode node: %s\nRun 'hpnode node --help' for usage.\n", msg);
	return HP_EXIT_USAGE;
}

static int parse(int argc, char **argv, struct node_opts *o)
{
	enum { O_OUTPUT = 256, O_FAIL_ON, O_ORCH, O_TIMEOUT, O_SAVE, O_REPLAY, O_PRINT, O_NO_COLOR };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, O_OUTPUT },
		{ "fail-on", required_argument, NULL, O_FAIL_ON },
		{ "orchestrator", required_argument, NULL, O_ORCH },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "save-snapshot", required_argument, NULL, O_SAVE },
		{ "snapshot", required_argument, NULL, O_REPLAY },
		{ "print-probe", no_argument, NULL, O_PRINT },
		{ "no-color", no_argument, NULL, O_NO_COLOR },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->fail_on = HP_PNONE;
	o->timeout_s = PROBE_TIMEOUT_S;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case O_SAVE: o->save = optarg; break;
		case O_REPLAY: o->replay = optarg; break;
		case O_PRINT: o->print_probe = 1; break;
		case O_NO_COLOR: o->no_color = 1; break;
		case O_OUTPUT:
			if (!strcmp(optarg, "json"))
				o->json = 1;
			else if (strcmp(optarg, "text"))
				return bad_usage("--output must be 'text' or 'json' (got '%s')", optarg);
			break;
		case O_FAIL_ON:
			if (!strcmp(optarg, "P0"))
				o->fail_on = HP_P0;
			else if (!strcmp(optarg, "P1"))
				o->fail_on = HP_P1;
			else if (!strcmp(optarg, "P2"))
				o->fail_on = HP_P2;
			else
				return bad_usage("--fail-on must be P0, P1 or P2 (got '%s')", optarg);
			break;
		case O_ORCH:
			if (!strcasecmp(optarg, "eks"))
				o->orchestrator = "EKS";
			else if (!strcasecmp(optarg, "slurm"))
				o->orchestrator = "Slurm";
			else
				return bad_usage("--orchestrator must be 'eks' or 'slurm' (got '%s')", optarg);
			break;
		case O_TIMEOUT:
			o->timeout_s = strtol(optarg, &end, 10);
			if (end == optarg || *end || o->timeout_s < 1 || o->timeout_s > 3600)
				return bad_usage("--timeout must be 1 to 3600 seconds (got '%s')", optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		case ':':
			return bad_usage("option '%s' needs a value", argv[optind - 1]);
		default:
			return bad_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s'", argv[optind]);
	if (o->replay && (o->save || o->orchestrator))
		return bad_usage("%s", "--snapshot reports on saved data: it cannot be combined with "
				 "--save-snapshot or --orchestrator");
	return 0;
}

/* "i-" and 8 or 17 hex digits. */
static int instance_id_ok(const char *s)
{
	size_t n = strlen(s), i;

	if ((n != 10 && n != 19) || strncmp(s, "i-", 2))
		return 0;
	for (i = 2; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int type_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < 64 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789.-") == n;
}

/* One IMDSv2 request; the body (trimmed) into out. */
static int imds(struct hp_sys *sys, const char *method, const char *base, const char *path,
		const struct hp_header *h, char *out, size_t n)
{
	struct hp_http_req req;
	struct hp_http_resp resp;
	char url[512];
	size_t len;
	int ok;

	snprintf(url, sizeof(url), "%s%s", base, path);
	memset(&req, 0, sizeof(req));
	req.method = method;
	req.url = url;
	req.headers = h;
	req.nheaders = 1;
	req.timeout_ms = IMDS_TIMEOUT_MS;
	req.no_proxy = 1;
	hp_http_resp_init(&resp);
	ok = !sys->http(sys, &req, &resp) && resp.status == 200 && resp.body.len &&
	     resp.body.len < n;
	if (ok) {
		len = resp.body.len;
		while (len && (resp.body.buf[len - 1] == '\n' || resp.body.buf[len - 1] == '\r'))
			len--;
		memcpy(out, resp.body.buf, len);
		out[len] = '\0';
	}
	hp_buf_release_secure(&resp.body);
	hp_http_resp_release(&resp);
	return ok ? 0 : -1;
}

/* Instance id and type from the metadata service, when it answers at once. */
static void whoami(struct hp_sys *sys, char id[32], char type[64])
{
	const char *off = hp_sys_env(sys, "AWS_EC2_METADATA_DISABLED");
	const char *base = hp_sys_env(sys, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
	struct hp_header h;
	char token[128], buf[128], root[256];

	id[0] = type[0] = '\0';
	if (off && !strcasecmp(off, "true"))
		return;
	hp_strlcpy(root, base ? base : IMDS_DEFAULT, sizeof(root));
	if (*root && root[strlen(root) - 1] == '/')
		root[strlen(root) - 1] = '\0';
	h.name = "X-aws-ec2-metadata-token-ttl-seconds";
	h.value = "60";
	if (imds(sys, "PUT", root, "/latest/api/token", &h, token, sizeof(token)))
		return;
	h.name = "X-aws-ec2-metadata-token";
	h.value = token;
	if (!imds(sys, "GET", root, "/latest/meta-data/instance-id", &h, buf, sizeof(buf)) &&
	    instance_id_ok(buf))
		hp_strlcpy(id, buf, 32);
	if (!imds(sys, "GET", root, "/latest/meta-data/instance-type", &h, buf, sizeof(buf)) &&
	    type_ok(buf))
		hp_strlcpy(type, buf, 64);
	hp_wipe(token, sizeof(token));
}

/* Copy at most max bytes of b, cut back to a whole UTF-8 character. */
static cJSON *capped_string(const struct hp_buf *b, size_t max)
{
	size_t n = b->len < max ? b->len : max;
	char *s;
	cJSON *v;

	while (n && n < b->len && ((unsigned char)b->buf[n] & 0xC0) == 0x80)
		n--;
	s = xstrndup(b->buf, n);
	v = hp_json_need(cJSON_CreateString(s));
	free(s);
	return v;
}

/* Run the probe here and fill the snapshot with one "probes" entry. */
static int probe_here(struct hp_sys *sys, const struct node_opts *o, struct hp_snapshot *snap)
{
	const char *argv[] = { "sh", "-c", hp_probe_script(), "hpnode-probe", NULL };
	struct hp_run_req req;
	struct hp_run_res res;
	cJSON *meta, *probes, *e, *pm, *facts;
	char id[32], type[64];
	int64_t t0, t1;
	int truncated;

	whoami(sys, id, type);
	memset(&req, 0, sizeof(req));
	req.argv = argv;
	req.timeout_ms = o->timeout_s * 1000;
	hp_run_res_init(&res);
	t0 = sys->monotonic_ms(sys);
	if (sys->run(sys, &req, &res)) {
		fprintf(stderr, "hpnode node: cannot run the probe with 'sh'\n");
		hp_run_res_release(&res);
		return -1;
	}
	t1 = sys->monotonic_ms(sys);
	facts = hp_probe_parse(res.out.buf, res.out.len);
	truncated = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(facts, "truncated"));
	cJSON_Delete(facts);

	meta = hp_json_need(cJSON_CreateObject());
	cJSON_AddNumberToObject(meta, "collected_at_ms", (double)sys->now_ms(sys));
	cJSON_AddStringToObject(meta, "mode", "node");
	if (o->orchestrator)
		cJSON_AddStringToObject(meta, "orchestrator", o->orchestrator);
	hp_snapshot_set(snap, "meta", meta);

	probes = hp_json_need(cJSON_CreateObject());
	e = hp_json_need(cJSON_AddObjectToObject(probes, *id ? id : "local"));
	cJSON_AddStringToObject(e, "state", "probed");
	if (res.timed_out)
		cJSON_AddStringToObject(e, "reason", "timed out");
	cJSON_AddNumberToObject(e, "exit_code", res.exit_status);
	cJSON_AddItemToObject(e, "stdout", capped_string(&res.out, HP_PROBE_MAX_STDOUT));
	cJSON_AddItemToObject(e, "stderr", capped_string(&res.err, MAX_STDERR));
	cJSON_AddBoolToObject(e, "truncated", truncated);
	cJSON_AddNumberToObject(e, "duration_ms", (double)(t1 - t0));
	cJSON_AddNullToObject(e, "group");
	if (*type)
		cJSON_AddStringToObject(e, "instance_type", type);
	else
		cJSON_AddNullToObject(e, "instance_type");
	hp_snapshot_set(snap, "probes", probes);

	pm = hp_json_need(cJSON_CreateObject());
	cJSON_AddStringToObject(pm, "transport", "local");
	cJSON_AddNumberToObject(pm, "concurrency", 1);
	cJSON_AddNumberToObject(pm, "requested", 1);
	cJSON_AddNumberToObject(pm, "probed", 1);
	cJSON_AddNumberToObject(pm, "unreachable", 0);
	cJSON_AddNumberToObject(pm, "skipped", 0);
	hp_snapshot_set(snap, "probes_meta", pm);
	hp_run_res_release(&res);
	return 0;
}

/* The orchestrator the report footer names. */
static const char *footer_orchestrator(const struct hp_snapshot *s)
{
	const char *o = hp_json_str(s->root, "meta.orchestrator");

	if (cJSON_IsObject(hp_json_get(s->root, "cluster")))
		return hp_snap_orchestrator(s);
	return o;
}

static int report(const struct hp_snapshot *s, const struct node_opts *o, struct hp_sys *sys)
{
	struct hp_findings f = { 0 };
	struct hp_report_opts ro;
	struct hp_buf out = HP_BUF_INIT((size_t)1 << 30);
	enum hp_prio worst;
	int rc = HP_EXIT_OK;

	hp_checks_run(s, &f);
	memset(&ro, 0, sizeof(ro));
	ro.color = !o->json && hp_report_want_color(o->no_color, sys->getenv(sys, "NO_COLOR"),
						    sys->getenv(sys, "TERM"), isatty(1));
	ro.title = "HyperPod Node Check \xe2\x80\x94 READ-ONLY";
	ro.cluster = hp_json_str(s->root, "cluster.ClusterName");
	ro.region = hp_json_str(s->root, "meta.region");
	ro.orchestrator = footer_orchestrator(s);
	if (o->json)
		hp_report_json(&f, &ro, &out);
	else
		hp_report_text(&f, &ro, &out);
	fwrite(out.buf, 1, out.len, stdout);
	worst = hp_report_worst(&f);
	if (o->fail_on != HP_PNONE && worst <= o->fail_on)
		rc = HP_EXIT_FINDINGS;
	hp_buf_release(&out);
	hp_findings_release(&f);
	return rc;
}

int cmd_node(int argc, char **argv, struct hp_sys *sys)
{
	struct node_opts o;
	struct hp_snapshot snap;
	struct hp_error e = HP_ERROR_INIT;
	int rc;

	rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? HP_EXIT_OK : rc;
	if (o.print_probe) {
		fputs(hp_probe_script(), stdout);
		return HP_EXIT_OK;
	}
	hp_snapshot_init(&snap);
	if (o.replay) {
		if (hp_snapshot_load(&snap, sys, o.replay, &e)) {
			fprintf(stderr, "hpnode node: %s\n", e.msg);
			hp_snapshot_release(&snap);
			return HP_EXIT_FATAL;
		}
	} else if (probe_here(sys, &o, &snap)) {
		hp_snapshot_release(&snap);
		return HP_EXIT_FATAL;
	}
	if (o.save && hp_snapshot_save(&snap, sys, o.save, &e)) {
		fprintf(stderr, "hpnode node: %s\n", e.msg);
		hp_snapshot_release(&snap);
		return HP_EXIT_FATAL;
	}
	rc = report(&snap, &o, sys);
	hp_snapshot_release(&snap);
	return rc;
}
