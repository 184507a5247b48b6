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
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/snapshot.h"
#include "checks-t.h"
#include "probe-t.h"
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
/* A replayed node list is held to the collector's: each id once (named), at most the cap. */
static void t_load_dedups_nodes(void)
{
	struct fake_sys f;
	struct hp_error e = HP_ERROR_INIT;
	struct hp_snapshot s;

	fake_sys_init(&f);
	fake_file(&f, "snap.json", "{\"version\": 1, \"nodes\": [{\"InstanceId\": \"i-1\"}, "
		  "{\"InstanceId\": \"i-2\"}, {\"InstanceId\": \"i-1\"}], \"nodes_truncated\": false}");
	hp_snapshot_init(&s);
	T_EQ(hp_snapshot_load(&s, &f.sys, "snap.json", &e), 0);
	T_EQ(cJSON_GetArraySize(hp_snapshot_get(&s, "nodes")), 2);
	T_STREQ(cJSON_GetArrayItem(hp_snapshot_get(&s, "nodes_duplicates"), 0)->valuestring, "i-1");
	T_ASSERT(cJSON_IsFalse(hp_snapshot_get(&s, "nodes_truncated")));
	hp_snapshot_release(&s);
	fake_sys_release(&f);
}

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
		{ "{\"version\": 1} {\"version\": 1}", HP_ERR_PARSE, "is not valid JSON (near byte 15)" },
		{ "{\"version\": 1}\n\ngarbage", HP_ERR_PARSE, "is not valid JSON (near byte 16)" },
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

static struct hp_file_in *too_big(struct hp_sys *sys, const char *path, uint64_t max)
{
	(void)sys;
	(void)path;
	(void)max;
	errno = EFBIG;
	return NULL;
}

