/*
 * XML replies (EC2, STS, and XML error bodies) to cJSON, with expat.
 * Namespaces are ignored, elements become object members, elements whose
 * children are all <item>/<member> become arrays, text becomes strings.
 * Nothing here knows any particular API.
 */
#include <expat.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hp/aws.h"
#include "hp/buf.h"

#define XML_MAX_DEPTH 64

struct xnode {
	char *name;
	struct hp_buf text;
	struct xnode *first, *last, *next;
};

struct xstate {
	struct xnode *root;
	struct xnode *stack[XML_MAX_DEPTH];
	int depth;
	int error;
};

static const char *local_name(const char *n)
{
	const char *c = strrchr(n, ':');

	return c ? c + 1 : n;
}

static void on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
	struct xstate *s = ud;
	struct xnode *n;

	(void)attrs;
	if (s->error)
		return;
	if (s->depth >= XML_MAX_DEPTH) {
		s->error = 1;
		return;
	}
	n = xcalloc(1, sizeof(*n));
	n->name = xstrdup(local_name(name));
	hp_buf_init(&n->text, HP_MAX_HTTP_BODY);
	/* The text may be a credential (sts:AssumeRole): wiped when released. */
	hp_buf_set_secret(&n->text);
	if (s->depth == 0) {
		if (s->root) {
			s->error = 1;
			free(n->name);
			free(n);
			return;
		}
		s->root = n;
	} else {
		struct xnode *p = s->stack[s->depth - 1];
		if (p->last)
			p->last->next = n;
		else
			p->first = n;
		p->last = n;
	}
	s->stack[s->depth++] = n;
}

static void on_end(void *ud, const XML_Char *name)
{
	struct xstate *s = ud;

	(void)name;
	if (!s->error && s->depth > 0)
		s->depth--;
}

static void on_text(void *ud, const XML_Char *t, int len)
{
	struct xstate *s = ud;

	if (s->error || s->depth == 0)
		return;
	if (hp_buf_add(&s->stack[s->depth - 1]->text, t, (size_t)len))
		s->error = 1;
}

static void free_node(struct xnode *n)
{
	while (n) {
		struct xnode *next = n->next;
		free_node(n->first);
		free(n->name);
		hp_buf_release(&n->text);
		free(n);
		n = next;
	}
}

static int is_list(const struct xnode *n)
{
	const struct xnode *c;

	if (!n->first)
		return 0;
	for (c = n->first; c; c = c->next)
		if (strcmp(c->name, "item") && strcmp(c->name, "member"))
			return 0;
	return 1;
}

static int is_list_name(const char *name)
{
	return hp_ends_with(name, "Set") || hp_ends_with(name, "s");
}

/* Sibling names of one element, hashed: one slot per distinct name. */
struct slot {
	const char *name;
	size_t count;
	cJSON *arr;
};

static size_t name_hash(const char *s)
{
	size_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static struct slot *slot_find(struct slot *tab, size_t mask, const char *name)
{
	size_t i = name_hash(name) & mask;

	while (tab[i].name && strcmp(tab[i].name, name))
		i = (i + 1) & mask;
	tab[i].name = name;
	return &tab[i];
}

static cJSON *convert(const struct xnode *n)
{
	const struct xnode *c;
	struct slot *tab;
	size_t nchild = 0, size = 8;
	cJSON *o;

	if (is_list(n)) {
		o = cJSON_CreateArray();
		for (c = n->first; c; c = c->next)
			cJSON_AddItemToArray(o, convert(c));
		return o;
	}
	if (!n->first) {
		/* Trim whitespace-only text: an empty wrapper like <groupSet/>. */
		const char *t = n->text.buf;
		size_t i;
		for (i = 0; t[i]; i++)
			if (t[i] != ' ' && t[i] != '\n' && t[i] != '\r' && t[i] != '\t')
				return cJSON_CreateString(t);
		return is_list_name(n->name) ? cJSON_CreateArray() : cJSON_CreateString("");
	}
	/*
	 * Count each name first (one hash lookup per child), then add members
	 * in document order: a name seen once is a plain member, a repeated
	 * one becomes one array at the place of its first element.
	 */
	for (c = n->first; c; c = c->next)
		nchild++;
	while (size < 2 * nchild)
		size *= 2;
	tab = xcalloc(size, sizeof(*tab));
	for (c = n->first; c; c = c->next)
		slot_find(tab, size - 1, c->name)->count++;
	o = cJSON_CreateObject();
	for (c = n->first; c; c = c->next) {
		struct slot *sl = slot_find(tab, size - 1, c->name);

		if (sl->count == 1) {
			cJSON_AddItemToObject(o, c->name, convert(c));
			continue;
		}
		if (!sl->arr) {
			sl->arr = cJSON_CreateArray();
			cJSON_AddItemToObject(o, c->name, sl->arr);
		}
		cJSON_AddItemToArray(sl->arr, convert(c));
	}
	free(tab);
	return o;
}

/*
 * Expat's memory, wiped when given back: its buffers hold the text parsed
 * (an sts:AssumeRole reply's secret key and session token among it). Each
 * block carries its size in front of it, so free knows what to wipe.
 */
union wblock {
	size_t n;
	max_align_t align;
};

static void *wipe_malloc(size_t n)
{
	union wblock *b = malloc(sizeof(*b) + n);

	if (!b)
		return NULL;
	b->n = n;
	return b + 1;
}

static void wipe_free(void *p)
{
	union wblock *b = p ? (union wblock *)p - 1 : NULL;

	if (!b)
		return;
	hp_wipe(p, b->n);
	free(b);
}

static void *wipe_realloc(void *p, size_t n)
{
	union wblock *old = p ? (union wblock *)p - 1 : NULL;
	void *q;

	if (!p)
		return wipe_malloc(n);
	q = wipe_malloc(n);
	if (!q)
		return NULL;
	memcpy(q, p, old->n < n ? old->n : n);
	wipe_free(p);
	return q;
}

static const XML_Memory_Handling_Suite wiping = { wipe_malloc, wipe_realloc, wipe_free };

cJSON *hp_xml_to_json(const char *xml, size_t len, char *root_name, size_t root_n)
{
	struct xstate s;
	XML_Parser p;
	cJSON *out = NULL;

	memset(&s, 0, sizeof(s));
	p = XML_ParserCreate_MM("UTF-8", &wiping, NULL);
	if (!p)
		hp_die("out of memory");
	XML_SetUserData(p, &s);
	XML_SetElementHandler(p, on_start, on_end);
	XML_SetCharacterDataHandler(p, on_text);
	if (len > (size_t)0x7fffffff ||
	    XML_Parse(p, xml, (int)len, 1) == XML_STATUS_ERROR || s.error || !s.root) {
		XML_ParserFree(p);
		free_node(s.root);
		return NULL;
	}
	XML_ParserFree(p);
	if (root_name && root_n)
		hp_strlcpy(root_name, s.root->name, root_n);
	out = convert(s.root);
	free_node(s.root);
	return out;
}
