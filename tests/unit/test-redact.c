/*
 * Secret redaction (include/hp/redact.h): every kind replaced and counted,
 * ordinary log text left alone, key blocks followed across lines, and the
 * tar.gz writer (include/hp/tar.h) read back by a stored-block inflater.
 */
#include <stdlib.h>
#include <string.h>

#include "hp/redact.h"
#include "hp/tar.h"
#include "t.h"

static char *redact(const char *in, struct hp_redact *r)
{
	struct hp_buf out = HP_BUF_INIT((size_t)1 << 20);

	hp_redact(r, in, strlen(in), &out);
	return hp_buf_detach(&out, NULL);
}

struct sample {
	const char *line, *secret;
	enum hp_redact_kind kind;
};

static const struct sample samples[] = {
	{ "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n", "AKIAIOSFODNN7EXAMPLE", HP_RK_AWS_ACCESS_KEY },
	{ "key ASIAY34FZKBOKMUTVV7A used\n", "ASIAY34FZKBOKMUTVV7A", HP_RK_AWS_ACCESS_KEY },
	{ "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
	  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", HP_RK_AWS_SECRET_KEY },
	{ "found wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE22 in env\n",
	  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE22", HP_RK_AWS_SECRET_KEY },
	{ "{\"SessionToken\": \"IQoJb3JpZ2luX2VjEKz//////////wEaCXVzLWVhc3QtMSJH\"}\n",
	  "IQoJb3JpZ2luX2VjEKz", HP_RK_AWS_SESSION_TOKEN },
	{ "GET /?X-Amz-Security-Token=FwoGZXIvYXdzEBYaDH7example&X-Amz-Date=1\n",
	  "FwoGZXIvYXdzEBYaDH7example", HP_RK_AWS_SESSION_TOKEN },
	{ "curl -H 'Authorization: Bearer sk-live-0123456789abcdef'\n", "sk-live-0123456789abcdef",
	  HP_RK_BEARER },
	{ "id eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlLXBhcnQ seen\n",
	  "eyJzdWIiOiJzeXN0ZW06c2EifQ", HP_RK_JWT },
	{ "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=\n",
	  "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo", HP_RK_KUBECONFIG },
	{ "    token: k8s-aaaa1111bbbb2222cccc\n", "k8s-aaaa1111bbbb2222cccc", HP_RK_KUBECONFIG },
	{ "mount https://fsxuser:Hunter2Pass@files.example.com/share\n", "Hunter2Pass",
	  HP_RK_URL_PASSWORD },
	{ "DB_PASSWORD=correct-horse-battery\n", "correct-horse-battery", HP_RK_PASSWORD },
	{ "app --password s3cr3tvalue --port 80\n", "s3cr3tvalue", HP_RK_PASSWORD },
	{ "wandb api_key: 0f1e2d3c4b5a69788796a5b4c3d2e1f0\n", "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
	  HP_RK_SECRET },
	{ "{\"SessionId\": \"s-1\", \"TokenValue\": \"AAEAAUmP3xtokenvalue\"}\n", "AAEAAUmP3xtokenvalue",
	  HP_RK_SSM_TOKEN },
};

static void t_every_kind(void)
{
	size_t i;

	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		struct hp_redact r;
		char *out;
		char want[64];

		hp_redact_init(&r);
		out = redact(samples[i].line, &r);
		if (strstr(out, samples[i].secret))
			T_FAILF("sample %zu kept its secret: %s", i, out);
		snprintf(want, sizeof(want), "[REDACTED:%s]", hp_redact_kind_name(samples[i].kind));
		if (!strstr(out, want) || r.counts[samples[i].kind] < 1)
			T_FAILF("sample %zu: want %s in %s", i, want, out);
		free(out);
		hp_redact_release(&r);
	}
}

static void t_private_key_block(void)
{
	struct hp_redact r;
	char *out;

	hp_redact_init(&r);
	out = redact("before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx\nZm9vYmFy\n"
		     "-----END RSA PRIVATE KEY-----\nafter\n", &r);
	T_STREQ(out, "before\n-----BEGIN RSA PRIVATE KEY-----[REDACTED:private_key]\n"
		     "-----END RSA PRIVATE KEY-----\nafter\n");
	T_EQ(r.counts[HP_RK_PRIVATE_KEY], 1);
	free(out);
	/* A certificate is public: kept. */
	out = redact("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", &r);
	T_CONTAINS(out, "MIIB");
	free(out);
	hp_redact_release(&r);
}

static void t_ordinary_text_kept(void)
{
	static const char *const keep[] = {
		"2026-12-01T03:58:20Z kubelet: Started container nvidia-device-plugin\n",
		"tokens=123456 loss=1.25 step: 400 https://example.com/path time=12:00:01\n",
		"commit 0123456789abcdef0123456789abcdef01234567 merged\n",
		"NVRM: Xid (PCI:0000:97:00): 79, pid=8812, GPU has fallen off the bus.\n",
		"Account: 123  |  Credentials: environment variables\n",
		"\"summary\":{\"P0\":4,\"pass\":48,\"fail\":13}\n",
		"TOKEN=$(curl -s -X PUT http://169.254.169.254/latest/api/token)\n",
	};
	size_t i;

	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		struct hp_redact r;
		char *out;

		hp_redact_init(&r);
		out = redact(keep[i], &r);
		T_STREQ(out, keep[i]);
		T_EQ(r.total, 0);
		free(out);
		hp_redact_release(&r);
	}
}

