/*
 * Which CloudWatch log lines count as a fault (include/hp/facts.h): the
 * words of a lifecycle script's failure and of the health monitoring
 * agent's faults, each where it is not cancelled ("0 errors", "no
 * failures", "errors: 0", "exit code 0", "default"). The log checks judge
 * the lines with it, and the probe order names the nodes they point at.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "hp/array.h"
#include "hp/facts.h"
#include "hp/util.h"

enum {
	TOK_START = 1 << 0, /* no letter or digit right before it ("default" is no fault) */
	TOK_END = 1 << 1,   /* no letter right after it */
	TOK_NEG = 1 << 2,   /* "0 errors", "no errors", "errors: 0" do not count */
	TOK_CODE = 1 << 3   /* "exit code 0" does not count */
};

struct token {
	const char *word;
	unsigned flags;
};

static const struct token lifecycle_tokens[] = {
	{ "error", TOK_NEG },
	{ "failed", TOK_NEG },
	{ "failure", TOK_NEG },
	{ "traceback", 0 },
	{ "exit code", TOK_CODE },
	{ "exit status", TOK_CODE },
	{ "timed out", 0 },
	{ "no such file", 0 },
	{ "permission denied", 0 },
	{ "command not found", 0 },
	{ NULL, 0 },
};

static const struct token hma_tokens[] = {
	{ "error", TOK_NEG },
	{ "fault", TOK_START | TOK_NEG },
	{ "unhealthy", TOK_NEG },
	{ "failed", TOK_NEG },
	{ "xid", TOK_START | TOK_END },
	{ "nvlink", TOK_START },
	{ "ecc", TOK_START | TOK_END },
	{ "reboot", TOK_START },
	{ "replace", TOK_START },
	{ NULL, 0 },
};

static int is_alnum(char c)
{
	return isalnum((unsigned char)c);
}

/* The word before `at` (skipping spaces) is one that cancels it. */
static int negated_before(const char *line, const char *at)
{
	static const char *const words[] = { "0", "no", "zero", "without", "none" };
	const char *end = at, *start;
	size_t i;

	while (end > line && end[-1] == ' ')
		end--;
	start = end;
	while (start > line && is_alnum(start[-1]))
		start--;
	for (i = 0; i < HP_ARRAY_LEN(words); i++)
		if ((size_t)(end - start) == strlen(words[i]) &&
		    !strncasecmp(start, words[i], (size_t)(end - start)))
			return 1;
	return 0;
}

/* After the word: more word characters, then ":" or "=", then a lone 0. */
static int negated_after(const char *p)
{
	while (isalpha((unsigned char)*p) || *p == '_')
		p++;
	while (*p == ' ')
		p++;
	if (*p != ':' && *p != '=')
		return 0;
	p++;
	while (*p == ' ')
		p++;
	return p[0] == '0' && !isdigit((unsigned char)p[1]);
}

/* "exit code 0", "exit code: 0", "exit status=0" */
static int zero_code_after(const char *p)
{
	while (*p == ' ' || *p == ':' || *p == '=')
		p++;
	if (!strncasecmp(p, "is ", 3))
		p += 3;
	return p[0] == '0' && !isdigit((unsigned char)p[1]);
}

/* Whether any token occurs in line in a way that counts. */
static int line_matches(const char *line, const struct token *tokens)
{
	const struct token *t;

	for (t = tokens; t->word; t++) {
		size_t len = strlen(t->word);
		const char *p = line;

		while ((p = hp_strcasestr(p, t->word))) {
			const char *after = p + len;
			int counts = 1;

			if ((t->flags & TOK_START) && p > line && is_alnum(p[-1]))
				counts = 0;
			if ((t->flags & TOK_END) && isalpha((unsigned char)*after))
				counts = 0;
			if ((t->flags & TOK_NEG) && (negated_before(line, p) || negated_after(after)))
				counts = 0;
			if ((t->flags & TOK_CODE) && zero_code_after(after))
				counts = 0;
			if (counts)
				return 1;
			p += len;
		}
	}
	return 0;
}

int hp_log_line_counts(enum hp_log_kind kind, const char *line)
{
	if (!line)
		return 0;
	return line_matches(line, kind == HP_LOG_LIFECYCLE ? lifecycle_tokens : hma_tokens);
}