static void t_load_too_big(void)
{
	struct hp_error e = HP_ERROR_INIT;
	struct hp_sys sys = ck_disk_sys();
	struct hp_snapshot s = { NULL, NULL, NULL };

	sys.open_read = too_big;
	T_EQ(hp_snapshot_load(&s, &sys, "huge.json", &e), -1);
	T_EQ(e.code, HP_ERR_FILE);
	T_CONTAINS(e.msg, "larger than 4096 MB");
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

/* "-" is standard input: the same document read from the pipe, a terminal refused, errors named <stdin>. */
static void t_load_stdin(void)
{
	struct fake_sys f;
	struct hp_error e = HP_ERROR_INIT, e2 = HP_ERROR_INIT;
	struct hp_snapshot s;

	fake_sys_init(&f);
	f.read_chunk = 7;
	f.stdin_text = "{\"version\": 1, \"meta\": {\"region\": \"ap-south-1\"}}\n";
	hp_snapshot_init(&s);
	T_EQ(hp_snapshot_load(&s, &f.sys, "-", &e), 0);
	T_STREQ(hp_json_str(s.root, "meta.region"), "ap-south-1");
	T_EQ(HP_SNAPSHOT_VERSION, 1);
	hp_snapshot_release(&s);
	/* A file called "-" is never opened for it. */
	T_EQ(f.opened_read, 0);
	f.stdin_text = "{\"version\": ";
	hp_snapshot_init(&s);
	T_EQ(hp_snapshot_load(&s, &f.sys, "-", &e), -1);
	T_CONTAINS(e.msg, "snapshot '<stdin>' is not valid JSON");
	hp_snapshot_release(&s);
	f.stdin_text = NULL;
	hp_snapshot_init(&s);
	T_EQ(hp_snapshot_load(&s, &f.sys, "-", &e2), -1);
	T_CONTAINS(e2.msg, "standard input is a terminal");
	hp_snapshot_release(&s);
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
		struct hp_snapshot s = { NULL, NULL, NULL };

		T_EQ(hp_snapshot_load(&s, hp_sys_real(), paths[i], &e), -1);
		T_EQ(e.code, HP_ERR_FILE);
		T_CONTAINS(e.msg, i == 3 ? "is larger than 4096 MB" :
				  i == 2 ? "Is a directory" : "not a regular file");
		T_ASSERT(s.root == NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Nothing was read: reading gigabytes of zeros would take seconds. */
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


/* Without a sweep streamed, the file is the document as cJSON_Print writes it. */
static void t_save_is_cjson_print(void)
{
	struct fake_sys f;
	struct hp_error e = HP_ERROR_INIT;
	struct hp_snapshot s;
	char *text, *want;

	fake_sys_init(&f);
	hp_snapshot_init(&s);
	hp_snapshot_set(&s, "meta", cJSON_Parse("{\"region\":\"eu-north-1\",\"n\":[1,2,{\"x\":[]}],"
						"\"empty\":{},\"s\":\"a\\\"b\\n\\u0001\\u00e9\"}"));
	hp_snapshot_set(&s, "nodes", cJSON_Parse("[{\"InstanceId\":\"i-1\"},{}]"));
	hp_snapshot_set(&s, "probes", cJSON_Parse("{\"i-1\":{\"state\":\"probed\",\"stdout\":\"x\\ty\"}}"));
	T_EQ(hp_snapshot_save(&s, &f.sys, "out.json", &e), 0);
	text = cJSON_Print(s.root);
	want = xasprintf("%s\n", text);
	T_STREQ(f.written, want);
	free(text);
	free(want);
	hp_snapshot_release(&s);
	fake_sys_release(&f);
}

/* Three nodes' entries as a sweep ends them: in the store, and streamed with their output. */
static void sweep_three(struct hp_snapshot *s, const char *out, const char *err)
{
	static const char *const done[] = { "i-c", "i-a", "i-b" }, *const chosen[] = { "i-a", "i-b", "i-c" };
	size_t i;

	for (i = 0; i < 3; i++) {
		cJSON *e = cJSON_CreateObject();

		cJSON_AddStringToObject(e, "state", "probed");
		cJSON_AddStringToObject(e, "reason", "");
		cJSON_AddNumberToObject(e, "exit_code", 0);
		cJSON_AddStringToObject(e, "stdout", "");
		cJSON_AddStringToObject(e, "stderr", err);
		cJSON_AddBoolToObject(e, "truncated", 0);
		cJSON_AddNumberToObject(e, "duration_ms", 1000 + (double)i);
		hp_snapshot_stream_entry(s, "probes", done[i], e, out, strlen(out), err, strlen(err));
		hp_probes_add(s, "probes", done[i], e, hp_probe_parse(out, strlen(out)));
		cJSON_Delete(e);
	}
	hp_probes_order(s, "probes", chosen, 3);
	hp_snapshot_stream_end(s, "probes");
}

/* One line per finding, for comparing two runs of the checks. */
static char *findings_of(struct hp_snapshot *s)
{
	struct hp_findings f = { 0 };
	struct hp_buf b = HP_BUF_INIT((size_t)16 << 20);
	size_t i;

	hp_facts_prepare(s);
	hp_checks_run(s, &f);
	for (i = 0; i < f.n; i++) {
		const cJSON *x;

		hp_buf_printf(&b, "%s %d %s %s\n", f.v[i].check->id, f.v[i].tag,
			      f.v[i].node ? f.v[i].node : "-", f.v[i].message);
		cJSON_ArrayForEach(x, f.v[i].evidence)
			hp_buf_printf(&b, "  %s\n", x->valuestring);
	}
	hp_findings_release(&f);
	return hp_buf_detach(&b, NULL);
}

/*
 * A sweep saved as it runs: valid JSON, the raw output in the file and not
 * in memory, entries in the order they ended and probes_order in the order
 * chosen; read back in small pieces it gives the store (in the chosen
 * order) and the findings of the live snapshot.
 */
static void t_stream_save_and_replay(void)
{
	char *probe = pt_file("probe-debian-vm.txt"), *out, *live, *replayed;
	const char *err = "sh: \"quoted\" \\ back\nslash\t\x01 caf\xC3\xA9";
	struct fake_sys f;
	struct hp_error e = HP_ERROR_INIT;
	struct hp_snapshot s, r;
	struct hp_facts_counts n;
	struct hp_probe_iter it;
	const cJSON *x, *ent;
	cJSON *doc;
	size_t k = 0;

	/* A large output: the file is written in several pieces. */
	out = xasprintf("%s%0200000d\n", probe, 0);
	fake_sys_init(&f);
	hp_snapshot_init(&s);
	hp_snapshot_set(&s, "meta", cJSON_Parse("{\"region\":\"us-west-2\"}"));
	T_EQ(hp_snapshot_stream_open(&s, &f.sys, "snap.json", &e), 0);
	T_ASSERT(hp_snapshot_streaming(&s));
	sweep_three(&s, out, err);
	hp_snapshot_set(&s, "probes_meta", cJSON_Parse("{\"probed\":3}"));
	live = findings_of(&s);
	/* The entries in memory hold no output. */
	for (x = hp_probes_first(&s, "probes", &it); x; x = hp_probes_next(&it))
		T_ASSERT(!cJSON_GetObjectItem(x, "stdout"));
	T_EQ(hp_snapshot_save(&s, &f.sys, "other-name-unused.json", &e), 0);
	T_ASSERT(!hp_snapshot_streaming(&s));
	T_STREQ(f.written_path, "snap.json");
	T_EQ(f.wrote_mode[0], 0600);
	T_ASSERT(f.pieces_written > 3);
	doc = cJSON_Parse(f.written);
	T_ASSERT(doc);
	T_STREQ(doc->child->string, "version");
	cJSON_ArrayForEach(ent, cJSON_GetObjectItem(doc, "probes")) {
		static const char *const done[] = { "i-c", "i-a", "i-b" };

		T_STREQ(ent->string, done[k]);
		T_STREQ(hp_json_str(ent, "stdout"), out);
		T_STREQ(hp_json_str(ent, "stderr"), err);
		T_EQ(hp_json_num(ent, "duration_ms", 0), 1000 + k);
		k++;
	}
	T_EQ(k, 3);
	T_STREQ(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "probes_order"), 0)->valuestring, "i-a");
	T_STREQ(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "probes_order"), 2)->valuestring, "i-c");
	T_EQ(hp_json_num(doc, "probes_meta.probed", 0), 3);
	T_STREQ(hp_json_str(doc, "meta.region"), "us-west-2");
	cJSON_Delete(doc);

	/* Read back seven bytes at a time. */
	f.read_chunk = 7;
	hp_snapshot_init(&r);
	T_EQ(hp_snapshot_load(&r, &f.sys, "snap.json", &e), 0);
	T_ASSERT(hp_snapshot_get(&r, "probes_order") == NULL);
	T_ASSERT(hp_snapshot_get(&r, "probes") == NULL);
	T_EQ(hp_probes_count(&r, "probes"), 3);
	k = 0;
	for (x = hp_probes_first(&r, "probes", &it); x; x = hp_probes_next(&it)) {
		static const char *const chosen[] = { "i-a", "i-b", "i-c" };
		cJSON *facts = hp_probes_facts(&it);

		T_STREQ(x->string, chosen[k]);
		T_ASSERT(!cJSON_GetObjectItem(x, "stdout"));
		T_STREQ(hp_json_str(x, "stderr"), err);
		T_STREQ(hp_json_str(facts, "node.hostname"), "vm");
		cJSON_Delete(facts);
		k++;
	}
	T_EQ(k, 3);
	/* Decoded once each while reading. */
	hp_facts_counts(&r, &n);
	T_EQ(n.probe, 3);
	replayed = findings_of(&r);
	T_STREQ(replayed, live);
	hp_facts_counts(&r, &n);
	T_EQ(n.probe, 3);
	free(live);
	free(replayed);
	hp_snapshot_release(&r);
	hp_snapshot_release(&s);
	fake_sys_release(&f);
	free(out);
	free(probe);
}

