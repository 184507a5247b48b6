/*
 * `hpnode triage`: collect -> snapshot -> checks -> report for one cluster.
 * Also replays a saved snapshot (--snapshot) without touching AWS. Fatal
 * conditions (credentials, cluster not found) end with exit status 1.
 */
#include <getopt.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hp/aws.h"
#include "hp/check.h"
#include "hp/cmd.h"
#include "hp/collect.h"
#include "hp/json.h"
#include "hp/report.h"

#define K_POINTER "→ " HP_REF_DOC " § K (Node Access via SSM)"

struct triage_opts {
	const char *cluster, *region, *node, *profile, *endpoint;
	const char *save, *replay;
	int json, no_color, debug;
	enum hp_prio fail_on;
	int no_probe;
	struct hp_probe_opts probe;
};

static const char usage_text[] =
	"usage: hpnode triage --cluster NAME|ARN [--region R] [options]\n"
	"\n"
	"  --cluster NAME|ARN     HyperPod cluster name or ARN (required)\n"
	"  --region R             AWS region (else AWS_REGION, AWS_DEFAULT_REGION, profile)\n"
	"  --node i-...           focus on one node (never switches to another)\n"
	"  --profile P            AWS profile from the shared config files\n"
	"  --endpoint-url URL     send every AWS call to URL (testing, private endpoints)\n"
	"  --output text|json     report format (default text)\n"
	"  --fail-on P0|P1|P2     exit 3 when a finding of that priority or worse exists\n"
	"  --save-snapshot FILE   write what was collected to FILE (JSON)\n"
	"  --no-probe             do not open SSM sessions to the nodes\n"
	"  --sample N             probe N Running nodes spread over the groups (default all)\n"
	"  --concurrency N        SSM sessions at once (default 16, at most 256)\n"
	"  --ssm-rate R           StartSession calls per second (default 3)\n"
	"  --probe-timeout S      seconds per node, session included (default 180)\n"
	"  --ssm-transport T      native (default), plugin (session-manager-plugin),\n"
	"                         or auto (native, the plugin for KMS-encrypted sessions)\n"
	"  --snapshot FILE        replay a saved snapshot instead of calling AWS\n"
	"  --no-color             no ANSI colours (also NO_COLOR, TERM=dumb, non-terminal)\n"
	"  --debug                log each AWS call and the credential source to stderr\n"
	"  -h, --help             this help\n"
	"\n"
	"Exit status: 0 triage complete, 1 fatal (credentials, cluster not found),\n"
	"2 usage, 3 findings at or above --fail-on.\n";

static int matches(const char *re, const char *s)
{
	regex_t r;
	int ok;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB))
		hp_die("bad built-in pattern");
	ok = !regexec(&r, s, 0, NULL, 0);
	regfree(&r);
	return ok;
}

/* A number within [lo, hi] with nothing after it. */
static int number(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

static int bad_usage(const char *fmt, ...) HP_PRINTF(1, 2);

static int bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("hpnode triage: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nRun 'hpnode triage --help' for usage.\n", stderr);
	return HP_EXIT_USAGE;
}

