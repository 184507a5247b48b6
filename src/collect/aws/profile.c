/*
 * The shared AWS config and credentials files: an INI parser that follows
 * the rules botocore's parser applies (full-line comments only, indented
 * sub-keys, duplicate sections and keys rejected) and profile selection.
 * Lines end in LF, CR LF or a lone CR. The file-path variables expand
 * $NAME, ${NAME} and a leading "~" as botocore does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/buf.h"
#include "hp/profile.h"

static const char *env_get(struct hp_sys *sys, const char *name)
{
	const char *v = sys->getenv(sys, name);

	return v && *v ? v : NULL;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}

/* Copy [p, p+len) with surrounding blanks removed. */
static char *dup_trimmed(const char *p, size_t len)
{
	while (len && is_blank(*p)) {
		p++;
		len--;
	}
	while (len && is_blank(p[len - 1]))
		len--;
	return xstrndup(p, len);
}

static void lower_ascii(char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
}

static void ini_add(struct hp_ini *ini, const char *section, char *key, char *value)
{
	struct hp_ini_kv *kv;

	ini->kv = hp_array_grow(ini->kv, &ini->alloc, ini->n, 1, sizeof(*ini->kv));
	kv = &ini->kv[ini->n++];
	kv->section = xstrdup(section);
	kv->key = key;
	kv->value = value;
}

static void ini_remove(struct hp_ini *ini, size_t i)
{
	free(ini->kv[i].section);
	free(ini->kv[i].key);
	hp_free_secret(ini->kv[i].value);
	memmove(&ini->kv[i], &ini->kv[i + 1], (ini->n - i - 1) * sizeof(*ini->kv));
	ini->n--;
}

static void ini_add_section(struct hp_ini *ini, const char *name)
{
	ini->sections = hp_array_grow(ini->sections, &ini->sections_alloc, ini->nsections, 1,
				      sizeof(*ini->sections));
	ini->sections[ini->nsections++] = xstrdup(name);
}

int hp_ini_has_section(const struct hp_ini *ini, const char *section)
{
	size_t i;

	for (i = 0; i < ini->nsections; i++)
		if (!strcmp(ini->sections[i], section))
			return 1;
	return 0;
}

static int key_in_section(const struct hp_ini *ini, const char *section, const char *key)
{
	size_t i;

	for (i = 0; i < ini->n; i++)
		if (!strcmp(ini->kv[i].section, section) && !strcmp(ini->kv[i].key, key))
			return 1;
	return 0;
}

/*
 * Section headers name profiles in several spellings; store one:
 * "profile   dev", "profile dev " and "profile \"dev\"" all become
 * "profile dev". Blanks before the kind are kept, as botocore keeps them:
 * "[ profile dev ]" and "[default ]" name no profile. A header of blanks
 * only comes back empty.
 */
static char *normalise_section(const char *p, size_t len)
{
	static const char *const kinds[] = { "profile", "services", "sso-session" };
	char *raw = xstrndup(p, len), *out, *name, *t = dup_trimmed(p, len);
	size_t i, klen, nlen;

	if (!*t) {
		free(raw);
		return t;
	}
	free(t);

	for (i = 0; i < HP_ARRAY_LEN(kinds); i++) {
		klen = strlen(kinds[i]);
		if (strncmp(raw, kinds[i], klen) || !is_blank(raw[klen]))
			continue;
		name = raw + klen;
		while (is_blank(*name))
			name++;
		nlen = strlen(name);
		while (nlen && is_blank(name[nlen - 1]))
			nlen--;
		if (nlen >= 2 && ((name[0] == '"' && name[nlen - 1] == '"') ||
				  (name[0] == '\'' && name[nlen - 1] == '\''))) {
			name++;
			nlen -= 2;
		}
		out = xasprintf("%s %.*s", kinds[i], (int)nlen, name);
		free(raw);
		return out;
	}
	return raw;
}

/* The parser's state between lines. */
struct ini_parse {
	struct hp_ini *ini;
	char *section;          /* current section, NULL before the first header */
	size_t opt;             /* index in ini->kv of the option that may continue */
	int have_opt;           /* 1 when a continuation line may follow */
	int nested;             /* 1 when that option's value was empty (a sub-key block) */
	char *parent;           /* the block's key when nested */
	size_t opt_indent;      /* indentation of that option's line */
	int nchildren;          /* sub-keys seen in the current block */
};

static int parse_continuation(struct ini_parse *st, const char *p, size_t len, int lineno,
			      struct hp_error *e)
{
	const char *eq;
	char *sub, *key;
	struct hp_ini_kv *kv;

