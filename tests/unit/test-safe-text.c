/*
 * Text shown to a person: URL userinfo is hidden and control characters
 * (escape sequences included) never pass, in error messages and usage
 * errors alike.
 */
#include <string.h>

#include "hp/err.h"
#include "hp/text.h"
#include "hp/util.h"
#include "t.h"

static void t_redact_urls(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "cannot reach AWS STS at 'http://user:password@127.0.0.1:9': refused",
		  "cannot reach AWS STS at 'http://***@127.0.0.1:9': refused" },
		{ "https://a@h/x?u=http://b:c@d", "https://***@h/x?u=http://***@d" },
		{ "http://host/path@notuser", "http://host/path@notuser" },
		{ "mail me: user@example.com", "mail me: user@example.com" },
		{ "HTTPS://K:S@EXAMPLE.COM:443", "HTTPS://***@EXAMPLE.COM:443" },
		{ "http://u:p@x@host", "http://***@host" },
		{ "://x:y@z", "://x:y@z" },
		{ "", "" },
	};
	char out[256];
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		hp_redact_urls(cases[i].in, out, sizeof(out));
		T_STREQ(out, cases[i].out);
	}
	/* A short buffer: cut, terminated, never the secret. */
	hp_redact_urls("http://user:secret@h", out, 10);
	T_STREQ(out, "http://**");
}

static void t_clean_text(void)
{
	char s[64];

	strcpy(s, "x\033[2J\033]0;title\007y\tz\n");
	hp_text_copy(HP_TEXT_MESSAGE, s, strlen(s), s);
	T_STREQ(s, "x?[2J?]0;title?y z ");
	strcpy(s, "a\xc2\x9b" "31mb caf\xc3\xa9\x7f");
	hp_text_copy(HP_TEXT_MESSAGE, s, strlen(s), s);
	T_STREQ(s, "a??31mb caf\xc3\xa9?");
}

static void t_error_messages_are_safe(void)
{
	struct hp_error e = HP_ERROR_INIT;

	hp_error_set(&e, HP_ERR_HTTP, "cannot reach '%s': %s", "http://admin:hunter2@10.0.0.1",
		     "reset\033[31m");
	T_STREQ(e.msg, "cannot reach 'http://***@10.0.0.1': reset?[31m");
	T_ASSERT(!strstr(e.msg, "hunter2"));
}

T_MAIN(T(t_redact_urls), T(t_clean_text), T(t_error_messages_are_safe))
