/*
 * A tiny unit-test harness. Each tests/unit/test-*.c is its own program:
 *
 *   static void t_something(void) { T_ASSERT(x == 1); T_STREQ(a, "b"); }
 *   T_MAIN(T(t_something), T(t_other))
 *
 * Every test prints "ok - <file>: <name>" or "not ok - <file>: <name>: why"
 * (the first failing assertion ends that test); `./test-x NAME` runs one.
 * tests/run-tests.sh adds the lines up into "N passed, N failed".
 */
#ifndef HP_T_H
#define HP_T_H

#include <setjmp.h>
#include <stdio.h>
#include <string.h>

struct t_case {
	const char *name;
	void (*fn)(void);
};

extern jmp_buf t_jmp;
extern char t_why[1024];

#define T_FAILF(...)                                                   \
	do {                                                           \
		snprintf(t_why, sizeof(t_why), __VA_ARGS__);           \
		longjmp(t_jmp, 1);                                     \
	} while (0)

#define T_ASSERT(c)                                                    \
	do {                                                           \
		if (!(c))                                              \
			T_FAILF("%s:%d: assertion failed: %s", __FILE__, __LINE__, #c); \
	} while (0)

#define T_EQ(a, b)                                                     \
	do {                                                           \
		long long t_a_ = (long long)(a), t_b_ = (long long)(b); \
		if (t_a_ != t_b_)                                      \
			T_FAILF("%s:%d: %s == %lld, expected %lld", __FILE__, __LINE__, #a, t_a_, t_b_); \
	} while (0)

#define T_STREQ(a, b)                                                  \
	do {                                                           \
		const char *t_a_ = (a), *t_b_ = (b);                   \
		if (!t_a_ || !t_b_ || strcmp(t_a_, t_b_))              \
			T_FAILF("%s:%d: %s is \"%s\", expected \"%s\"", __FILE__, __LINE__, #a, \
				t_a_ ? t_a_ : "(null)", t_b_ ? t_b_ : "(null)"); \
	} while (0)

#define T_CONTAINS(hay, needle)                                        \
	do {                                                           \
		const char *t_h_ = (hay), *t_n_ = (needle);            \
		if (!t_h_ || !strstr(t_h_, t_n_))                      \
			T_FAILF("%s:%d: %s does not contain \"%s\": \"%.600s\"", __FILE__, __LINE__, \
				#hay, t_n_, t_h_ ? t_h_ : "(null)");   \
	} while (0)

#define T_NOT_CONTAINS(hay, needle)                                    \
	do {                                                           \
		const char *t_h_ = (hay), *t_n_ = (needle);            \
		if (t_h_ && strstr(t_h_, t_n_))                        \
			T_FAILF("%s:%d: %s contains \"%s\": \"%.600s\"", __FILE__, __LINE__, #hay, \
				t_n_, t_h_);                           \
	} while (0)

#define T(fn) { #fn, fn }

int t_run(const char *file, const struct t_case *cases, size_t n, int argc, char **argv);

/* The file tests/data/<dir>/<name> (tests run from the repository root), NUL-terminated;
   its length in *len when len is not NULL. Fails the test when it cannot be read. Free it. */
char *t_data(const char *dir, const char *name, size_t *len);

/*
 * A probe script of src/collect/probe/ as the build embeds it: the file with
 * src/collect/probe/frame.sh put in at its "#@include frame.sh" line, read
 * here line by line (tests run from the repository root). Free it.
 */
char *t_probe_script(const char *name);

#define T_MAIN(...)                                                    \
	int main(int argc, char **argv)                                \
	{                                                              \
		static const struct t_case t_cases_[] = { __VA_ARGS__ }; \
		return t_run(__FILE__, t_cases_, sizeof(t_cases_) / sizeof(t_cases_[0]), argc, argv); \
	}

#endif
