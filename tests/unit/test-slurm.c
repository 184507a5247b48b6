/*
 * The Slurm controller probe: its command line carries exactly the script
 * in src/collect/slurm/slurm-probe.sh; the parser reads real-looking output through
 * carriage returns and terminal escapes, keeps one entry per node, tells a
 * missing END or DONE from a finished block, and survives garbage; the
 * controller choice and the Slurm node name of an instance.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "checks-t.h"
#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/slurm.h"
#include "t.h"

/* What the probe printed on a controller with trouble, through a PTY. */
static const char sample[] =
	"\x1b[?2004h\x1b]0;root@ip-10-1-0-5: ~\x07# @@HP@@ BEGIN meta\r\n"
	"now_epoch=1735732800\r\n"
	"now_local=2025-01-01T12:00:00\r\n"
	"host=ip-10-1-0-5\r\n"
	"@@HP@@ END meta 0\r\n"
	"@@HP@@ BEGIN ping\r\n"
	"Slurmctld(primary) at ip-10-1-0-5 is UP\r\n"
	"Slurmctld(backup) at ip-10-1-0-6 is DOWN\r\n"
	"@@HP@@ END ping 0\r\n"
	"@@HP@@ BEGIN sinfo\r\n"
	"ip-10-1-2-3|idle|none\r\n"
	"ip-10-1-2-4|down*|Not responding\r\n"
	"ip-10-1-2-4|down*|Not responding\r\n"
	"ip-10-1-2-5|drained|Action:Replace\r\n"
	"ip-10-1-2-6|mixed+drain|GPU | ECC errors\r\n"
	"sinfo: warning: a line that is not a node\r\n"
	"@@HP@@ END sinfo 0\r\n"
	"@@HP@@ BEGIN squeue\r\n"
	"1201|COMPLETING|2025-01-01T11:20:00|2025-01-01T09:00:00|ip-10-1-2-4|train-llama\r\n"
	"@@HP@@ END squeue 0\r\n"
	"@@HP@@ BEGIN services\r\n"
	"Id=munge.service\r\nLoadState=loaded\r\nActiveState=inactive\r\nSubState=dead\r\n\r\n"
	"Id=slurmctld.service\r\nLoadState=loaded\r\nActiveState=active\r\nSubState=running\r\n"
	"@@HP@@ END services 0\r\n"
	"@@HP@@ DONE\r\n\x1b[?2004l";

static void t_parse_sample(void)
{
	cJSON *f = hp_slurm_parse(sample, sizeof(sample) - 1);
	const cJSON *nodes = hp_json_arr(f, "sinfo.nodes"), *n;

	T_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(f, "done")));
	T_EQ(hp_json_num(f, "meta.now_epoch", 0), 1735732800);
	T_STREQ(hp_json_str(f, "meta.now_local"), "2025-01-01T12:00:00");
	T_STREQ(hp_json_str(f, "meta.host"), "ip-10-1-0-5");
	T_ASSERT(cJSON_IsTrue(hp_json_get(f, "ping.up")));
	T_EQ(hp_json_num(f, "ping.exit", -1), 0);
	T_CONTAINS(hp_json_str(f, "ping.text"), "Slurmctld(primary) at ip-10-1-0-5 is UP");
	/* The node repeated for its second partition once; the warning line skipped. */
	T_EQ(cJSON_GetArraySize(nodes), 4);
	n = cJSON_GetArrayItem(nodes, 1);
	T_STREQ(hp_json_str(n, "name"), "ip-10-1-2-4");
	T_STREQ(hp_json_str(n, "state"), "down*");
	T_STREQ(hp_json_str(n, "flags"), "*");
	T_STREQ(cJSON_GetArrayItem(cJSON_GetObjectItem(n, "states"), 0)->valuestring, "down");
	T_STREQ(hp_json_str(n, "reason"), "Not responding");
	n = cJSON_GetArrayItem(nodes, 3);
	T_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(n, "states")), 2);
	T_STREQ(cJSON_GetArrayItem(cJSON_GetObjectItem(n, "states"), 1)->valuestring, "drain");
	T_STREQ(hp_json_str(n, "reason"), "GPU | ECC errors");
	n = cJSON_GetArrayItem(hp_json_arr(f, "squeue.jobs"), 0);
	T_STREQ(hp_json_str(n, "id"), "1201");
	T_STREQ(hp_json_str(n, "end"), "2025-01-01T11:20:00");
	T_STREQ(hp_json_str(n, "name"), "train-llama");
	T_STREQ(hp_json_str(f, "services.units.munge.ActiveState"), "inactive");
	T_STREQ(hp_json_str(f, "services.units.slurmctld.SubState"), "running");
	cJSON_Delete(f);
}

