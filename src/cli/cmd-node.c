/*
 * `hpnode node`: the on-node checks on the machine hpnode runs on, through
 * the local collector (src/collect/local.c: the probe script run here, the
 * instance named by the metadata service). It calls no AWS API, so
 * expected GPU/EFA counts come from the PCI bus only. What is particular
 * to it: --orchestrator, --timeout and --print-probe; the frame gives it
 * the report, its header and output files, and --snapshot replay.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hp/cmd.h"
#include "hp/collect.h"
#include "hp/probe.h"

#define PROBE_TIMEOUT_S 180

struct node_args {
	const char *orchestrator;   /* "EKS", "Slurm" or NULL */
	long timeout_s;
	int print_probe;
};

enum { O_ORCH = 256, O_TIMEOUT, O_PRINT };

static const struct hp_opt node_options[] = {
	{ "orchestrator", required_argument, O_ORCH,
	  "  --orchestrator eks|slurm  judge containerd (eks) or slurmd/munge (slurm);\n"
	  "                         default: guessed from the kubelet/slurmd units\n" },
	{ "timeout", required_argument, O_TIMEOUT,
	  "  --timeout S            stop the probe after S seconds (default 180)\n" },
	{ "print-probe", no_argument, O_PRINT,
	  "  --print-probe          print the probe script (read-only POSIX sh) and exit\n" },
	{ NULL, 0, 0, NULL },
};

static void node_init(struct hp_cmd_ctx *c)
{
	struct node_args *n = c->args;

	n->timeout_s = PROBE_TIMEOUT_S;
}

static int node_option(struct hp_cmd_ctx *c, int code, const char *arg)
{
	struct node_args *n = c->args;
	char *end;

	switch (code) {
	case O_PRINT:
		n->print_probe = 1;
		return 0;
	case O_ORCH:
		if (!strcasecmp(arg, "eks"))
			n->orchestrator = "EKS";
		else if (!strcasecmp(arg, "slurm"))
			n->orchestrator = "Slurm";
		else
			return hp_cmd_usage_error(c->cmd->name, "--orchestrator must be 'eks' or "
						  "'slurm' (got '%s')", arg);
		return 0;
	case O_TIMEOUT:
		n->timeout_s = strtol(arg, &end, 10);
		if (end == arg || *end || n->timeout_s < 1 || n->timeout_s > 3600)
			return hp_cmd_usage_error(c->cmd->name, "--timeout must be 1 to 3600 seconds "
						  "(got '%s')", arg);
		return 0;
	}
	return HP_EXIT_USAGE;
}

static int node_check(struct hp_cmd_ctx *c)
{
	const struct node_args *n = c->args;

	if (c->o.replay && (c->o.save || n->orchestrator))
		return hp_cmd_usage_error(c->cmd->name, "%s", "--snapshot reports on saved data: it "
					  "cannot be combined with --save-snapshot or --orchestrator");
	if (n->print_probe) {
		fputs(hp_probe_script(), stdout);
		return HP_CMD_DONE;
	}
	return 0;
}

static int collect(struct hp_cmd_ctx *c, struct hp_snapshot *s, struct hp_error *e)
{
	const struct node_args *n = c->args;
	struct hp_local_opts lo;

	lo.orchestrator = n->orchestrator;
	lo.timeout_ms = n->timeout_s * 1000;
	return hp_collect_local(c->sys, &lo, s, e);
}

const struct hp_cmd_ops hp_cmd_node = {
	.usage = "usage: hpnode node [options]\n"
		 "\n"
		 "Runs the on-node checks of hpnode triage on this machine: disks, memory,\n"
		 "kernel messages, time sync, services, GPUs, Neuron and EFA devices.\n"
		 "\n",
	.exit_text = "\n"
		     "Exit status: 0 check complete, 1 the probe could not run (or an output\n"
		     "file could not be written), 2 usage (also an output path that cannot be\n"
		     "written), 3 findings at or above --fail-on.\n",
	.options = node_options,
	.args_size = sizeof(struct node_args),
	.init = node_init,
	.option = node_option,
	.check = node_check,
	.collect = collect,
	.title = "HyperPod Node Check \xe2\x80\x94 READ-ONLY",
};