/* A stream given up (or a snapshot released with one open) leaves no file; write errors surface at save. */
static void t_stream_abort_and_errors(void)
{
	struct fake_sys f;
	struct hp_error e = HP_ERROR_INIT;
	struct hp_snapshot s;

	fake_sys_init(&f);
	hp_snapshot_init(&s);
	T_EQ(hp_snapshot_stream_open(&s, &f.sys, "snap.json", &e), 0);
	sweep_three(&s, "@@HP@@ DONE\n", "");
	hp_snapshot_stream_abort(&s);
	T_EQ(f.nwrote, 0);
	T_EQ(f.aborted, 1);
	T_EQ(hp_snapshot_stream_open(&s, &f.sys, "snap.json", &e), 0);
	hp_snapshot_release(&s);
	T_EQ(f.nwrote, 0);
	T_EQ(f.aborted, 2);
	/* The disk fills during the sweep: the save says so, and nothing appears. */
	hp_snapshot_init(&s);
	T_EQ(hp_snapshot_stream_open(&s, &f.sys, "snap.json", &e), 0);
	f.write_errno = ENOSPC;
	sweep_three(&s, "@@HP@@ DONE\n", "");
	T_EQ(hp_snapshot_save(&s, &f.sys, "snap.json", &e), -1);
	T_CONTAINS(e.msg, "cannot write snapshot 'snap.json': No space left on device");
	T_EQ(f.nwrote, 0);
	/* A refused path is refused when the stream opens, before anything is collected. */
	hp_error_clear(&e);
	T_EQ(hp_snapshot_stream_open(&s, &f.sys, "snap.json", &e), -1);
	T_CONTAINS(e.msg, "cannot write snapshot 'snap.json': No space left on device");
	T_ASSERT(!hp_snapshot_streaming(&s));
	hp_snapshot_release(&s);
	fake_sys_release(&f);
}