	if (!st->nested) {
		/* A value continued on the next lines keeps its lines. */
		char *tail = dup_trimmed(p, len);

		kv = &st->ini->kv[st->opt];
		sub = xasprintf("%s\n%s", kv->value, tail);
		hp_free_secret(tail);
		hp_free_secret(kv->value);
		kv->value = sub;
		return 0;
	}
	eq = memchr(p, '=', len);
	if (!eq)
		return hp_error_set(e, HP_ERR_CONFIG, "line %d: expected 'name = value' under '%s'",
				    lineno, st->parent);
	sub = dup_trimmed(p, (size_t)(eq - p));
	if (!*sub) {
		free(sub);
		return hp_error_set(e, HP_ERR_CONFIG, "line %d: empty key under '%s'", lineno,
				    st->parent);
	}
	if (st->nchildren++ == 0)
		/* The parent holds a block, not a value. */
		ini_remove(st->ini, st->opt);
	key = xasprintf("%s.%s", st->parent, sub);
	free(sub);
	ini_add(st->ini, st->section, key, dup_trimmed(eq + 1, len - (size_t)(eq - p) - 1));
	return 0;
}

static int parse_header(struct ini_parse *st, const char *p, size_t len, int lineno,
			struct hp_error *e)
{
	const char *close = NULL;
	size_t i;
	char *name;

	for (i = len; i > 1; i--) {
		if (p[i - 1] == ']') {
			close = p + i - 1;
			break;
		}
	}
	if (!close)
		return hp_error_set(e, HP_ERR_CONFIG, "line %d: section header has no closing ']'",
				    lineno);
	name = normalise_section(p + 1, (size_t)(close - p - 1));
	if (!*name) {
		free(name);
		return hp_error_set(e, HP_ERR_CONFIG, "line %d: empty section name", lineno);
	}
	if (hp_ini_has_section(st->ini, name)) {
		hp_error_set(e, HP_ERR_CONFIG, "line %d: section '%s' appears twice", lineno, name);
		free(name);
		return -1;
	}
	ini_add_section(st->ini, name);
	free(st->section);
	st->section = name;
	st->have_opt = 0;
	return 0;
}

static int parse_option(struct ini_parse *st, const char *p, size_t len, size_t indent,
			int lineno, struct hp_error *e)
{
	size_t i;
	char *key, *value;

	if (!st->section)
		return hp_error_set(e, HP_ERR_CONFIG, "line %d: text before the first [section]",
				    lineno);
	for (i = 0; i < len && p[i] != '=' && p[i] != ':'; i++)
		;
	if (i == len)
		return hp_error_set(e, HP_ERR_CONFIG, "line %d: expected 'name = value'", lineno);
	key = dup_trimmed(p, i);
	if (!*key) {
		free(key);
		return hp_error_set(e, HP_ERR_CONFIG, "line %d: empty key", lineno);
	}
	lower_ascii(key);
	if (key_in_section(st->ini, st->section, key)) {
		hp_error_set(e, HP_ERR_CONFIG, "line %d: key '%s' appears twice in section '%s'",
			     lineno, key, st->section);
		free(key);
		return -1;
	}
	value = dup_trimmed(p + i + 1, len - i - 1);
	free(st->parent);
	st->parent = xstrdup(key);
	st->nested = !*value;
	st->nchildren = 0;
	st->have_opt = 1;
	st->opt_indent = indent;
	ini_add(st->ini, st->section, key, value);
	st->opt = st->ini->n - 1;
	return 0;
}

static int parse_line(struct ini_parse *st, const char *line, size_t len, int lineno,
		      struct hp_error *e)
{
	size_t indent = 0;
	const char *p;

	if (memchr(line, '\0', len))
		return hp_error_set(e, HP_ERR_CONFIG, "line %d: NUL byte", lineno);
	if (len && line[len - 1] == '\r')
		len--;
	while (indent < len && is_blank(line[indent]))
		indent++;
	p = line + indent;
	len -= indent;
	while (len && is_blank(p[len - 1]))
		len--;
	/* Blank lines and full-line comments; a comment never ends a block. */
	if (!len || *p == '#' || *p == ';')
		return 0;
	if (st->have_opt && indent > st->opt_indent)
		return parse_continuation(st, p, len, lineno, e);
	if (*p == '[')
		return parse_header(st, p, len, lineno, e);
	return parse_option(st, p, len, indent, lineno, e);
}

