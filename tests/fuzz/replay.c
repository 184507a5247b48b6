/*
 * Corpus replay: feeds every file of tests/fuzz/corpus/<target>/ (or the
 * files and directories named on the command line) to the target's
 * LLVMFuzzerTestOneInput once, printing one "ok - " line per input. Built
 * by any compiler, so the ordinary and the sanitizer test runs keep every
 * input that once crashed a fuzzer fixed. A crash or a failed oracle
 * aborts the program; the test runner reports its exit status.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#ifndef HP_FUZZ_CORPUS
#define HP_FUZZ_CORPUS "tests/fuzz/corpus"
#endif

static int failures;

static void replay_file(const char *name, const char *path)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t len = 0, cap = 0, n;

	if (!fp) {
		printf("not ok - %s %s: %s\n", name, path, strerror(errno));
		failures++;
		return;
	}
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			data = realloc(data, cap);
			if (!data)
				abort();
		}
		n = fread(data + len, 1, cap - len, fp);
		if (!n)
			break;
		len += n;
	}
	fclose(fp);
	/* The fuzzer hands over a buffer of exactly len bytes; so does this. */
	{
		uint8_t *exact = malloc(len ? len : 1);

		if (!exact)
			abort();
		memcpy(exact, data, len);
		free(data);
		fflush(stdout);
		LLVMFuzzerTestOneInput(exact, len);
		free(exact);
	}
	printf("ok - %s %s\n", name, strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void replay_path(const char *name, const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, i;

	if (stat(path, &st) < 0) {
		printf("not ok - %s %s: %s\n", name, path, strerror(errno));
		failures++;
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		replay_file(name, path);
		return;
	}
	d = opendir(path);
	if (!d) {
		printf("not ok - %s %s: %s\n", name, path, strerror(errno));
		failures++;
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		if (!names)
			abort();
		names[n] = malloc(strlen(path) + strlen(de->d_name) + 2);
		if (!names[n])
			abort();
		sprintf(names[n], "%s/%s", path, de->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	else {
		printf("not ok - %s %s: empty corpus\n", name, path);
		failures++;
	}
	for (i = 0; i < n; i++) {
		replay_file(name, names[i]);
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	const char *target = base;
	char name[256], dir[1024];
	int i;

	LLVMFuzzerInitialize(&argc, &argv);
	/* The binary is test-fuzz-<target>; its corpus is corpus/<target>. */
	if (!strncmp(target, "test-fuzz-", 10))
		target += 10;
	snprintf(name, sizeof(name), "fuzz-%s", target);
	if (argc > 1) {
		for (i = 1; i < argc; i++)
			replay_path(name, argv[i]);
	} else {
		snprintf(dir, sizeof(dir), "%s/%s", HP_FUZZ_CORPUS, target);
		replay_path(name, dir);
	}
	return failures ? 1 : 0;
}
