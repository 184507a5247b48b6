/*
 * Runner for the unit-test harness in t.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/json.h"
#include "t.h"

jmp_buf t_jmp;
char t_why[1024];

int t_run(const char *file, const struct t_case *cases, size_t n, int argc, char **argv)
{
	/* volatile: these live across setjmp/longjmp. */
	const char *volatile base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	volatile int failed = 0;
	volatile size_t i;

	/* As main() does: cJSON allocates through xmalloc (include/hp/json.h). */
	hp_json_init();
	for (i = 0; i < n; i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name))
			continue;
		t_why[0] = '\0';
		if (!setjmp(t_jmp)) {
			cases[i].fn();
			printf("ok - %s: %s\n", base, cases[i].name);
		} else {
			printf("not ok - %s: %s: %s\n", base, cases[i].name, t_why);
			failed++;
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}

static void t_cat(FILE *out, const char *path)
{
	char line[4096];
	FILE *fp = fopen(path, "rb");

	if (!fp)
		T_FAILF("cannot open %s", path);
	while (fgets(line, sizeof(line), fp)) {
		if (!strcmp(line, "#@include frame.sh\n"))
			t_cat(out, "src/collect/probe/frame.sh");
		else
			fputs(line, out);
	}
	fclose(fp);
}

char *t_probe_script(const char *name)
{
	char path[256], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (!out)
		T_FAILF("%s", "open_memstream failed");
	snprintf(path, sizeof(path), "src/collect/probe/%s", name);
	t_cat(out, path);
	fclose(out);
	return text;
}

char *t_data(const char *dir, const char *name, size_t *len)
{
	char path[512], *text;
	FILE *fp;
	long n;

	snprintf(path, sizeof(path), "tests/data/%s/%s", dir, name);
	fp = fopen(path, "rb");
	if (!fp)
		T_FAILF("cannot open %s", path);
	if (fseek(fp, 0, SEEK_END) || (n = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET))
		T_FAILF("cannot size %s", path);
	text = malloc((size_t)n + 1);
	if (!text || fread(text, 1, (size_t)n, fp) != (size_t)n)
		T_FAILF("cannot read %s", path);
	text[n] = '\0';
	fclose(fp);
	if (len)
		*len = (size_t)n;
	return text;
}
