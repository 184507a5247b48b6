/*
 * The snapshot document: building it, saving and loading it (round trip and
 * every load error), and the getters checks use.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fake-sys.h"
#include "hp/json.h"
#include "hp/snapshot.h"
#include "checks-t.h"
#include "t.h"

static void t_init_has_version(void)
{
	struct hp_snapshot s;

	hp_snapshot_init(&s);
	T_ASSERT(cJSON_IsObject(s.root));
	T_EQ(hp_json_num(s.root, "version", -1), 1);
	T_ASSERT(hp_snapshot_get(&s, "cluster") == NULL);
	T_STREQ(hp_snap_orchestrator(&s), "Unknown");
	hp_snapshot_release(&s);
	T_ASSERT(s.root == NULL);
}

static void t_set_replaces(void)
{
	struct hp_snapshot s;

	hp_snapshot_init(&s);
	hp_snapshot_set(&s, "events_truncated", cJSON_CreateFalse());
	hp_snapshot_set(&s, "events_truncated", cJSON_CreateTrue());
	T_ASSERT(cJSON_IsTrue(hp_snapshot_get(&s, "events_truncated")));
	/* Replaced, not added twice. */
	T_EQ(cJSON_GetArraySize(s.root), 2);
	hp_snapshot_release(&s);
}

static void t_add_call(void)
{
	struct hp_snapshot s;
	const cJSON *calls, *c;

	hp_snapshot_init(&s);
	hp_snapshot_add_call(&s, "sagemaker", "ListClusterNodes", "denied",
			     "AccessDeniedException", "not authorized", 400);
	hp_snapshot_add_call(&s, "ec2", "DescribeSubnets", "network", NULL, NULL, 0);
	calls = hp_snapshot_get(&s, "calls");
	T_EQ(cJSON_GetArraySize(calls), 2);
	c = cJSON_GetArrayItem(calls, 0);
	T_STREQ(hp_json_str(c, "service"), "sagemaker");
	T_STREQ(hp_json_str(c, "action"), "ListClusterNodes");
	T_STREQ(hp_json_str(c, "class"), "denied");
	T_STREQ(hp_json_str(c, "code"), "AccessDeniedException");
	T_STREQ(hp_json_str(c, "message"), "not authorized");
	T_EQ(hp_json_num(c, "status", -1), 400);
	c = cJSON_GetArrayItem(calls, 1);
	T_STREQ(hp_json_str(c, "code"), "");
	T_STREQ(hp_json_str(c, "message"), "");
	hp_snapshot_release(&s);
}

static void t_round_trip(void)
{
	char path[] = "/tmp/hpnode-snap-XXXXXX";
	struct hp_error e = HP_ERROR_INIT;
	struct hp_sys sys = ck_disk_sys();
	struct hp_snapshot a, b;
	int fd = mkstemp(path);

	T_ASSERT(fd >= 0);
	close(fd);
	hp_snapshot_init(&a);
	hp_snapshot_set(&a, "cluster",
			cJSON_Parse("{\"ClusterName\":\"c1\",\"ClusterArn\":\"arn:aws:sagemaker:us-east-1:"
				    "111122223333:cluster/abcdefabcdef\",\"InstanceGroups\":[]}"));
	hp_snapshot_set(&a, "nodes_truncated", cJSON_CreateTrue());
	hp_snapshot_set(&a, "note", cJSON_CreateString("caf\xC3\xA9 \"quoted\"\n"));
	hp_snapshot_add_call(&a, "logs", "DescribeLogGroups", "throttled", "ThrottlingException",
			     "Rate exceeded", 400);
	T_EQ(hp_snapshot_save(&a, hp_sys_real(), path, &e), 0);

	memset(&b, 0, sizeof(b));
	T_EQ(hp_snapshot_load(&b, &sys, path, &e), 0);
	T_ASSERT(cJSON_Compare(a.root, b.root, 1));
	T_STREQ(hp_snap_cluster_name(&b), "c1");
	T_STREQ(hp_snap_orchestrator(&b), "Slurm");
	unlink(path);
	hp_snapshot_release(&a);
	hp_snapshot_release(&b);
}

static void t_save_error(void)
{
	struct hp_error e = HP_ERROR_INIT;
	struct hp_snapshot s;

	hp_snapshot_init(&s);
	T_EQ(hp_snapshot_save(&s, hp_sys_real(), "/nonexistent-hpnode-dir/snap.json", &e), -1);
	T_EQ(e.code, HP_ERR_FILE);
	T_CONTAINS(e.msg, "cannot write snapshot '/nonexistent-hpnode-dir/snap.json'");
	hp_snapshot_release(&s);
}

