/*
 * The NCCL settings of a Slurm cluster: the controller probe's nccl_env
 * block (export lines and bare assignments both read, quotes and comments
 * stripped, the first file that sets a name wins: seed bug A12 read no
 * export line at all) and nccl.slurm-env's verdicts on them.
 */
#include <string.h>

#include "checks-t.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "t.h"

static const char block[] =
	"@@HP@@ BEGIN nccl_env\n"
	"file /etc/profile.d/nccl.sh\n"
	"/etc/profile.d/nccl.sh:export NCCL_DEBUG=INFO   # for the bring-up\n"
	"/etc/profile.d/nccl.sh:  export FI_PROVIDER=\"efa\"\n"
	"/etc/profile.d/nccl.sh:NCCL_SOCKET_IFNAME='^lo,docker'\n"
	"file /opt/slurm/etc/prolog.sh\n"
	"/opt/slurm/etc/prolog.sh:export NCCL_DEBUG=WARN\n"
	"/opt/slurm/etc/prolog.sh:exportNCCL_BAD=1\n"
	"not a setting\n"
	"@@HP@@ END nccl_env 0\n"
	"@@HP@@ DONE\n";

static void t_parse_nccl_env(void)
{
	cJSON *f = hp_slurm_parse(block, sizeof(block) - 1);
	const cJSON *ne = hp_json_get(f, "nccl_env");

	T_ASSERT(ne != NULL);
	T_EQ(hp_json_len(ne, "files"), 2);
	T_STREQ(hp_json_str(ne, "vars.NCCL_DEBUG"), "INFO");
	T_STREQ(hp_json_str(ne, "from.NCCL_DEBUG"), "/etc/profile.d/nccl.sh");
	T_STREQ(hp_json_str(ne, "vars.FI_PROVIDER"), "efa");
	T_STREQ(hp_json_str(ne, "vars.NCCL_SOCKET_IFNAME"), "^lo,docker");
	T_ASSERT(!hp_json_get(ne, "vars.exportNCCL_BAD"));
	T_EQ(hp_json_num(ne, "exit", -1), 0);
	cJSON_Delete(f);
}

/* A Slurm snapshot whose controller probe printed text (single quotes stand for double). */
static void load(struct ck *c, const char *text)
{
	cJSON *root = cJSON_CreateObject(), *slurm, *probe;

	memset(c, 0, sizeof(*c));
	cJSON_AddItemToObject(root, "cluster", cJSON_CreateObject());
	cJSON_AddItemToObject(root, "nccl", cJSON_CreateObject());
	slurm = cJSON_AddObjectToObject(root, "slurm");
	cJSON_AddStringToObject(slurm, "controller", "i-0aaaaaaaaaaaaaaa1");
	if (text) {
		probe = cJSON_AddObjectToObject(slurm, "probe");
		cJSON_AddStringToObject(probe, "state", "probed");
		cJSON_AddStringToObject(probe, "stdout", text);
	}
	c->snap.root = root;
}

static void t_slurm_env(void)
{
	struct ck c;
	const struct hp_finding *f;

	load(&c, block);
	ck_run(&c, "nccl.slurm-env");
	f = ck_one(&c, HP_TAG_WARN, "NCCL_DEBUG=INFO in /etc/profile.d/nccl.sh gives every Slurm job "
		   "NCCL's INFO logging");
	T_EQ(f->prio, HP_P2);
	T_STREQ(f->section, "NC24");
	T_EQ(ck_count_msg(&c, HP_TAG_WARN, "FI_PROVIDER"), 0);
	T_EQ(ck_count_msg(&c, HP_TAG_WARN, "NCCL_SOCKET_IFNAME"), 0);
	f = ck_one(&c, HP_TAG_INFO, "NCCL settings of the Slurm profile and prolog files: NCCL_DEBUG=INFO");
	T_ASSERT(ck_evidence_has(f, "/opt/slurm/etc/prolog.sh"));
	ck_free(&c);

	load(&c, "@@HP@@ BEGIN nccl_env\nfile /etc/profile.d/nccl.sh\n"
		 "/etc/profile.d/nccl.sh:export NCCL_DEBUG=TRACE\n"
		 "/etc/profile.d/nccl.sh:export FI_PROVIDER=tcp\n"
		 "/etc/profile.d/nccl.sh:export NCCL_P2P_DISABLE=1\n@@HP@@ END nccl_env 0\n@@HP@@ DONE\n");
	ck_run(&c, "nccl.slurm-env");
	T_EQ(ck_one(&c, HP_TAG_WARN, "NCCL_DEBUG=TRACE in /etc/profile.d/nccl.sh")->prio, HP_P1);
	T_EQ(ck_one(&c, HP_TAG_WARN, "FI_PROVIDER=tcp in /etc/profile.d/nccl.sh")->prio, HP_P1);
	ck_one(&c, HP_TAG_WARN, "NCCL_SOCKET_IFNAME is not set in the Slurm profile or prolog files");
	T_EQ(ck_one(&c, HP_TAG_WARN, "NCCL_P2P_DISABLE=1 in /etc/profile.d/nccl.sh")->prio, HP_P1);
	ck_free(&c);

	load(&c, "@@HP@@ BEGIN nccl_env\n@@HP@@ END nccl_env 0\n@@HP@@ DONE\n");
	ck_run(&c, "nccl.slurm-env");
	ck_one(&c, HP_TAG_INFO, "No profile, prolog or nccl.conf file on the Slurm controller sets NCCL");
	ck_free(&c);

	/* No probe: a SKIP, never a PASS. */
	load(&c, NULL);
	ck_run(&c, "nccl.slurm-env");
	ck_one(&c, HP_TAG_SKIP, "the controller probe did not run");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);

	load(&c, "@@HP@@ BEGIN ping\nSlurmctld(primary) at x is UP\n@@HP@@ END ping 0\n@@HP@@ DONE\n");
	ck_run(&c, "nccl.slurm-env");
	ck_one(&c, HP_TAG_SKIP, "no nccl_env block");
	ck_free(&c);
}

T_MAIN(T(t_parse_nccl_env), T(t_slurm_env))