int hp_ini_parse(const char *text, size_t len, struct hp_ini *out, struct hp_error *e)
{
	struct ini_parse st;
	const char *p = text, *end = text + len, *nl;
	int lineno = 0, rc = 0;

	memset(out, 0, sizeof(*out));
	memset(&st, 0, sizeof(st));
	st.ini = out;
	/* A UTF-8 byte-order mark some editors write. */
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	while (p < end && rc == 0) {
		/* A line ends at LF, CR LF or a lone CR (old Mac editors). */
		for (nl = p; nl < end && *nl != '\n' && *nl != '\r'; nl++)
			;
		rc = parse_line(&st, p, (size_t)(nl - p), ++lineno, e);
		if (nl < end && *nl == '\r' && nl + 1 < end && nl[1] == '\n')
			nl++;
		p = nl + 1;
	}
	free(st.section);
	free(st.parent);
	if (rc)
		hp_ini_release(out);
	return rc;
}

const char *hp_ini_get(const struct hp_ini *ini, const char *section, const char *key)
{
	size_t i;

	for (i = ini->n; i > 0; i--) {
		const struct hp_ini_kv *kv = &ini->kv[i - 1];

		if (!strcmp(kv->section, section) && !strcmp(kv->key, key))
			return kv->value;
	}
	return NULL;
}

void hp_ini_release(struct hp_ini *ini)
{
	size_t i;

	for (i = 0; i < ini->n; i++) {
		free(ini->kv[i].section);
		free(ini->kv[i].key);
		/* The credentials file holds secret keys. */
		hp_free_secret(ini->kv[i].value);
	}
	for (i = 0; i < ini->nsections; i++)
		free(ini->sections[i]);
	free(ini->kv);
	free(ini->sections);
	memset(ini, 0, sizeof(*ini));
}

/*
 * $NAME and ${NAME} replaced by the variable's value (unset ones are left
 * as written, as Python's os.path.expandvars leaves them), then a leading
 * "~" or "~/" by HOME.
 */
static char *expand_path(struct hp_sys *sys, const char *v)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);
	const char *home = env_get(sys, "HOME"), *q, *val;
	char name[128], *out, *tmp;
	size_t len;

	for (q = v; *q; q++) {
		const char *start = q, *nend;
		int braced;

		if (*q != '$') {
			hp_buf_putc(&b, *q);
			continue;
		}
		braced = q[1] == '{';
		nend = q + 1 + braced;
		while ((*nend >= 'A' && *nend <= 'Z') || (*nend >= 'a' && *nend <= 'z') ||
		       (*nend >= '0' && *nend <= '9') || *nend == '_')
			nend++;
		len = (size_t)(nend - (q + 1 + braced));
		if (!len || len >= sizeof(name) || (braced && *nend != '}')) {
			hp_buf_putc(&b, *q);
			continue;
		}
		memcpy(name, q + 1 + braced, len);
		name[len] = '\0';
		q = nend + braced - 1;
		val = sys->getenv(sys, name);
		if (val)
			hp_buf_puts(&b, val);
		else
			hp_buf_putn(&b, start, (size_t)(q + 1 - start));
	}
	out = hp_buf_detach(&b, NULL);
	if (!out)
		out = xstrdup("");
	if (out[0] == '~' && (out[1] == '/' || !out[1]) && home) {
		tmp = xasprintf("%s%s", home, out + 1);
		free(out);
		out = tmp;
	}
	return out;
}

/* The file path from an override variable or $HOME/.aws/<leaf>; NULL when neither. */
static char *file_path(struct hp_sys *sys, const char *var, const char *leaf)
{
	const char *v = env_get(sys, var), *home = env_get(sys, "HOME");

	if (v)
		return expand_path(sys, v);
	if (!home)
		return NULL;
	return xasprintf("%s/.aws/%s", home, leaf);
}

/* Reads and parses one file; an absent file leaves ini empty. */
static int load_file(struct hp_sys *sys, const char *path, const char *what, struct hp_ini *ini,
		     struct hp_error *e)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_FILE);
	struct hp_error pe = HP_ERROR_INIT;
	int rc;

	memset(ini, 0, sizeof(*ini));
	if (!path)
		return 0;
	if (sys->read_file(sys, path, &b) < 0) {
		int err = errno;

		hp_buf_release_secure(&b);
		if (err == ENOENT || err == ENOTDIR || err == EISDIR)
			return 0;
		return hp_error_set(e, HP_ERR_FILE, "cannot read %s '%s': %s", what, path,
				    strerror(err));
	}
	rc = hp_ini_parse(b.buf, b.len, ini, &pe);
	hp_buf_release_secure(&b);
	if (rc)
		return hp_error_set(e, pe.code, "malformed %s '%s': %s", what, path, pe.msg);
	return 0;
}

/* The config-file section names that hold profile `name`, best first. */
static void config_sections(const char *name, char *first, char *second, size_t n)
{
	if (!strcmp(name, "default")) {
		hp_strlcpy(first, "default", n);
		hp_strlcpy(second, "profile default", n);
	} else {
		snprintf(first, n, "profile %s", name);
		second[0] = '\0';
	}
}