static int parse(int argc, char **argv, struct triage_opts *o)
{
	enum { O_CLUSTER = 256, O_REGION, O_NODE, O_PROFILE, O_ENDPOINT, O_OUTPUT, O_FAIL_ON,
	       O_SAVE, O_REPLAY, O_NO_COLOR, O_DEBUG, O_NO_PROBE, O_SAMPLE, O_CONCURRENCY,
	       O_SSM_RATE, O_PROBE_TIMEOUT, O_SSM_TRANSPORT };
	static const struct option longopts[] = {
		{ "cluster", required_argument, NULL, O_CLUSTER },
		{ "region", required_argument, NULL, O_REGION },
		{ "node", required_argument, NULL, O_NODE },
		{ "profile", required_argument, NULL, O_PROFILE },
		{ "endpoint-url", required_argument, NULL, O_ENDPOINT },
		{ "output", required_argument, NULL, O_OUTPUT },
		{ "fail-on", required_argument, NULL, O_FAIL_ON },
		{ "save-snapshot", required_argument, NULL, O_SAVE },
		{ "snapshot", required_argument, NULL, O_REPLAY },
		{ "no-color", no_argument, NULL, O_NO_COLOR },
		{ "debug", no_argument, NULL, O_DEBUG },
		{ "no-probe", no_argument, NULL, O_NO_PROBE },
		{ "sample", required_argument, NULL, O_SAMPLE },
		{ "concurrency", required_argument, NULL, O_CONCURRENCY },
		{ "ssm-rate", required_argument, NULL, O_SSM_RATE },
		{ "probe-timeout", required_argument, NULL, O_PROBE_TIMEOUT },
		{ "ssm-transport", required_argument, NULL, O_SSM_TRANSPORT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double v;
	int c;

	memset(o, 0, sizeof(*o));
	o->fail_on = HP_PNONE;
	hp_probe_opts_defaults(&o->probe);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case O_CLUSTER: o->cluster = optarg; break;
		case O_REGION: o->region = optarg; break;
		case O_NODE: o->node = optarg; break;
		case O_PROFILE: o->profile = optarg; break;
		case O_ENDPOINT: o->endpoint = optarg; break;
		case O_SAVE: o->save = optarg; break;
		case O_REPLAY: o->replay = optarg; break;
		case O_NO_COLOR: o->no_color = 1; break;
		case O_DEBUG: o->debug = 1; break;
		case O_NO_PROBE: o->no_probe = 1; break;
		case O_SAMPLE:
			if (number(optarg, 1, 1000000, &v) || v != (long)v)
				return bad_usage("--sample must be a whole number from 1 to 1000000 (got '%s')", optarg);
			o->probe.sample = (int)v;
			break;
		case O_CONCURRENCY:
			if (number(optarg, 1, 256, &v) || v != (long)v)
				return bad_usage("--concurrency must be a whole number from 1 to 256 (got '%s')", optarg);
			o->probe.concurrency = (int)v;
			break;
		case O_SSM_RATE:
			if (number(optarg, 0.1, 1000, &v))
				return bad_usage("--ssm-rate must be a number from 0.1 to 1000 (got '%s')", optarg);
			o->probe.rate_per_s = v;
			break;
		case O_PROBE_TIMEOUT:
			if (number(optarg, 1, 3600, &v) || v != (long)v)
				return bad_usage("--probe-timeout must be whole seconds from 1 to 3600 (got '%s')", optarg);
			o->probe.timeout_ms = (long)v * 1000;
			break;
		case O_SSM_TRANSPORT:
			if (!strcmp(optarg, "native"))
				o->probe.transport = HP_SSM_NATIVE;
			else if (!strcmp(optarg, "plugin"))
				o->probe.transport = HP_SSM_PLUGIN;
			else if (!strcmp(optarg, "auto"))
				o->probe.transport = HP_SSM_AUTO;
			else
				return bad_usage("--ssm-transport must be native, plugin or auto (got '%s')", optarg);
			break;
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
	if (!o->cluster && !o->replay)
		return bad_usage("%s", "--cluster is required");
	if (o->cluster &&
	    !matches("^arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:[0-9]{12}:cluster/[a-z0-9]{12}$", o->cluster) &&
	    !matches("^[a-zA-Z0-9][-a-zA-Z0-9]{0,62}$", o->cluster))
		return bad_usage("--cluster must be a HyperPod cluster name or ARN (got '%s')", o->cluster);
	if (o->node && !matches("^i-[0-9a-f]{8,17}$", o->node))
		return bad_usage("--node must be an EC2 instance id like i-0123456789abcdef0 (got '%s')", o->node);
	if (o->node && o->probe.sample)
		return bad_usage("%s", "--sample and --node cannot be combined");
	if ((o->probe.sample || o->no_probe) && o->replay)
		return bad_usage("%s", "--snapshot replays saved data: probe options do not apply");
	if (o->replay && (o->save || o->endpoint || o->profile))
		return bad_usage("%s", "--snapshot replays saved data: it cannot be combined with "
				 "--save-snapshot, --endpoint-url or --profile");
	return 0;
}

static void print_clusters(const struct hp_snapshot *s, const char *region)
{
	const cJSON *list = hp_snapshot_get(s, "clusters"), *c;

	fprintf(stderr, "Available clusters in %s:\n", region);
	if (!cJSON_IsArray(list)) {
		fputs("  (unable to list)\n", stderr);
		return;
	}
	if (!cJSON_GetArraySize(list))
		fputs("  (none)\n", stderr);
	cJSON_ArrayForEach(c, list) {
		struct hp_buf n = HP_BUF_INIT(512), st = HP_BUF_INIT(128), arn = HP_BUF_INIT(512);
		const char *v;
		v = hp_json_str(c, "ClusterName");
		hp_sanitize(v ? v : "?", &n, 256);
		v = hp_json_str(c, "ClusterStatus");
		hp_sanitize(v ? v : "?", &st, 64);
		v = hp_json_str(c, "ClusterArn");
		hp_sanitize(v ? v : "?", &arn, 256);
		fprintf(stderr, "  %-40s %-14s %s\n", n.buf, st.buf, arn.buf);
		hp_buf_release(&n);
		hp_buf_release(&st);
		hp_buf_release(&arn);
	}
}

/* Messages for the conditions that stop a triage. */
static int fatal(const struct hp_error *e, const struct hp_snapshot *s, const char *region)
{
	struct hp_buf msg = HP_BUF_INIT(4096);

	hp_sanitize(e->msg, &msg, 2048);
	switch (e->code) {
	case HP_ERR_CREDS:
	case HP_ERR_NO_CREDS:
		fprintf(stderr, "ERROR: AWS credentials not configured or expired.\n  %s\n\n"
			"Fix AWS credentials and rerun. " K_POINTER "\n", msg.buf);
		break;
	case HP_ERR_NOT_FOUND:
		fprintf(stderr, "ERROR: %s\n", msg.buf);
		print_clusters(s, region);
		fputs("Confirm the cluster name and region.\n", stderr);
		break;
	default:
		fprintf(stderr, "ERROR: %s\n", msg.buf);
		break;
	}
	hp_buf_release(&msg);
	return hp_err_exit_status(e->code);
}

static int report(const struct hp_snapshot *s, const struct triage_opts *o, struct hp_sys *sys)
{
	struct hp_findings f = { 0 };
	struct hp_report_opts ro;
	struct hp_buf out = HP_BUF_INIT((size_t)1 << 30);
	const cJSON *meta = hp_snapshot_get(s, "meta");
	enum hp_prio worst;
	int rc = HP_EXIT_OK;

	hp_checks_run(s, &f);
	memset(&ro, 0, sizeof(ro));
	ro.color = !o->json && hp_report_want_color(o->no_color, sys->getenv(sys, "NO_COLOR"),
						    sys->getenv(sys, "TERM"), isatty(1));
	ro.cluster = hp_snap_cluster_name(s);
	ro.region = hp_json_str(meta, "region");
	ro.orchestrator = hp_snap_orchestrator(s);
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

#define PROGRESS_WIDTH 72

/*
 * "SSM probes: 37/100 done, 2 unreachable, 0 not probed" redrawn in place
 * on a terminal with a carriage return (no escape sequences: NO_COLOR
 * terminals get plain text too).
 */
static void progress(void *ud, const struct hp_ssm_progress *p)
{
	int *shown = ud;

	fprintf(stderr, "\r%-*.*s", PROGRESS_WIDTH, PROGRESS_WIDTH, "");
	fprintf(stderr, "\rSSM probes: %zu/%zu done, %zu unreachable, %zu not probed", p->done,
		p->total, p->unreachable, p->skipped);
	fflush(stderr);
	*shown = 1;
}

static void probe_nodes(struct hp_aws *aws, struct triage_opts *o, struct hp_snapshot *snap,
			struct hp_error *e)
{
	int shown = 0;

	if (o->no_probe) {
		cJSON *meta = cJSON_CreateObject();
		cJSON_AddStringToObject(meta, "note", "--no-probe was given");
		cJSON_AddNumberToObject(meta, "requested", 0);
		hp_snapshot_set(snap, "probes_meta", meta);
		return;
	}
	o->probe.node = o->node;
	if (isatty(2)) {
		o->probe.progress = progress;
		o->probe.progress_ud = &shown;
	}
	(void)hp_collect_probes(aws, &o->probe, snap, e);
	if (shown)
		fprintf(stderr, "\r%-*s\r", PROGRESS_WIDTH, "");
}

/* The credential/region trace, one "hpnode: debug:" line each. */
static void debug_trace(const struct hp_buf *trace)
{
	const char *p = trace->buf;

	while (*p) {
		size_t n = strcspn(p, "\n");
		fprintf(stderr, "hpnode: debug: %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

int cmd_triage(int argc, char **argv, struct hp_sys *sys)
{
	struct triage_opts o;
	struct hp_snapshot snap;
	struct hp_error e = HP_ERROR_INIT;
	struct hp_profile prof;
	struct hp_aws aws;
	struct hp_collect_opts co;
	struct hp_buf trace = HP_BUF_INIT(HP_MAX_LINE);
	int rc;

	rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? HP_EXIT_OK : rc;
	hp_snapshot_init(&snap);
	if (o.replay) {
		if (hp_snapshot_load(&snap, sys, o.replay, &e)) {
			fprintf(stderr, "hpnode triage: %s\n", e.msg);
			hp_snapshot_release(&snap);
			return HP_EXIT_FATAL;
		}
		rc = report(&snap, &o, sys);
		hp_snapshot_release(&snap);
		return rc;
	}
	memset(&prof, 0, sizeof(prof));
	memset(&aws, 0, sizeof(aws));
	if (hp_profile_load(sys, o.profile, &prof, &e) ||
	    hp_aws_init(&aws, sys, &prof, o.region, o.endpoint, &trace, &e)) {
		if (o.debug)
			debug_trace(&trace);
		if (e.code == HP_ERR_NO_CREDS || e.code == HP_ERR_CREDS)
			rc = fatal(&e, &snap, "");
		else {
			fprintf(stderr, "hpnode triage: %s\n", e.msg);
			rc = hp_err_exit_status(e.code);
		}
		hp_aws_release(&aws);
		hp_profile_release(&prof);
		hp_snapshot_release(&snap);
		hp_buf_release(&trace);
		return rc;
	}
	aws.debug = o.debug;
	if (o.debug)
		debug_trace(&trace);
	memset(&co, 0, sizeof(co));
	co.cluster = o.cluster;
	co.node = o.node;
	if (hp_collect_cluster(&aws, &co, &snap, &e)) {
		rc = fatal(&e, &snap, aws.region);
	} else {
		probe_nodes(&aws, &o, &snap, &e);
		if (o.save && hp_snapshot_save(&snap, o.save, &e)) {
			fprintf(stderr, "hpnode triage: %s\n", e.msg);
			rc = HP_EXIT_FATAL;
		} else {
			rc = report(&snap, &o, sys);
		}
	}
	hp_aws_release(&aws);
	hp_profile_release(&prof);
	hp_snapshot_release(&snap);
	hp_buf_release(&trace);
	return rc;
}
