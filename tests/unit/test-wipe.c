/*
 * Credential replies leave no copy behind: a buffer marked secret wipes
 * every block it outgrows (no realloc left holding the old text) and the
 * block it releases; the XML decoder (sts:AssumeRole and
 * AssumeRoleWithWebIdentity replies) wipes its element text and expat's
 * own buffers. Seen through hp_wipe's observer, which is called with each
 * block just before it is zeroed.
 */
#include <stdlib.h>
#include <string.h>

#include "hp/aws.h"
#include "hp/buf.h"
#include "hp/json.h"
#include "hp/util.h"
#include "t.h"

#define SECRET "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"

static size_t seen_with, seen_starting, seen_blocks;

static void observe(const void *p, size_t n)
{
	const char *c = p;
	size_t k = strlen(SECRET), i;

	seen_blocks++;
	if (n >= k && !memcmp(c, SECRET, k))
		seen_starting++;
	for (i = 0; i + k <= n; i++)
		if (!memcmp(c + i, SECRET, k)) {
			seen_with++;
			break;
		}
}

static void reset(void)
{
	seen_with = seen_starting = seen_blocks = 0;
	hp_wipe_observer = observe;
}

static void t_secret_buffer_wipes_what_it_outgrows(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	char filler[4096];
	size_t i, grown;

	memset(filler, 'x', sizeof(filler));
	reset();
	hp_buf_set_secret(&b);
	hp_buf_puts(&b, SECRET);
	for (i = 0; i < 8; i++)
		T_EQ(hp_buf_add(&b, filler, sizeof(filler)), 0);
	grown = seen_with;
	/* Each block it outgrew held the key, and was wiped before it went back. */
	T_ASSERT(grown >= 3);
	T_EQ(b.len, strlen(SECRET) + sizeof(filler) * 8);
	T_ASSERT(!memcmp(b.buf, SECRET, strlen(SECRET)));
	hp_buf_release(&b);
	T_EQ(seen_with, grown + 1);
	/* The mark stays: the buffer is reused for the next reply. */
	T_EQ(b.secret, 1);

	/* A plain buffer is not wiped (only secrets pay for it). */
	reset();
	{
		struct hp_buf p = HP_BUF_INIT(1 << 20);

		hp_buf_puts(&p, SECRET);
		for (i = 0; i < 8; i++)
			T_EQ(hp_buf_add(&p, filler, sizeof(filler)), 0);
		hp_buf_release(&p);
	}
	T_EQ(seen_blocks, 0);
	hp_wipe_observer = NULL;
}

static void t_sts_xml_text_wiped(void)
{
	static const char reply[] =
		"<AssumeRoleResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
		"<AssumeRoleResult><Credentials><AccessKeyId>ASIAEXAMPLE</AccessKeyId>"
		"<SecretAccessKey>" SECRET "</SecretAccessKey><SessionToken>tok</SessionToken>"
		"<Expiration>2015-08-30T13:36:00Z</Expiration></Credentials></AssumeRoleResult>"
		"</AssumeRoleResponse>";
	char root[64];
	cJSON *j;

	reset();
	j = hp_xml_to_json(reply, strlen(reply), root, sizeof(root));
	T_ASSERT(j != NULL);
	T_STREQ(hp_json_str(j, "AssumeRoleResult.Credentials.SecretAccessKey"), SECRET);
	/* The element's own text buffer, and expat's buffers holding the reply. */
	T_ASSERT(seen_starting >= 1);
	T_ASSERT(seen_with >= 2);
	cJSON_Delete(j);
	hp_wipe_observer = NULL;
}

T_MAIN(T(t_secret_buffer_wipes_what_it_outgrows), T(t_sts_xml_text_wiped))