static void t_parse_partial_and_old_forms(void)
{
	static const char text[] =
		"@@HP@@ BEGIN ping\n"
		"Slurmctld(primary/backup) at ctl/(NULL) are DOWN/DOWN\n"
		"@@HP@@ END ping 1\n"
		"@@HP@@ BEGIN squeue\n"
		"sh: 1: squeue: not found\n"
		"@@HP@@ END squeue 127\n"
		"@@HP@@ BEGIN sinfo\n"
		"ip-1|idle|none\n";
	cJSON *f = hp_slurm_parse(text, sizeof(text) - 1);

	T_ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(f, "done")));
	T_ASSERT(cJSON_IsFalse(hp_json_get(f, "ping.up")));
	T_EQ(hp_json_num(f, "ping.exit", 0), 1);
	T_EQ(hp_json_num(f, "squeue.exit", 0), 127);
	T_STREQ(hp_json_str(f, "squeue.text"), "sh: 1: squeue: not found");
	T_EQ(hp_json_len(f, "squeue.jobs"), 0);
	/* A block cut off before its END: the lines are kept, the status is unknown. */
	T_ASSERT(cJSON_IsNull(hp_json_get(f, "sinfo.exit")));
	T_EQ(hp_json_len(f, "sinfo.nodes"), 1);
	T_ASSERT(hp_json_get(f, "services") == NULL);
	T_ASSERT(hp_json_get(f, "meta") == NULL);
	cJSON_Delete(f);
}

static void t_parse_garbage(void)
{
	static const char *const inputs[] = {
		"", "\x1b[", "\x1b]0;unterminated", "@@HP@@ END x 1\n@@HP@@ END y\n",
		"@@HP@@ BEGIN\n@@HP@@ BEGIN sinfo\n||\n|a|\na||\n@@HP@@ BEGIN sinfo\nb|idle|x\n",
		"@@HP@@ BEGIN services\n=\nId=\nLoadState=x\n@@HP@@ END services 0\n",
		"\0\0\0@@HP@@ DONE",
	};
	size_t i;

	for (i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		cJSON *f = hp_slurm_parse(inputs[i], strlen(inputs[i]) + (i == 6 ? 14 : 0));

		T_ASSERT(cJSON_IsObject(f));
		cJSON_Delete(f);
	}
	{
		cJSON *f = hp_slurm_parse(NULL, 0);

		T_ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(f, "done")));
		cJSON_Delete(f);
	}
}

/* The remote command decodes to the script, which is the file in the tree. */
static void t_command_carries_the_script(void)
{
	struct hp_buf cmd = HP_BUF_INIT(1 << 20), file = HP_BUF_INIT(1 << 20);
	struct hp_sys sys = ck_disk_sys();
	const char *b64, *end;
	unsigned char *decoded;
	int n;

	hp_slurm_probe_command(&cmd);
	T_ASSERT(hp_starts_with(cmd.buf, "sh -c 'printf %s "));
	T_ASSERT(hp_ends_with(cmd.buf, " | base64 -d | sh'"));
	b64 = cmd.buf + strlen("sh -c 'printf %s ");
	end = strstr(b64, " | base64");
	T_ASSERT(end && !memchr(b64, '\'', (size_t)(end - b64)) && !memchr(b64, '\n', (size_t)(end - b64)));
	decoded = calloc((size_t)(end - b64), 1);
	n = EVP_DecodeBlock(decoded, (const unsigned char *)b64, (int)(end - b64));
	T_ASSERT(n > 0);
	/* DecodeBlock counts padding bytes as data; they decode to NUL. */
	while (n > 0 && decoded[n - 1] == 0)
		n--;
	T_EQ(sys.read_file(&sys, "src/collect/slurm/slurm-probe.sh", &file), 0);
	T_EQ((size_t)n, file.len);
	T_ASSERT(!memcmp(decoded, file.buf, file.len));
	T_STREQ(hp_slurm_probe_script(), file.buf);
	/* Read-only: the script names no verb that changes Slurm or systemd state. */
	T_NOT_CONTAINS(file.buf, "scontrol update");
	T_NOT_CONTAINS(file.buf, "systemctl restart");
	T_NOT_CONTAINS(file.buf, "systemctl start");
	T_NOT_CONTAINS(file.buf, " > /");
	free(decoded);
	hp_buf_release(&cmd);
	hp_buf_release(&file);
}