/*
 * botocore builds an SSO token provider for every client: a profile that
 * names an sso_session whose section is missing, or lacks sso_start_url or
 * sso_region, fails every command, whatever answers for credentials.
 */
static int check_sso_session(const struct hp_profile *p, const char *cfg_path,
			     struct hp_error *e)
{
	const char *name = hp_profile_config(p, "sso_session");
	char sect[200];

	if (!name)
		return 0;
	snprintf(sect, sizeof(sect), "sso-session %s", name);
	if (!hp_ini_has_section(&p->config, sect))
		return hp_error_set(e, HP_ERR_CONFIG, "profile '%s' names sso_session '%.100s', but "
				    "'%s' has no [sso-session %.100s] section", p->name, name,
				    cfg_path ? cfg_path : "the config file", name);
	if (!hp_ini_get(&p->config, sect, "sso_start_url") ||
	    !hp_ini_get(&p->config, sect, "sso_region"))
		return hp_error_set(e, HP_ERR_CONFIG, "[sso-session %.100s] of profile '%s' needs "
				    "sso_start_url and sso_region", name, p->name);
	return 0;
}

int hp_profile_load(struct hp_sys *sys, const char *flag_profile, struct hp_profile *p,
		    struct hp_error *e)
{
	const char *name = NULL;
	char *cfg_path, *cred_path;
	char s1[160], s2[160];
	int named = 0, rc = -1;

	memset(p, 0, sizeof(*p));
	if (flag_profile) {
		if (!*flag_profile)
			return hp_error_set(e, HP_ERR_USAGE, "--profile needs a profile name");
		name = flag_profile;
		p->explicit_profile = 1;
	} else {
		/* The CLI's order: AWS_PROFILE, then the older AWS_DEFAULT_PROFILE. */
		name = env_get(sys, "AWS_PROFILE");
		if (!name)
			name = env_get(sys, "AWS_DEFAULT_PROFILE");
	}
	if (name)
		named = 1;
	else
		name = "default";
	if (strlen(name) >= sizeof(p->name))
		return hp_error_set(e, HP_ERR_USAGE, "profile name '%.40s...' is too long", name);
	hp_strlcpy(p->name, name, sizeof(p->name));

	cfg_path = file_path(sys, "AWS_CONFIG_FILE", "config");
	cred_path = file_path(sys, "AWS_SHARED_CREDENTIALS_FILE", "credentials");
	if (load_file(sys, cfg_path, "config file", &p->config, e) ||
	    load_file(sys, cred_path, "credentials file", &p->credentials, e))
		goto out;
	if (hp_ini_has_section(&p->config, "default") &&
	    hp_ini_has_section(&p->config, "profile default")) {
		/* botocore would take whichever comes last, silently. */
		hp_error_set(e, HP_ERR_CONFIG, "malformed config file '%s': profile 'default' appears "
			     "twice, as [default] and [profile default]", cfg_path);
		goto out;
	}
	if (check_sso_session(p, cfg_path, e))
		goto out;
	config_sections(p->name, s1, s2, sizeof(s1));
	if (named && !hp_ini_has_section(&p->config, s1) &&
	    !(s2[0] && hp_ini_has_section(&p->config, s2)) &&
	    !hp_ini_has_section(&p->credentials, p->name)) {
		hp_error_set(e, HP_ERR_CONFIG, "profile '%s' not found in '%s' or '%s'", p->name,
			     cfg_path ? cfg_path : "~/.aws/config (HOME not set)",
			     cred_path ? cred_path : "~/.aws/credentials (HOME not set)");
		goto out;
	}
	rc = 0;
out:
	free(cfg_path);
	free(cred_path);
	if (rc)
		hp_profile_release(p);
	return rc;
}

const char *hp_profile_config(const struct hp_profile *p, const char *key)
{
	const char *v;

	/* botocore lays the credentials file's section over the config file's. */
	v = hp_ini_get(&p->credentials, p->name, key);
	if (v)
		return v;
	return hp_profile_config_file(p, key);
}

const char *hp_profile_config_file(const struct hp_profile *p, const char *key)
{
	char s1[160], s2[160];
	const char *v;

	config_sections(p->name, s1, s2, sizeof(s1));
	v = hp_ini_get(&p->config, s1, key);
	if (!v && s2[0])
		v = hp_ini_get(&p->config, s2, key);
	return v;
}

const char *hp_profile_cred(const struct hp_profile *p, const char *key)
{
	return hp_ini_get(&p->credentials, p->name, key);
}

void hp_profile_release(struct hp_profile *p)
{
	hp_ini_release(&p->config);
	hp_ini_release(&p->credentials);
}
