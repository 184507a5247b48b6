/*
 * The command table of src/cli/main.c and the frame around it, in the
 * spirit of git's t0012-help: the table is sorted and has no name twice,
 * every row's flags make sense together, and for every command `--help`
 * and `hpnode help CMD` work, name every option the command accepts and
 * no option it lacks, and an unknown option is a usage error.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake-sys.h"
#include "hp/cmd.h"
#include "hp/err.h"
#include "t.h"

#define MAX_OPTS 64

static char out_text[1 << 16], err_text[1 << 14];

static void slurp(int fd, char *buf, size_t n)
{
	ssize_t got;
	size_t len = 0;

	lseek(fd, 0, SEEK_SET);
	while (len < n - 1 && (got = read(fd, buf + len, n - 1 - len)) > 0)
		len += (size_t)got;
	buf[len] = '\0';
	close(fd);
}

/* `hpnode a b c` with a fake sys; stdout and stderr into out_text, err_text. */
static int hpnode(const char *a, const char *b, const char *c)
{
	char opath[] = "/tmp/hpnode-cli-XXXXXX", epath[] = "/tmp/hpnode-cli-XXXXXX";
	char *argv[5] = { NULL };
	int ofd = mkstemp(opath), efd = mkstemp(epath), so, se, rc, argc = 1;
	struct fake_sys f;

	T_ASSERT(ofd >= 0 && efd >= 0);
	unlink(opath);
	unlink(epath);
	argv[0] = strdup("hpnode");
	if (a)
		argv[argc++] = strdup(a);
	if (b)
		argv[argc++] = strdup(b);
	if (c)
		argv[argc++] = strdup(c);
	fake_sys_init(&f);
	fflush(stdout);
	fflush(stderr);
	so = dup(1);
	se = dup(2);
	dup2(ofd, 1);
	dup2(efd, 2);
	rc = hp_main(argc, argv, &f.sys);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	slurp(ofd, out_text, sizeof(out_text));
	slurp(efd, err_text, sizeof(err_text));
	while (argc--)
		free(argv[argc]);
	/* No command may reach for the outside world to print its help. */
	T_EQ(f.nreq, 0);
	T_ASSERT(f.run_argv0 == NULL);
	fake_sys_release(&f);
	return rc;
}

static void t_table_sorted_and_unique(void)
{
	size_t i;

	T_ASSERT(hp_ncommands > 0);
	for (i = 1; i < hp_ncommands; i++)
		if (strcmp(hp_commands[i - 1].name, hp_commands[i].name) >= 0)
			T_FAILF("'%s' comes before '%s': keep the table sorted, each name once",
				hp_commands[i - 1].name, hp_commands[i].name);
}

static void t_flags_fit_together(void)
{
	size_t i;

	for (i = 0; i < hp_ncommands; i++) {
		const struct hp_cmd *c = &hp_commands[i];
		unsigned f = c->flags;
		int aws = !!(f & HP_CMD_NEED_AWS), local = !!(f & HP_CMD_LOCAL_ONLY);

		if (aws == local)
			T_FAILF("%s: exactly one of HP_CMD_NEED_AWS and HP_CMD_LOCAL_ONLY", c->name);
		if ((f & HP_CMD_NEED_CLUSTER) && !aws)
			T_FAILF("%s: HP_CMD_NEED_CLUSTER without HP_CMD_NEED_AWS", c->name);
		if ((f & HP_CMD_SNAPSHOT) && !(f & HP_CMD_REPORT))
			T_FAILF("%s: HP_CMD_SNAPSHOT without HP_CMD_REPORT", c->name);
		/*
		 * watch runs the report frame's rounds itself: collect() and run();
		 * fleet writes its own report of many clusters with the report
		 * options: run() only.
		 */
		if (!strcmp(c->name, "fleet") ? !c->ops->run || c->ops->collect || !(f & HP_CMD_REPORT) :
		    (f & HP_CMD_REPORT) ? !c->ops->collect || (c->ops->run && strcmp(c->name, "watch"))
					: !c->ops->run || c->ops->collect)
			T_FAILF("%s: a report command has collect(), any other run()", c->name);
		if (!c->ops->usage || !c->summary || !*c->summary)
			T_FAILF("%s: no usage text or summary", c->name);
	}
}

