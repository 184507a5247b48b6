/*
 * Test tool: runs the NCCL collector (hp_nccl_collect) against a live cluster
 * or fixture, on top of a snapshot that `hpnode triage --save-snapshot` wrote
 * (its "cluster", "eks" and "kube" keys say which cluster and whether kubectl
 * was verified), and writes the resulting "nccl" key as JSON.
 *
 * usage: nccl-collect SNAPSHOT OUT.json [--namespace NS] [--job NAME]
 *                     [--label any|kubeflow|job-name] [--cloudwatch] [--since S]
 * AWS settings come from the environment (region, endpoint, credentials), as
 * for hpnode; kubectl from PATH with KUBECONFIG. Exit status 0 when OUT was
 * written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/aws.h"
#include "hp/collect.h"
#include "hp/kube.h"
#include "hp/nccl-facts.h"
#include "hp/profile.h"
#include "hp/snapshot.h"

int main(int argc, char **argv)
{
	struct hp_sys *sys = hp_sys_real();
	struct hp_nccl_collect_opts o;
	struct hp_kube_opts ko;
	struct hp_snapshot snap;
	struct hp_profile prof;
	struct hp_aws aws;
	struct hp_error e = HP_ERROR_INIT;
	struct hp_buf trace = HP_BUF_INIT(HP_MAX_LINE);
	char *json;
	FILE *fp;
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: nccl-collect SNAPSHOT OUT.json [options]\n");
		return 2;
	}
	memset(&o, 0, sizeof(o));
	memset(&ko, 0, sizeof(ko));
	for (i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--namespace") && i + 1 < argc)
			o.namespace_ = argv[++i];
		else if (!strcmp(argv[i], "--job") && i + 1 < argc)
			o.job = argv[++i];
		else if (!strcmp(argv[i], "--label") && i + 1 < argc) {
			i++;
			o.label = !strcmp(argv[i], "kubeflow") ? HP_NCCL_LABEL_KUBEFLOW
				  : !strcmp(argv[i], "job-name") ? HP_NCCL_LABEL_JOB_NAME
								  : HP_NCCL_LABEL_ANY;
		} else if (!strcmp(argv[i], "--cloudwatch"))
			o.cloudwatch = 1;
		else if (!strcmp(argv[i], "--since") && i + 1 < argc)
			o.since_s = atol(argv[++i]);
		else {
			fprintf(stderr, "nccl-collect: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	hp_snapshot_init(&snap);
	memset(&prof, 0, sizeof(prof));
	memset(&aws, 0, sizeof(aws));
	if (hp_snapshot_load(&snap, sys, argv[1], &e) || hp_profile_load(sys, NULL, &prof, &e) ||
	    hp_aws_init(&aws, sys, &prof, NULL, NULL, &trace, &e)) {
		fprintf(stderr, "nccl-collect: %s\n", e.msg);
		return 1;
	}
	aws.budget_s = 300;
	aws.deadline_ms = sys->monotonic_ms(sys) + 300000;
	hp_nccl_collect(&aws, &ko, &o, &snap);
	json = cJSON_PrintUnformatted(hp_snapshot_get(&snap, "nccl"));
	fp = fopen(argv[2], "w");
	if (!json || !fp || fputs(json, fp) < 0 || fclose(fp)) {
		fprintf(stderr, "nccl-collect: cannot write %s\n", argv[2]);
		return 1;
	}
	free(json);
	hp_aws_release(&aws);
	hp_profile_release(&prof);
	hp_snapshot_release(&snap);
	hp_buf_release(&trace);
	return 0;
}
