/*
 * The error list (include/hp/err.h): names, messages, categories and exit
 * statuses generated from one X-macro.
 */
#include <stdarg.h>
#include <stdio.h>

#include "hp/err.h"
#include "hp/text.h"

static const struct {
	const char *name;
	const char *msg;
	enum hp_err_category cat;
} errors[] = {
#define HP_X(code, cat, msg) { #code, msg, HP_ERRCAT_##cat },
	HP_ERRORS(HP_X)
#undef HP_X
};

static const int category_exit[] = {
#define HP_X(name, exit) exit,
	HP_ERR_CATEGORIES(HP_X)
#undef HP_X
};

int hp_error_set(struct hp_error *e, enum hp_err code, const char *fmt, ...)
{
	va_list ap;
	char raw[sizeof(e->msg)];

	if (!e || e->code != HP_OK)
		return -1;
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* Messages reach terminals and reports: no secret in a URL, no control. */
	hp_text_str(HP_TEXT_SAFE, raw, e->msg, sizeof(e->msg));
	return -1;
}

void hp_error_clear(struct hp_error *e)
{
	e->code = HP_OK;
	e->msg[0] = '\0';
}

const char *hp_err_name(enum hp_err code)
{
	return (unsigned)code < HP_ERR__COUNT ? errors[code].name : "HP_ERR_UNKNOWN";
}

const char *hp_err_message(enum hp_err code)
{
	return (unsigned)code < HP_ERR__COUNT ? errors[code].msg : "unknown error";
}

enum hp_err_category hp_err_category(enum hp_err code)
{
	return (unsigned)code < HP_ERR__COUNT ? errors[code].cat : HP_ERRCAT_INTERNAL;
}

int hp_err_exit_status(enum hp_err code)
{
	return category_exit[hp_err_category(code)];
}