/* `hpnode --help` lists every command, in table order. */
static void t_main_help_lists_commands(void)
{
	const char *at = out_text;
	size_t i;

	T_EQ(hpnode("--help", NULL, NULL), HP_EXIT_OK);
	for (i = 0; i < hp_ncommands; i++) {
		char line[64];

		snprintf(line, sizeof(line), "\n  %-10s ", hp_commands[i].name);
		at = strstr(at, line);
		if (!at)
			T_FAILF("hpnode --help does not list '%s' in order", hp_commands[i].name);
	}
}

/* Whether "--name" appears in text as a whole option word. */
static int names_option(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text;

	while ((p = strstr(p, "--"))) {
		if (!strncmp(p + 2, name, n) && !(isalnum((unsigned char)p[2 + n]) || p[2 + n] == '-'))
			return 1;
		p += 2;
	}
	return 0;
}

static void t_help_names_every_option(void)
{
	size_t i, k;

	for (i = 0; i < hp_ncommands; i++) {
		const struct hp_cmd *c = &hp_commands[i];
		const char *names[MAX_OPTS];
		size_t n = hp_cmd_option_names(c, names, MAX_OPTS);
		char usage_line[64], help[sizeof(out_text)];
		const char *p;

		T_ASSERT(n <= MAX_OPTS);
		if (hpnode(c->name, "--help", NULL) != HP_EXIT_OK)
			T_FAILF("hpnode %s --help: exit status not 0: %.200s", c->name, err_text);
		snprintf(usage_line, sizeof(usage_line), "usage: hpnode %s", c->name);
		if (strncmp(out_text, usage_line, strlen(usage_line)))
			T_FAILF("hpnode %s --help does not start with '%s'", c->name, usage_line);
		T_CONTAINS(out_text, "Exit status");
		if (err_text[0])
			T_FAILF("hpnode %s --help wrote to stderr: %.200s", c->name, err_text);
		for (k = 0; k < n; k++)
			if (!names_option(out_text, names[k]))
				T_FAILF("hpnode %s --help does not name --%s", c->name, names[k]);
		/* And every option it names is one it takes. */
		for (p = out_text; (p = strstr(p, "--")); p += 2) {
			char word[48];
			size_t len = 0;

			while (len < sizeof(word) - 1 && (islower((unsigned char)p[2 + len]) ||
							 p[2 + len] == '-'))
				word[len] = p[2 + len], len++;
			word[len] = '\0';
			if (!len)
				continue;
			for (k = 0; k < n && strcmp(names[k], word); k++)
				;
			if (k == n)
				T_FAILF("hpnode %s --help names --%s, which it does not take", c->name, word);
		}
		/* `hpnode help CMD` prints the same. */
		memcpy(help, out_text, sizeof(help));
		T_EQ(hpnode("help", c->name, NULL), HP_EXIT_OK);
		if (strcmp(out_text, help))
			T_FAILF("hpnode help %s differs from hpnode %s --help", c->name, c->name);
	}
}

static void t_unknown_option_is_usage(void)
{
	size_t i;

	for (i = 0; i < hp_ncommands; i++) {
		char hint[96];

		T_EQ(hpnode(hp_commands[i].name, "--no-such-option", NULL), HP_EXIT_USAGE);
		T_EQ(out_text[0], '\0');
		T_CONTAINS(err_text, "unknown option '--no-such-option'");
		snprintf(hint, sizeof(hint), "Run 'hpnode %s --help' for usage.", hp_commands[i].name);
		T_CONTAINS(err_text, hint);
	}
	T_EQ(hpnode("no-such-command", NULL, NULL), HP_EXIT_USAGE);
	T_CONTAINS(err_text, "unknown command 'no-such-command'");
	T_EQ(hpnode("help", "no-such-command", NULL), HP_EXIT_USAGE);
}

/* Whether the command's own table has option name. */
static int own_option(const struct hp_cmd *c, const char *name)
{
	const struct hp_opt *o;

	for (o = c->ops->options; o && o->name; o++)
		if (!strcmp(o->name, name))
			return 1;
	return 0;
}