/* A file of many large entries is read with a window of about one entry, not the file. */
static void t_load_window_is_one_entry(void)
{
	struct hp_buf file = HP_BUF_INIT((size_t)64 << 20);
	struct fake_sys f;
	struct hp_error e = HP_ERROR_INIT;
	struct hp_snapshot s;
	char *big = xmalloc(100001);
	int i;

	memset(big, 'a', 100000);
	big[100000] = '\0';
	hp_buf_puts(&file, "{\"version\":1,\"probes\":{");
	for (i = 0; i < 200; i++)
		hp_buf_printf(&file, "%s\"i-%04d\":{\"state\":\"probed\",\"stdout\":\"%s\"}", i ? "," : "",
			      i, big);
	hp_buf_puts(&file, "}}");
	fake_sys_init(&f);
	fake_file(&f, "big.json", file.buf);
	hp_snapshot_init(&s);
	T_EQ(hp_snapshot_load(&s, &f.sys, "big.json", &e), 0);
	T_EQ(hp_probes_count(&s, "probes"), 200);
	/* 20 MB of file, read through a window of one entry and a read ahead. */
	T_ASSERT(file.len > 20000000);
	T_ASSERT(hp_snapshot_load_window() < 400000);
	hp_snapshot_release(&s);

	/* An entry over HP_SNAPSHOT_MAX_ENTRY is refused by name; s keeps what it had. */
	hp_buf_reset(&file);
	hp_buf_puts(&file, "{\"version\":1,\"probes\":{\"i-huge\":{\"stdout\":\"");
	for (i = 0; i < 170; i++)
		hp_buf_puts(&file, big);
	hp_buf_puts(&file, "\"}}}");
	fake_file(&f, "huge.json", file.buf);
	hp_snapshot_init(&s);
	hp_snapshot_set(&s, "note", cJSON_CreateString("before"));
	T_EQ(hp_snapshot_load(&s, &f.sys, "huge.json", &e), -1);
	T_EQ(e.code, HP_ERR_PARSE);
	T_CONTAINS(e.msg, "its probes entry 'i-huge' is larger than 16 MB");
	T_STREQ(hp_json_str(s.root, "note"), "before");
	T_ASSERT(hp_snapshot_load_window() < ((size_t)20 << 20));
	hp_snapshot_release(&s);
	fake_sys_release(&f);
	hp_buf_release(&file);
	free(big);
}

