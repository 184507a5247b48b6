/*
 * The agent message codec of the SSM data channel: the 120-byte big-endian
 * header (type, sequence number, flags, swapped-halves message id,
 * SHA-256 payload digest, payload type and length), message ids, and the
 * acknowledge payload. Decoding validates everything it reads and never
 * trusts a length it has not checked against the bytes present.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hp/json.h"
#include "ssm-int.h"

static uint32_t get32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return ((uint64_t)get32(p) << 32) | get32(p + 4);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static void sha256(const void *p, size_t n, uint8_t out[32])
{
	unsigned int len = 0;

	EVP_Digest(p, n, out, &len, EVP_sha256(), NULL);
}

int hp_ssm_msg_decode(const uint8_t *buf, size_t n, struct hp_ssm_msg *m, const char **why)
{
	uint32_t hl;
	size_t i, start, end;
	uint8_t digest[32];

	memset(m, 0, sizeof(*m));
	if (n < HP_SSM_PAYLOAD_OFFSET) {
		*why = "message shorter than its header";
		return -1;
	}
	hl = get32(buf);
	/* The fixed fields end at 116; a longer header is skipped, a shorter one is garbage. */
	if (hl < HP_SSM_HEADER_LEN || (size_t)hl > n - 4) {
		*why = "bad header length";
		return -1;
	}
	/* Type: ASCII, padded with spaces or NULs. */
	for (start = 4; start < 36 && (buf[start] == ' ' || buf[start] == '\0'); start++)
		;
	for (end = 36; end > start && (buf[end - 1] == ' ' || buf[end - 1] == '\0'); end--)
		;
	for (i = start; i < end; i++) {
		if (buf[i] < 0x21 || buf[i] > 0x7E) {
			*why = "message type is not printable text";
			return -1;
		}
	}
	if (end == start) {
		*why = "empty message type";
		return -1;
	}
	memcpy(m->type, buf + start, end - start);
	m->type[end - start] = '\0';
	m->schema = get32(buf + 36);
	m->created_ms = get64(buf + 40);
	m->seq = (int64_t)get64(buf + 48);
	m->flags = get64(buf + 56);
	memcpy(m->id, buf + 72, 8);
	memcpy(m->id + 8, buf + 64, 8);
	m->payload_type = get32(buf + 112);
	m->payload_len = get32(buf + hl);
	m->payload = buf + hl + 4;
	if (m->payload_len != n - hl - 4) {
		*why = "payload length does not match the bytes received";
		return -1;
	}
	if (!strcmp(m->type, "start_publication") || !strcmp(m->type, "pause_publication"))
		return 0;
	if (!m->created_ms) {
		*why = "CreatedDate is zero";
		return -1;
	}
	sha256(m->payload, m->payload_len, digest);
	if (memcmp(digest, buf + 80, 32)) {
		*why = "payload digest mismatch";
		return -1;
	}
	return 0;
}

void hp_ssm_msg_encode(struct hp_buf *out, const char *type, uint64_t created_ms, int64_t seq,
		       uint64_t flags, const uint8_t id[16], uint32_t payload_type, const void *p,
		       size_t n)
{
	uint8_t h[HP_SSM_PAYLOAD_OFFSET];
	size_t tl = strlen(type);

	if (tl > 32 || n > UINT32_MAX)
		hp_die("agent message type or payload too large");
	put32(h, HP_SSM_HEADER_LEN);
	memset(h + 4, ' ', 32);
	memcpy(h + 4, type, tl);
	put32(h + 36, 1);
	put64(h + 40, created_ms);
	put64(h + 48, (uint64_t)seq);
	put64(h + 56, flags);
	memcpy(h + 64, id + 8, 8);
	memcpy(h + 72, id, 8);
	sha256(p ? p : "", n, h + 80);
	put32(h + 112, payload_type);
	put32(h + 116, (uint32_t)n);
	hp_buf_putn(out, h, sizeof(h));
	if (n)
		hp_buf_putn(out, p, n);
}

void hp_ssm_uuid_format(const uint8_t id[16], char out[37])
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0;

	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[id[i] >> 4];
		out[o++] = hex[id[i] & 15];
	}
	out[o] = '\0';
}

void hp_ssm_uuid_new(struct hp_sys *sys, uint8_t id[16])
{
	size_t i;

	for (i = 0; i < 16; i += 4) {
		uint32_t r = sys->random(sys);
		id[i] = (uint8_t)r;
		id[i + 1] = (uint8_t)(r >> 8);
		id[i + 2] = (uint8_t)(r >> 16);
		id[i + 3] = (uint8_t)(r >> 24);
	}
	id[6] = (uint8_t)((id[6] & 0x0F) | 0x40);
	id[8] = (uint8_t)((id[8] & 0x3F) | 0x80);
}

void hp_ssm_ack_payload(struct hp_buf *out, const struct hp_ssm_msg *m)
{
	char id[37];

	hp_ssm_uuid_format(m->id, id);
	/* The type is printable ASCII without quotes or backslashes only if validated; escape anyway. */
	hp_buf_puts(out, "{\"AcknowledgedMessageType\":\"");
	{
		const char *t;
		for (t = m->type; *t; t++) {
			if (*t == '"' || *t == '\\')
				hp_buf_putc(out, '\\');
			hp_buf_putc(out, *t);
		}
	}
	hp_buf_printf(out, "\",\"AcknowledgedMessageId\":\"%s\","
		      "\"AcknowledgedMessageSequenceNumber\":%lld,\"IsSequentialMessage\":true}",
		      id, (long long)m->seq);
}

int hp_ssm_ack_parse(const uint8_t *p, size_t n, int64_t *seq)
{
	cJSON *j = hp_json_parse((const char *)p, n, NULL);
	const cJSON *s;
	int rc = -1;

	s = cJSON_GetObjectItemCaseSensitive(j, "AcknowledgedMessageSequenceNumber");
	if (cJSON_IsNumber(s) && s->valuedouble >= 0 && s->valuedouble < 9007199254740992.0 &&
	    s->valuedouble == (double)(int64_t)s->valuedouble) {
		*seq = (int64_t)s->valuedouble;
		rc = 0;
	}
	cJSON_Delete(j);
	return rc;
}