/* A near miss names what was meant; shared options may come before the command. */
static void t_did_you_mean_and_options_first(void)
{
	T_EQ(hpnode("triag", NULL, NULL), HP_EXIT_USAGE);
	T_CONTAINS(err_text, "unknown command 'triag' (did you mean 'triage'?)");
	T_EQ(hpnode("triage", "--outptu", "json"), HP_EXIT_USAGE);
	T_CONTAINS(err_text, "unknown option '--outptu' (did you mean --output?)");
	T_EQ(hpnode("triage", "--fail-onn=P1", NULL), HP_EXIT_USAGE);
	T_CONTAINS(err_text, "(did you mean --fail-on?)");
	T_EQ(hpnode("triage", "--zzzzzzzzzz", NULL), HP_EXIT_USAGE);
	T_NOT_CONTAINS(err_text, "did you mean");
	/* Before the command: handed to the command (explain takes no --debug, and says so). */
	T_EQ(hpnode("--debug", "explain", NULL), HP_EXIT_USAGE);
	T_CONTAINS(err_text, "hpnode explain: unknown option '--debug'");
	T_EQ(hpnode("--region", "us-west-2", NULL), HP_EXIT_USAGE);
	T_CONTAINS(err_text, "options before the command need a command after them");
	T_EQ(hpnode("--region", "us-west-2", "--nosuch"), HP_EXIT_USAGE);
	T_CONTAINS(err_text, "'--nosuch' before the command");
}

/* Which shared options a row gets follows from its flags alone. */
static void t_shared_options_follow_flags(void)
{
	size_t i, k;

	for (i = 0; i < hp_ncommands; i++) {
		const struct hp_cmd *c = &hp_commands[i];
		const char *names[MAX_OPTS];
		size_t n = hp_cmd_option_names(c, names, MAX_OPTS);
		int region = 0, output = 0, snapshot = 0, cluster = 0, help = 0;

		for (k = 0; k < n; k++) {
			region |= !strcmp(names[k], "region");
			output |= !strcmp(names[k], "output");
			snapshot |= !strcmp(names[k], "snapshot");
			cluster |= !strcmp(names[k], "cluster");
			help |= !strcmp(names[k], "help");
		}
		T_EQ(help, 1);
		T_EQ(region, !!(c->flags & HP_CMD_NEED_AWS));
		/* A command without a report may name its own --output (diff's format). */
		if (!own_option(c, "output"))
			T_EQ(output, !!(c->flags & HP_CMD_REPORT));
		T_EQ(snapshot, !!(c->flags & HP_CMD_SNAPSHOT));
		if (c->flags & HP_CMD_NEED_CLUSTER)
			T_EQ(cluster, 1);
	}
}

/* hpnode fleet's and watch's own options: bad values are usage errors before any AWS call. */
static void t_fleet_and_watch_usage(void)
{
	T_EQ(hpnode("fleet", "--regions", "us-west-2,"), HP_EXIT_USAGE);
	T_ASSERT(strstr(err_text, "must not end with a comma") != NULL);
	T_EQ(hpnode("fleet", "--regions", "us-west-2,,eu-west-1"), HP_EXIT_USAGE);
	T_ASSERT(strstr(err_text, "separated by commas") != NULL);
	T_EQ(hpnode("fleet", "--regions", "us-west-2,Moon-1"), HP_EXIT_USAGE);
	T_ASSERT(strstr(err_text, "'Moon-1' is not a region name") != NULL);
	T_EQ(hpnode("fleet", "--regions", ""), HP_EXIT_USAGE);
	T_EQ(hpnode("fleet", "--parallel", "17"), HP_EXIT_USAGE);
	T_ASSERT(strstr(err_text, "--parallel must be a whole number from 1 to 16") != NULL);
	T_EQ(hpnode("fleet", "--output", "junit"), HP_EXIT_USAGE);
	T_ASSERT(strstr(err_text, "no JUnit") != NULL);
	T_EQ(hpnode("fleet", "--summary", NULL), HP_EXIT_USAGE);
	T_EQ(hpnode("watch", "--probe-share", "0"), HP_EXIT_USAGE);
	T_ASSERT(strstr(err_text, "--probe-share must be a whole number") != NULL);
}

T_MAIN(T(t_table_sorted_and_unique), T(t_fleet_and_watch_usage), T(t_flags_fit_together), T(t_main_help_lists_commands),
       T(t_help_names_every_option), T(t_unknown_option_is_usage), T(t_did_you_mean_and_options_first), T(t_shared_options_follow_flags))