/* Each bad file: the error code and a piece of its message; s keeps its old root. */
static void t_load_errors(void)
{
	static const struct {
		const char *content;   /* NULL: the file does not exist */
		enum hp_err code;
		const char *msg;
	} cases[] = {
		{ "{\"version\": 1,", HP_ERR_PARSE, "is not valid JSON" },
		{ "", HP_ERR_PARSE, "is not valid JSON" },
		{ "[1, 2]", HP_ERR_PARSE, "is not a JSON object" },
		{ "{\"version\": 2}", HP_ERR_PARSE, "has version 2; this hpnode reads version 1" },
		{ "{\"cluster\": {}}", HP_ERR_PARSE, "has version none" },
		{ "{\"version\": \"1\"}", HP_ERR_PARSE, "has version not a number" },
		{ NULL, HP_ERR_FILE, "cannot read snapshot 'snap.json'" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake_sys f;
		struct hp_error e = HP_ERROR_INIT;
		struct hp_snapshot s;
		const cJSON *before;

		fake_sys_init(&f);
		if (cases[i].content)
			fake_file(&f, "snap.json", cases[i].content);
		hp_snapshot_init(&s);
		before = s.root;
		T_EQ(hp_snapshot_load(&s, &f.sys, "snap.json", &e), -1);
		T_EQ(e.code, cases[i].code);
		T_CONTAINS(e.msg, cases[i].msg);
		T_ASSERT(s.root == before);
		hp_snapshot_release(&s);
		fake_sys_release(&f);
	}
}

static int too_big(struct hp_sys *sys, const char *path, struct hp_buf *out)
{
	(void)sys;
	(void)path;
	(void)out;
	errno = EFBIG;
	return -1;
}

static void t_load_too_big(void)
{
	struct hp_error e = HP_ERROR_INIT;
	struct hp_sys sys = ck_disk_sys();
	struct hp_snapshot s = { NULL, NULL };

	sys.read_file = too_big;
	T_EQ(hp_snapshot_load(&s, &sys, "huge.json", &e), -1);
	T_EQ(e.code, HP_ERR_FILE);
	T_CONTAINS(e.msg, "larger than 256 MB");
	T_ASSERT(s.root == NULL);
}

/* A fresh directory under /tmp for the real file tests. */
static void tmp_dir(char dir[64])
{
	snprintf(dir, 64, "/tmp/hpnode-files-XXXXXX");
	T_ASSERT(mkdtemp(dir) != NULL);
}

static int dir_entries(const char *dir)
{
	char cmd[128];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

static void rm_dir(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* Saved snapshots are 0600, replace an old file whole and leave no temporary file. */
static void t_save_private_atomic(void)
{
	char dir[64], path[128];
	struct hp_error e = HP_ERROR_INIT;
	struct hp_snapshot s;
	struct stat st;
	mode_t old = umask(022);
	FILE *fp;

	tmp_dir(dir);
	snprintf(path, sizeof(path), "%s/snap.json", dir);
	fp = fopen(path, "w");
	T_ASSERT(fp != NULL);
	fputs("old content that is longer than nothing", fp);
	fclose(fp);
	chmod(path, 0644);
	hp_snapshot_init(&s);
	T_EQ(hp_snapshot_save(&s, hp_sys_real(), path, &e), 0);
	umask(old);
	T_EQ(stat(path, &st), 0);
	T_EQ(st.st_mode & 0777, 0600);
	T_EQ(dir_entries(dir), 1);
	hp_snapshot_release(&s);
	s.root = NULL;
	T_EQ(hp_snapshot_load(&s, hp_sys_real(), path, &e), 0);
	hp_snapshot_release(&s);
	rm_dir(dir);
}

/* A symlink (even one to a harmless file) or a device is never written through. */
static void t_save_refuses_links_and_devices(void)
{
	char dir[64], path[128], target[128], buf[64] = "";
	struct hp_error e = HP_ERROR_INIT;
	struct hp_snapshot s;
	FILE *fp;

	tmp_dir(dir);
	snprintf(target, sizeof(target), "%s/victim", dir);
	snprintf(path, sizeof(path), "%s/snap.json", dir);
	fp = fopen(target, "w");
	T_ASSERT(fp != NULL);
	fputs("precious", fp);
	fclose(fp);
	T_EQ(symlink(target, path), 0);
	hp_snapshot_init(&s);
	T_EQ(hp_snapshot_save(&s, hp_sys_real(), path, &e), -1);
	T_EQ(e.code, HP_ERR_FILE);
	T_CONTAINS(e.msg, "is a symbolic link");
	fp = fopen(target, "r");
	T_ASSERT(fp != NULL);
	T_ASSERT(fgets(buf, sizeof(buf), fp) != NULL);
	fclose(fp);
	T_STREQ(buf, "precious");
	T_EQ(dir_entries(dir), 2);
	/* A dangling link: no file appears at its target either. */
	unlink(target);
	hp_error_clear(&e);
	T_EQ(hp_snapshot_save(&s, hp_sys_real(), path, &e), -1);
	T_ASSERT(access(target, F_OK) != 0);
	hp_error_clear(&e);
	T_EQ(hp_snapshot_save(&s, hp_sys_real(), "/dev/null", &e), -1);
	T_CONTAINS(e.msg, "not a regular file");
	hp_error_clear(&e);
	T_EQ(hp_snapshot_save(&s, hp_sys_real(), dir, &e), -1);
	hp_snapshot_release(&s);
	rm_dir(dir);
}

/* The save goes through hp_sys: one write of the whole document. */
static void t_save_through_sys(void)
{
	struct fake_sys f;
	struct hp_error e = HP_ERROR_INIT;
	struct hp_snapshot s;

	fake_sys_init(&f);
	hp_snapshot_init(&s);
	T_EQ(hp_snapshot_save(&s, &f.sys, "out.json", &e), 0);
	T_STREQ(f.written_path, "out.json");
	T_STREQ(f.written, "{\n\t\"version\":\t1\n}\n");
	hp_snapshot_release(&s);
	fake_sys_release(&f);
}

/*
 * Save and load through a fake hp_sys alone: the document travels through
 * write_file (mode 0600) and read_file, and each refusal the file system
 * can give (errno) becomes its message.
 */
static void t_round_trip_through_fake_sys(void)
{
	static const struct {
		int err;
		const char *msg;
	} refusals[] = {
		{ ELOOP, "cannot write snapshot 'snap.json': it is a symbolic link" },
		{ EINVAL, "cannot write snapshot 'snap.json': it exists and is not a regular file" },
		{ ENOSPC, "cannot write snapshot 'snap.json': No space left on device" },
	};
	struct fake_sys f;
	struct hp_error e = HP_ERROR_INIT;
	struct hp_snapshot a, b;
	size_t i;

	fake_sys_init(&f);
	hp_snapshot_init(&a);
	hp_snapshot_set(&a, "meta", cJSON_CreateObject());
	cJSON_AddStringToObject((cJSON *)hp_snapshot_get(&a, "meta"), "region", "eu-north-1");
	T_EQ(hp_snapshot_save(&a, &f.sys, "snap.json", &e), 0);
	T_EQ(f.nwrote, 1);
	T_EQ(f.wrote_mode[0], 0600);
	hp_snapshot_init(&b);
	T_EQ(hp_snapshot_load(&b, &f.sys, "snap.json", &e), 0);
	T_STREQ(hp_json_str(b.root, "meta.region"), "eu-north-1");
	T_EQ(hp_json_num(b.root, "version", 0), HP_SNAPSHOT_VERSION);
	hp_snapshot_release(&b);
	/* Nothing was written through the real file system. */
	T_ASSERT(access("snap.json", F_OK) != 0);
	for (i = 0; i < HP_ARRAY_LEN(refusals); i++) {
		struct hp_error e2 = HP_ERROR_INIT;

		f.write_errno = refusals[i].err;
		T_EQ(hp_snapshot_save(&a, &f.sys, "snap.json", &e2), -1);
		T_EQ(e2.code, HP_ERR_FILE);
		T_CONTAINS(e2.msg, refusals[i].msg);
	}
	/* A file the fake does not have is named. */
	hp_snapshot_init(&b);
	T_EQ(hp_snapshot_load(&b, &f.sys, "other.json", &e), -1);
	T_CONTAINS(e.msg, "cannot read snapshot 'other.json': No such file or directory");
	hp_snapshot_release(&b);
	hp_snapshot_release(&a);
	fake_sys_release(&f);
}

/* A FIFO, /dev/zero, a directory and a huge sparse file are refused at once. */
static void t_load_hostile_files(void)
{
	char dir[64], fifo[128], sparse[128];
	struct timespec t0, t1;
	const char *paths[4];
	size_t i;
	int fd;

	tmp_dir(dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(sparse, sizeof(sparse), "%s/sparse.json", dir);
	T_EQ(mkfifo(fifo, 0600), 0);
	fd = open(sparse, O_WRONLY | O_CREAT, 0600);
	T_ASSERT(fd >= 0);
	T_EQ(ftruncate(fd, (off_t)1 << 33), 0); /* 8 GiB of holes */
	close(fd);
	paths[0] = fifo;
	paths[1] = "/dev/zero";
	paths[2] = dir;
	paths[3] = sparse;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 4; i++) {
		struct hp_error e = HP_ERROR_INIT;
		struct hp_snapshot s = { NULL, NULL };

		T_EQ(hp_snapshot_load(&s, hp_sys_real(), paths[i], &e), -1);
		T_EQ(e.code, HP_ERR_FILE);
		T_CONTAINS(e.msg, i == 3 ? "is larger than 256 MB" :
				  i == 2 ? "Is a directory" : "not a regular file");
		T_ASSERT(s.root == NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Nothing was read: reading 256 MB of zeros took seconds. */
	T_ASSERT(t1.tv_sec - t0.tv_sec < 2);
	rm_dir(dir);
}

static void t_load_data_file(void)
{
	struct ck c;

	ck_load_file(&c, "healthy-eks.json");
	T_STREQ(hp_snap_cluster_name(&c.snap), "ml-cluster");
	T_STREQ(hp_snap_orchestrator(&c.snap), "EKS");
	ck_free(&c);
}

static void t_getters(void)
{
	static const struct {
		const char *json;
		const char *name, *arn, *id, *orch;
	} cases[] = {
		{ "{'cluster':{'ClusterName':'a','ClusterArn':'arn:aws:sagemaker:us-west-2:123456789012:"
		  "cluster/abc123def456','Orchestrator':{'Eks':{'ClusterArn':'x'}}}}",
		  "a", "arn:aws:sagemaker:us-west-2:123456789012:cluster/abc123def456", "abc123def456",
		  "EKS" },
		/* No Orchestrator at all is Slurm (older Slurm clusters omit it). */
		{ "{'cluster':{'ClusterArn':'arn:aws:sagemaker:us-west-2:1:cluster/ABC123DEF456'},"
		  "'meta':{'cluster_arg':'from-flag'}}",
		  "from-flag", "arn:aws:sagemaker:us-west-2:1:cluster/ABC123DEF456", "", "Slurm" },
		{ "{'cluster':{'ClusterArn':'arn:aws:sagemaker:r:1:cluster/abc123def45',"
		  "'Orchestrator':{'Slurm':{}}}}",
		  "", "arn:aws:sagemaker:r:1:cluster/abc123def45", "", "Slurm" },
		{ "{'cluster':{'ClusterArn':'arn:aws:sagemaker:r:1:cluster/abc123def4567'}}", "",
		  "arn:aws:sagemaker:r:1:cluster/abc123def4567", "", "Slurm" },
		{ "{'cluster':{'ClusterArn':'abc123def456'}}", "", "abc123def456", "", "Slurm" },
		{ "{'meta':{'cluster_arg':'only-arg'}}", "only-arg", "", "", "Unknown" },
		{ "{'cluster':'not an object'}", "", "", "", "Unknown" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ck c;
		char id[64];

		ck_load(&c, cases[i].json);
		T_STREQ(hp_snap_cluster_name(&c.snap), cases[i].name);
		T_STREQ(hp_snap_cluster_arn(&c.snap), cases[i].arn);
		hp_snap_cluster_id(&c.snap, id);
		T_STREQ(id, cases[i].id);
		T_STREQ(hp_snap_orchestrator(&c.snap), cases[i].orch);
		ck_free(&c);
	}
}

T_MAIN(T(t_init_has_version), T(t_set_replaces), T(t_add_call), T(t_round_trip),
       T(t_save_error), T(t_load_errors), T(t_load_too_big), T(t_load_data_file), T(t_getters),
       T(t_save_private_atomic), T(t_save_refuses_links_and_devices), T(t_save_through_sys),
       T(t_round_trip_through_fake_sys),
       T(t_load_hostile_files))