/* What the document reader did with odd sweeps, the node-by-node reader does too. */
static void t_load_odd_sweeps(void)
{
	static const struct {
		const char *json;
		const char *ids;       /* the entries in the order readers see them */
	} cases[] = {
		/* A repeated member: the first one counts. */
		{ "{'version':1,'probes':{'i-a':{},'i-b':{}},'probes':{'i-z':{}}}", "i-a i-b" },
		{ "{'version':1,'probes':'x','probes':{'i-z':{}}}", "" },
		/* Entries that are not objects are still entries; repeated ids too. */
		{ "{'version':1,'probes':{'i-a':5,'i-b':{},'i-a':{'state':'probed'}}}", "i-a i-b i-a" },
		/* The order list: named ids first (junk and unknown ones skipped), the rest after. */
		{ "{'version':1,'probes_order':[5,'i-x','i-c','i-c','i-a'],'probes':{'i-a':{},'i-b':{},"
		  "'i-c':{}}}", "i-c i-a i-b" },
		{ "{'version':1,'probes':{'i-a':{},'i-b':{}},'probes_order':'not a list'}", "i-a i-b" },
		/* Whitespace may follow the document (anything else is refused: t_load_errors). */
		{ "{'version':1,'probes':{'i-a':{}}} \n\t\r\n", "i-a" },
		{ "{'version':1,'probes':{}}", "" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct fake_sys f;
		struct hp_error e = HP_ERROR_INIT;
		struct hp_snapshot s;
		struct hp_probe_iter it;
		struct hp_buf ids = HP_BUF_INIT(4096);
		char *json = xstrdup(cases[i].json), *p;
		const cJSON *x;

		for (p = json; *p; p++)
			if (*p == '\'')
				*p = '"';
		fake_sys_init(&f);
		f.read_chunk = 3;
		fake_file(&f, "odd.json", json);
		hp_snapshot_init(&s);
		if (hp_snapshot_load(&s, &f.sys, "odd.json", &e))
			T_FAILF("case %zu: %s", i, e.msg);
		for (x = hp_probes_first(&s, "probes", &it); x; x = hp_probes_next(&it))
			hp_buf_printf(&ids, "%s%s", ids.len ? " " : "", x->string ? x->string : "?");
		if (strcmp(ids.buf, cases[i].ids))
			T_FAILF("case %zu: entries '%s', expected '%s'", i, ids.buf, cases[i].ids);
		hp_buf_release(&ids);
		hp_snapshot_release(&s);
		fake_sys_release(&f);
		free(json);
	}
}

/* Cut anywhere, a saved sweep is refused as not JSON and replaces nothing. */
static void t_load_cut_files(void)
{
	struct fake_sys f;
	struct hp_error e = HP_ERROR_INIT;
	struct hp_snapshot s;
	char *text;
	size_t len, cut;

	fake_sys_init(&f);
	hp_snapshot_init(&s);
	T_EQ(hp_snapshot_stream_open(&s, &f.sys, "snap.json", &e), 0);
	sweep_three(&s, "@@HP@@ BEGIN node\nhostname=x\n@@HP@@ END node 0\n@@HP@@ DONE\n", "e");
	T_EQ(hp_snapshot_save(&s, &f.sys, "snap.json", &e), 0);
	hp_snapshot_release(&s);
	text = xstrdup(f.written);
	len = strlen(text);
	for (cut = 0; cut + 2 < len; cut += 1 + cut / 8) {
		struct fake_sys g;
		char *part = xstrndup(text, cut);

		fake_sys_init(&g);
		g.read_chunk = 1 + cut % 5;
		fake_file(&g, "cut.json", part);
		hp_snapshot_init(&s);
		hp_error_clear(&e);
		if (!hp_snapshot_load(&s, &g.sys, "cut.json", &e))
			T_FAILF("a file cut at byte %zu of %zu loaded", cut, len);
		T_CONTAINS(e.msg, "is not valid JSON");
		T_EQ(cJSON_GetArraySize(s.root), 1);
		hp_snapshot_release(&s);
		fake_sys_release(&g);
		free(part);
	}
	free(text);
	fake_sys_release(&f);
}

T_MAIN(T(t_load_dedups_nodes), T(t_init_has_version), T(t_set_replaces), T(t_add_call), T(t_round_trip),
       T(t_save_error), T(t_load_errors), T(t_load_too_big), T(t_load_data_file), T(t_getters),
       T(t_save_private_atomic), T(t_save_refuses_links_and_devices), T(t_save_through_sys),
       T(t_round_trip_through_fake_sys), T(t_load_stdin),
       T(t_load_hostile_files), T(t_save_is_cjson_print), T(t_stream_save_and_replay),
       T(t_stream_abort_and_errors), T(t_load_window_is_one_entry), T(t_load_odd_sweeps),
       T(t_load_cut_files))