static void t_controller_choice(void)
{
	const char *iid, *group, *how;
	struct ck c;

	ck_load(&c, "{'cluster':{'InstanceGroups':[{'InstanceGroupName':'head-ish','SlurmConfig':"
		    "{'NodeType':'Compute'}},{'InstanceGroupName':'ctl','SlurmConfig':{'NodeType':"
		    "'Controller'}},{'InstanceGroupName':'controller-machine'}]},'nodes':["
		    "{'InstanceId':'i-1','InstanceGroupName':'ctl','InstanceStatus':{'Status':'Pending'}},"
		    "{'InstanceId':'i-2','InstanceGroupName':'ctl','InstanceStatus':{'Status':'Running'}}]}");
	T_EQ(hp_slurm_controller(&c.snap, &iid, &group, &how), 0);
	T_STREQ(iid, "i-2");
	T_STREQ(group, "ctl");
	T_STREQ(how, "SlurmConfig");
	ck_free(&c);

	/* No SlurmConfig: the name says it; a group with another NodeType never does. */
	ck_load(&c, "{'cluster':{'InstanceGroups':[{'InstanceGroupName':'head-compute','SlurmConfig':"
		    "{'NodeType':'Compute'}},{'InstanceGroupName':'workers'},{'InstanceGroupName':"
		    "'My-Master-Group'}]},'nodes':[{'InstanceId':'i-9','InstanceGroupName':'workers',"
		    "'InstanceStatus':{'Status':'Running'}}]}");
	T_EQ(hp_slurm_controller(&c.snap, &iid, &group, &how), 0);
	T_STREQ(group, "My-Master-Group");
	T_STREQ(how, "group name");
	/* ...and no Running node there: none, never a worker instead. */
	T_ASSERT(iid == NULL);
	ck_free(&c);

	ck_load(&c, "{'cluster':{'InstanceGroups':[{'InstanceGroupName':'workers'}]},'nodes':[{"
		    "'InstanceId':'i-9','InstanceGroupName':'workers','InstanceStatus':{'Status':'Running'}}]}");
	T_EQ(hp_slurm_controller(&c.snap, &iid, &group, &how), -1);
	T_ASSERT(iid == NULL && group == NULL);
	ck_free(&c);
}

static void t_node_name(void)
{
	char out[16];
	cJSON *n = cJSON_Parse("{\"PrivateDnsHostname\":\"ip-10-1-2-3.us-west-2.compute.internal\"}");

	T_STREQ(hp_slurm_node_name(n, out, sizeof(out)), "ip-10-1-2-3");
	T_ASSERT(hp_slurm_node_name(n, out, 5) == NULL);
	cJSON_Delete(n);
	n = cJSON_Parse("{\"PrivateDnsHostname\":\"\"}");
	T_ASSERT(hp_slurm_node_name(n, out, sizeof(out)) == NULL);
	cJSON_Delete(n);
	T_ASSERT(hp_slurm_node_name(NULL, out, sizeof(out)) == NULL);
}

static void t_collect_slurm_key(void)
{
	struct ck c;
	cJSON *probe = cJSON_CreateObject();

	cJSON_AddStringToObject(probe, "state", "probed");
	ck_load(&c, "{'cluster':{'ClusterArn':'x','Orchestrator':{'Slurm':{}},'InstanceGroups':[{"
		    "'InstanceGroupName':'ctl','SlurmConfig':{'NodeType':'Controller'}}]},'nodes':[{"
		    "'InstanceId':'i-2','InstanceGroupName':'ctl','InstanceStatus':{'Status':'Running'}}]}");
	hp_collect_slurm(&c.snap, probe);
	T_STREQ(hp_json_str(hp_snapshot_get(&c.snap, "slurm"), "controller"), "i-2");
	T_STREQ(hp_json_str(hp_snapshot_get(&c.snap, "slurm"), "how"), "SlurmConfig");
	T_STREQ(hp_json_str(hp_snapshot_get(&c.snap, "slurm"), "probe.state"), "probed");
	ck_free(&c);

	/* Not a Slurm cluster: no key, and the probe is freed (ASan would tell). */
	ck_load(&c, "{'cluster':{'ClusterArn':'x','Orchestrator':{'Eks':{'ClusterArn':'a'}}}}");
	hp_collect_slurm(&c.snap, cJSON_CreateObject());
	T_ASSERT(hp_snapshot_get(&c.snap, "slurm") == NULL);
	ck_free(&c);
}

T_MAIN(T(t_parse_sample), T(t_parse_partial_and_old_forms), T(t_parse_garbage),
       T(t_command_carries_the_script), T(t_controller_choice), T(t_node_name),
       T(t_collect_slurm_key))
