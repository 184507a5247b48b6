/*
 * Shared pieces of the libFuzzer targets (tests/fuzz/fuzz-*.c): input
 * splitting, an HTTP fake that answers with the right content type per
 * protocol, and the oracles every target applies besides "no crash":
 * a rendered report holds no raw control character and no invalid UTF-8,
 * and no secret appears in any output.
 *
 * Each target defines LLVMFuzzerTestOneInput. Built with clang
 * -fsanitize=fuzzer it is a fuzzer (`make fuzz`); linked with replay.c by
 * any compiler it replays its corpus as a unit test (`make test`).
 */
#ifndef HP_FUZZ_H
#define HP_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "hp/buf.h"
#include "hp/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Once before the first input (libFuzzer calls it; so does the corpus replay). */
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Secret key and session token of the fake credentials (fz_aws). */
#define FZ_SECRET "wJalrXUtnFEMI/K7MDENG+bPxRfiCYFUZZSECRET"
#define FZ_TOKEN "FwoGZXIvYXdzEFUZZTOKENVALUEyNDk2"

/* Up to max parts of data split on NUL bytes, each copied NUL-terminated. */
struct fz_parts {
	char *p[32];
	size_t len[32];
	size_t n;
};
void fz_split(const uint8_t *data, size_t size, size_t max, struct fz_parts *out);
void fz_parts_release(struct fz_parts *ps);

/* Abort (a crash for the fuzzer) with a message. */
void fz_fail(const char *what, const char *text, size_t len) __attribute__((noreturn));

/*
 * 0 when text[0..len) is valid UTF-8 without raw control characters (C0
 * but newline and, when allow_tab, tab; DEL; C1), else fz_fail(what).
 */
void fz_assert_clean(const char *what, const char *text, size_t len, int allow_tab);
/* fz_fail when needle (>= 8 bytes) occurs in text. */
void fz_assert_absent(const char *what, const char *text, size_t len, const char *needle);

/*
 * Run every check on s and render the text report (no colour, with
 * suggestions) and the JSON report; assert both are clean and, when
 * secrets is non-NULL (NULL-terminated), that none of them appears.
 */
void fz_check_report(struct hp_snapshot *s, const char *const *secrets);
/* The JUnit report parses with expat (well-formed XML 1.0, only Char text). */
struct hp_buf;
void fz_check_junit(const struct hp_buf *junit);
/* The shell words of a printed command (placeholders one word each); -1 unsafe, -2 unterminated. */
int fz_shell_words(const char *cmd);

/*
 * An error message as hpnode prints it (sanitised): assert it is clean
 * and holds none of secrets (NULL-terminated, may be NULL).
 */
void fz_check_error(const char *msg, const char *const *secrets);

struct fake_sys;
struct hp_aws;
/*
 * Point a at f (fake_aws, one attempt per call, FZ_SECRET/FZ_TOKEN
 * credentials) and answer its HTTP requests in order with parts[first..]:
 * status 200, or NNN when a part starts with "@NNN "; the content type the
 * call's protocol expects (JSON 1.1, rest-json or XML); bodies cut at
 * max_body bytes. Past the last part every request fails to
 * connect. The parts must outlive the calls.
 */
void fz_aws(struct fake_sys *f, struct hp_aws *a, const struct fz_parts *ps, size_t first,
	    size_t max_body);

#endif