/* An in-memory hp_file_out. */
struct mem_out {
	struct hp_file_out f;
	struct hp_buf b;
};

static int mem_write(struct hp_file_out *f, const void *p, size_t n)
{
	return hp_buf_add(&((struct mem_out *)f->impl)->b, p, n);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void t_tgz_reads_back(void)
{
	struct mem_out m;
	struct hp_tgz *t;
	struct hp_buf tar = HP_BUF_INIT((size_t)64 << 20);
	char *big = malloc(200000), longname[200];
	const unsigned char *g;
	size_t at, i;
	unsigned sum = 0;
	int final = 0;

	memset(&m, 0, sizeof(m));
	hp_buf_init(&m.b, (size_t)64 << 20);
	m.f.write = mem_write;
	m.f.impl = &m;
	for (i = 0; i < 200000; i++)
		big[i] = (char)('a' + i % 26);
	memset(longname, 0, sizeof(longname));
	snprintf(longname, sizeof(longname), "nodes/i-0123456789abcdef0/%s/journal.log",
		 "a-directory-name-long-enough-to-need-the-ustar-prefix-field-of-the-header-xx");
	t = hp_tgz_open(&m.f, 1764561500);
	T_EQ(hp_tgz_add(t, "MANIFEST.json", "{}\n", 3), 0);
	T_EQ(hp_tgz_add(t, longname, big, 200000), 0);
	T_EQ(hp_tgz_add(t, "../etc/passwd", "x", 1), -1);
	T_EQ(hp_tgz_add(t, "/abs", "x", 1), -1);
	T_EQ(hp_tgz_close(t), 0);
	g = (const unsigned char *)m.b.buf;
	T_ASSERT(g[0] == 0x1f && g[1] == 0x8b && g[2] == 8);
	/* Stored blocks: BFINAL/BTYPE byte, LEN, NLEN, bytes. */
	for (at = 10; !final;) {
		size_t len = (size_t)g[at + 1] | (size_t)g[at + 2] << 8;
		T_EQ(g[at] & 6, 0);
		T_EQ((len ^ ((size_t)g[at + 3] | (size_t)g[at + 4] << 8)), 0xffff);
		final = g[at] & 1;
		T_EQ(hp_buf_add(&tar, g + at + 5, len), 0);
		at += 5 + len;
	}
	T_EQ(m.b.len, at + 8);
	T_EQ(le32(g + at), hp_crc32(0, tar.buf, tar.len));
	T_EQ(le32(g + at + 4), (uint32_t)tar.len);
	T_EQ(tar.len % 512, 0);
	T_STREQ(tar.buf, "MANIFEST.json");
	for (i = 0; i < 512; i++)
		sum += (i >= 148 && i < 156) ? ' ' : (unsigned char)tar.buf[i];
	T_EQ(strtoul(tar.buf + 148, NULL, 8), sum);
	T_STREQ(tar.buf + 257, "ustar");
	/* The second member: the name split into prefix and name. */
	T_STREQ(tar.buf + 1024, "journal.log");
	T_ASSERT(!strncmp(tar.buf + 1024 + 345, longname, strlen(longname) - strlen("/journal.log")));
	T_EQ(strtoul(tar.buf + 1024 + 124, NULL, 8), 200000);
	T_ASSERT(!memcmp(tar.buf + 1536, big, 200000));
	T_EQ(hp_crc32(0, "123456789", 9), 0xcbf43926u);
	free(big);
	hp_buf_release(&tar);
	hp_buf_release(&m.b);
}

T_MAIN(T(t_every_kind), T(t_private_key_block), T(t_ordinary_text_kept), T(t_tgz_reads_back))
