/*
 * The SSM data channel's codecs: WebSocket frames (RFC 6455 examples,
 * length forms, control-frame rules, fragmentation), the upgrade reply,
 * the agent message header against the protocol's test vector, digest and
 * length validation, and random/garbled input that must fail cleanly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/collect/ssm/ssm-int.h"
#include "t.h"

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = 0;

	while (h[0] && h[1]) {
		unsigned v;
		if (h[0] == ' ') {
			h++;
			continue;
		}
		sscanf(h, "%2x", &v);
		out[n++] = (uint8_t)v;
		h += 2;
	}
	return n;
}

/* A tiny xorshift generator, so the fuzz cases are the same on every run. */
static uint32_t rnd_state = 2463534242u;
static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

static void t_accept_key_rfc_example(void)
{
	char out[29];

	/* RFC 6455 section 1.3. */
	hp_ws_accept_for("dGhlIHNhbXBsZSBub25jZQ==", out);
	T_STREQ(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

static void t_parse_rfc_examples(void)
{
	/* RFC 6455 5.7: unmasked "Hello", then the fragmented "Hel" + "lo". */
	uint8_t one[] = { 0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f };
	uint8_t frag[] = { 0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f };
	uint8_t ping[] = { 0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f };
	struct hp_ws_frame f;
	struct hp_ws_asm a;
	const char *why = NULL;
	long used;

	used = hp_ws_parse(one, sizeof(one), 1024, &f, &why);
	T_EQ(used, 7);
	T_EQ(f.fin, 1);
	T_EQ(f.opcode, HP_WS_TEXT);
	T_EQ(f.len, 5);
	T_ASSERT(!memcmp(f.payload, "Hello", 5));

	hp_ws_asm_init(&a, 1024);
	used = hp_ws_parse(frag, sizeof(frag), 1024, &f, &why);
	T_EQ(used, 5);
	T_EQ(f.fin, 0);
	T_EQ(hp_ws_asm_feed(&a, &f, &why), HP_WS_MORE);
	/* A ping in the middle of a fragmented message is allowed and passed up. */
	T_EQ(hp_ws_parse(ping, sizeof(ping), 1024, &f, &why), 7);
	T_EQ(hp_ws_asm_feed(&a, &f, &why), HP_WS_CONTROL);
	T_EQ(hp_ws_parse(frag + 5, sizeof(frag) - 5, 1024, &f, &why), 4);
	T_EQ(f.opcode, HP_WS_CONT);
	T_EQ(hp_ws_asm_feed(&a, &f, &why), HP_WS_MESSAGE);
	T_EQ(a.opcode, HP_WS_TEXT);
	T_EQ(a.msg.len, 5);
	T_STREQ(a.msg.buf, "Hello");
	hp_ws_asm_release(&a);
}

static void t_parse_needs_more_bytes(void)
{
	uint8_t buf[300];
	struct hp_ws_frame f;
	const char *why = NULL;
	size_t i;

	/* 16-bit length form: 256 bytes of payload. */
	buf[0] = 0x82;
	buf[1] = 126;
	buf[2] = 0x01;
	buf[3] = 0x00;
	memset(buf + 4, 'x', 256);
	for (i = 0; i < 260; i++)
		T_EQ(hp_ws_parse(buf, i, 4096, &f, &why), 0);
	T_EQ(hp_ws_parse(buf, 260, 4096, &f, &why), 260);
	T_EQ(f.len, 256);
	/* The same frame over a smaller limit is refused, not truncated. */
	T_EQ(hp_ws_parse(buf, 260, 255, &f, &why), -1);
	T_CONTAINS(why, "limit");
}

static void t_parse_refuses_bad_frames(void)
{
	static const struct {
		const char *hex;
		const char *why;
	} cases[] = {
		{ "c1 00", "reserved" },                         /* RSV1 without an extension */
		{ "83 00", "opcode" },                           /* opcode 3 is reserved */
		{ "8b 00", "opcode" },                           /* opcode 11 is reserved */
		{ "09 00", "fragmented control" },               /* ping without FIN */
		{ "89 7e 00 80", "125" },                        /* ping with 128 bytes */
		{ "82 85 01 02 03 04 00 00 00 00 00", "masked" },/* servers must not mask */
		{ "82 7f 80 00 00 00 00 00 00 00", "top bit" },  /* 64-bit length, top bit set */
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		uint8_t buf[64];
		size_t n = unhex(cases[i].hex, buf);
		struct hp_ws_frame f;
		const char *why = NULL;

		if (hp_ws_parse(buf, n, 1 << 20, &f, &why) != -1)
			T_FAILF("case %zu (%s) was accepted", i, cases[i].hex);
		T_CONTAINS(why, cases[i].why);
	}
}

static void t_assembler_rules(void)
{
	struct hp_ws_asm a;
	struct hp_ws_frame cont = { 1, HP_WS_CONT, (const uint8_t *)"x", 1 };
	struct hp_ws_frame start = { 0, HP_WS_BINARY, (const uint8_t *)"abcd", 4 };
	struct hp_ws_frame text = { 1, HP_WS_TEXT, (const uint8_t *)"t", 1 };
	const char *why = NULL;

	hp_ws_asm_init(&a, 6);
	T_EQ(hp_ws_asm_feed(&a, &cont, &why), HP_WS_BAD);
	T_CONTAINS(why, "continuation");
	T_EQ(hp_ws_asm_feed(&a, &start, &why), HP_WS_MORE);
	T_EQ(hp_ws_asm_feed(&a, &text, &why), HP_WS_BAD);
	T_CONTAINS(why, "inside");
	/* Over the cap: refused. */
	hp_ws_asm_release(&a);
	hp_ws_asm_init(&a, 6);
	T_EQ(hp_ws_asm_feed(&a, &start, &why), HP_WS_MORE);
	cont.fin = 0;
	cont.payload = (const uint8_t *)"efg";
	cont.len = 3;
	T_EQ(hp_ws_asm_feed(&a, &cont, &why), HP_WS_BAD);
	T_CONTAINS(why, "larger");
	hp_ws_asm_release(&a);
}

static void t_encode_masks_and_lengths(void)
{
	static const size_t sizes[] = { 0, 5, 125, 126, 65535, 65536, 70000 };
	const uint8_t mask[4] = { 0x37, 0xfa, 0x21, 0x3d };
	size_t k;

	/* RFC 6455 5.7: a masked "Hello" from a client. */
	{
		struct hp_buf b = HP_BUF_INIT(1024);
		uint8_t want[16];
		size_t n = unhex("81 85 37 fa 21 3d 7f 9f 4d 51 58", want);
		hp_ws_encode(&b, HP_WS_TEXT, 1, "Hello", 5, mask);
		T_EQ(b.len, n);
		T_ASSERT(!memcmp(b.buf, want, n));
		hp_buf_release(&b);
	}
	for (k = 0; k < HP_ARRAY_LEN(sizes); k++) {
		struct hp_buf b = HP_BUF_INIT(1 << 20);
		uint8_t *p = malloc(sizes[k] + 1), *q;
		size_t i, hdr = sizes[k] < 126 ? 2 : sizes[k] <= 65535 ? 4 : 10;
		struct hp_ws_frame f;
		const char *why = NULL;

		for (i = 0; i < sizes[k]; i++)
			p[i] = (uint8_t)(i * 7);
		hp_ws_encode(&b, HP_WS_BINARY, 1, p, sizes[k], mask);
		T_EQ(b.len, hdr + 4 + sizes[k]);
		T_ASSERT(((uint8_t)b.buf[1]) & 0x80);
		/* Unmask by hand and check the payload survives. */
		q = (uint8_t *)b.buf + hdr + 4;
		for (i = 0; i < sizes[k]; i++)
			T_EQ(q[i] ^ mask[i & 3], p[i]);
		/* Our parser refuses it (masked), which is the server-side rule. */
		T_EQ(hp_ws_parse((uint8_t *)b.buf, b.len, 1 << 20, &f, &why), -1);
		free(p);
		hp_buf_release(&b);
	}
}

static void t_upgrade_reply(void)
{
	const char *key = "dGhlIHNhbXBsZSBub25jZQ==";
	char why[256];
	static const struct {
		const char *head;
		const char *why;   /* NULL: accepted */
	} cases[] = {
		{ "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		  "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n", NULL },
		{ "HTTP/1.1 101 OK\r\nupgrade: WebSocket\r\nconnection: keep-alive, upgrade\r\n"
		  "sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n", NULL },
		{ "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", "403 Forbidden" },
		{ "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		  "Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n", "Accept" },
		{ "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
		  "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n", "Upgrade: websocket" },
		{ "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: close\r\n"
		  "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n", "Connection" },
		{ "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		  "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
		  "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n", "extension" },
		{ "SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP reply" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		int rc = hp_ws_check_reply(cases[i].head, key, why, sizeof(why));
		if (!cases[i].why) {
			if (rc)
				T_FAILF("case %zu refused: %s", i, why);
		} else {
			if (!rc)
				T_FAILF("case %zu accepted", i);
			T_CONTAINS(why, cases[i].why);
		}
	}
}

static void t_upgrade_request(void)
{
	struct hp_buf b = HP_BUF_INIT(4096);

	hp_ws_request(&b, "ssmmessages.us-west-2.amazonaws.com",
		      "/v1/data-channel/s-1?role=publish_subscribe&cell-number=AA", "a2V5");
	T_ASSERT(hp_starts_with(b.buf, "GET /v1/data-channel/s-1?role=publish_subscribe&cell-number=AA HTTP/1.1\r\n"));
	T_CONTAINS(b.buf, "\r\nHost: ssmmessages.us-west-2.amazonaws.com\r\n");
	T_CONTAINS(b.buf, "\r\nUpgrade: websocket\r\n");
	T_CONTAINS(b.buf, "\r\nConnection: Upgrade\r\n");
	T_CONTAINS(b.buf, "\r\nSec-WebSocket-Key: a2V5\r\n");
	T_CONTAINS(b.buf, "\r\nSec-WebSocket-Version: 13\r\n");
	T_ASSERT(hp_ends_with(b.buf, "\r\n\r\n"));
	T_NOT_CONTAINS(b.buf, "Authorization");
	hp_buf_release(&b);
}

/* The protocol notes' vector: input_stream_data, seq 0, payload "echo hi\n". */
static const char vector_hex[] =
	"00000074"
	"696e7075745f73747265616d5f64617461202020202020202020202020202020"
	"00000001"
	"0000018bcfe56800"
	"0000000000000000" "0000000000000000"
	"a508b5f073f31b16dd01e56bff48483e"
	"ab08508fdf5ca4da5c4995987bc41c56c048aaa5eeb046417ae4049b7d40286e"
	"00000001" "00000008"
	"6563686f2068690a";

static void vector_id(uint8_t id[16])
{
	unhex("dd01e56bff48483ea508b5f073f31b16", id);
}

static void t_message_vector_encode(void)
{
	struct hp_buf b = HP_BUF_INIT(4096);
	uint8_t id[16], want[256];
	size_t n = unhex(vector_hex, want);

	vector_id(id);
	hp_ssm_msg_encode(&b, "input_stream_data", 1700000000000ULL, 0, 0, id, 1, "echo hi\n", 8);
	T_EQ(n, 128);
	T_EQ(b.len, 128);
	T_ASSERT(!memcmp(b.buf, want, n));
	hp_buf_release(&b);
}

static void t_message_vector_decode(void)
{
	uint8_t buf[256], id[16];
	size_t n = unhex(vector_hex, buf);
	struct hp_ssm_msg m;
	const char *why = NULL;
	char s[37];

	T_EQ(hp_ssm_msg_decode(buf, n, &m, &why), 0);
	T_STREQ(m.type, "input_stream_data");
	T_EQ(m.schema, 1);
	T_EQ(m.created_ms, 1700000000000LL);
	T_EQ(m.seq, 0);
	T_EQ(m.flags, 0);
	T_EQ(m.payload_type, 1);
	T_EQ(m.payload_len, 8);
	T_ASSERT(!memcmp(m.payload, "echo hi\n", 8));
	vector_id(id);
	T_ASSERT(!memcmp(m.id, id, 16));
	hp_ssm_uuid_format(m.id, s);
	T_STREQ(s, "dd01e56b-ff48-483e-a508-b5f073f31b16");
}

static void t_message_validation(void)
{
	uint8_t good[256], buf[300];
	size_t n = unhex(vector_hex, good);
	struct hp_ssm_msg m;
	const char *why;

	/* Payload digest off by one bit. */
	memcpy(buf, good, n);
	buf[90] ^= 1;
	why = NULL;
	T_EQ(hp_ssm_msg_decode(buf, n, &m, &why), -1);
	T_CONTAINS(why, "digest");
	/* Payload changed under a correct header. */
	memcpy(buf, good, n);
	buf[125] = 'X';
	T_EQ(hp_ssm_msg_decode(buf, n, &m, &why), -1);
	T_CONTAINS(why, "digest");
	/* PayloadLength says 9, 8 bytes present. */
	memcpy(buf, good, n);
	buf[119] = 9;
	T_EQ(hp_ssm_msg_decode(buf, n, &m, &why), -1);
	T_CONTAINS(why, "length");
	/* An extra byte after the payload. */
	memcpy(buf, good, n);
	buf[n] = 0;
	T_EQ(hp_ssm_msg_decode(buf, n + 1, &m, &why), -1);
	/* HeaderLength too small, and too large for the buffer. */
	memcpy(buf, good, n);
	buf[3] = 100;
	T_EQ(hp_ssm_msg_decode(buf, n, &m, &why), -1);
	T_CONTAINS(why, "header length");
	buf[3] = 0xff;
	buf[2] = 0xff;
	T_EQ(hp_ssm_msg_decode(buf, n, &m, &why), -1);
	/* CreatedDate zero. */
	memcpy(buf, good, n);
	memset(buf + 40, 0, 8);
	T_EQ(hp_ssm_msg_decode(buf, n, &m, &why), -1);
	T_CONTAINS(why, "CreatedDate");
	/* Blank type. */
	memcpy(buf, good, n);
	memset(buf + 4, ' ', 32);
	T_EQ(hp_ssm_msg_decode(buf, n, &m, &why), -1);
	T_CONTAINS(why, "type");
	/* Control bytes in the type. */
	memcpy(buf, good, n);
	buf[6] = 0x01;
	T_EQ(hp_ssm_msg_decode(buf, n, &m, &why), -1);
	/* Every prefix is too short or inconsistent. */
	{
		size_t k;
		for (k = 0; k < n; k++)
			T_EQ(hp_ssm_msg_decode(good, k, &m, &why), -1);
	}
}

static void t_publication_skips_digest(void)
{
	struct hp_buf b = HP_BUF_INIT(4096);
	uint8_t id[16] = { 0 };
	struct hp_ssm_msg m;
	const char *why = NULL;

	hp_ssm_msg_encode(&b, "pause_publication", 1, 0, 0, id, 0, NULL, 0);
	/* Garble the digest and the date: publication messages are not checked. */
	b.buf[85] ^= 0x55;
	memset(b.buf + 40, 0, 8);
	T_EQ(hp_ssm_msg_decode((uint8_t *)b.buf, b.len, &m, &why), 0);
	T_STREQ(m.type, "pause_publication");
	hp_buf_release(&b);
}

static void t_message_round_trip_and_longer_header(void)
{
	struct hp_buf b = HP_BUF_INIT(1 << 20), big = HP_BUF_INIT(1 << 20);
	uint8_t id[16];
	struct hp_ssm_msg m;
	const char *why = NULL;
	char *payload = malloc(5000);
	size_t i;

	for (i = 0; i < 5000; i++)
		payload[i] = (char)('a' + i % 26);
	for (i = 0; i < 16; i++)
		id[i] = (uint8_t)(i * 17);
	hp_ssm_msg_encode(&b, "output_stream_data", 42, 77, 1, id, 11, payload, 5000);
	T_EQ(hp_ssm_msg_decode((uint8_t *)b.buf, b.len, &m, &why), 0);
	T_EQ(m.seq, 77);
	T_EQ(m.flags, 1);
	T_EQ(m.payload_type, 11);
	T_EQ(m.payload_len, 5000);
	T_ASSERT(!memcmp(m.payload, payload, 5000));
	T_ASSERT(!memcmp(m.id, id, 16));
	/* A sender with a longer header (HeaderLength 124): payload read from there. */
	hp_buf_putn(&big, b.buf, 116);
	hp_buf_putn(&big, "\0\0\0\0\0\0\0\0", 8);
	hp_buf_putn(&big, b.buf + 116, b.len - 116);
	big.buf[3] = 124;
	T_EQ(hp_ssm_msg_decode((uint8_t *)big.buf, big.len, &m, &why), 0);
	T_EQ(m.payload_len, 5000);
	T_ASSERT(!memcmp(m.payload, payload, 5000));
	free(payload);
	hp_buf_release(&b);
	hp_buf_release(&big);
}

static void t_ack_payload(void)
{
	struct hp_buf b = HP_BUF_INIT(4096);
	struct hp_ssm_msg m;
	int64_t seq = -1;

	memset(&m, 0, sizeof(m));
	strcpy(m.type, "output_stream_data");
	m.seq = 12345678901LL;
	unhex("dd01e56bff48483ea508b5f073f31b16", m.id);
	hp_ssm_ack_payload(&b, &m);
	T_STREQ(b.buf, "{\"AcknowledgedMessageType\":\"output_stream_data\","
		"\"AcknowledgedMessageId\":\"dd01e56b-ff48-483e-a508-b5f073f31b16\","
		"\"AcknowledgedMessageSequenceNumber\":12345678901,\"IsSequentialMessage\":true}");
	T_EQ(hp_ssm_ack_parse((const uint8_t *)b.buf, b.len, &seq), 0);
	T_EQ(seq, 12345678901LL);
	T_EQ(hp_ssm_ack_parse((const uint8_t *)"{}", 2, &seq), -1);
	T_EQ(hp_ssm_ack_parse((const uint8_t *)"{\"AcknowledgedMessageSequenceNumber\":-3}", 40, &seq), -1);
	T_EQ(hp_ssm_ack_parse((const uint8_t *)"{\"AcknowledgedMessageSequenceNumber\":1.5}", 41, &seq), -1);
	T_EQ(hp_ssm_ack_parse((const uint8_t *)"not json", 8, &seq), -1);
	hp_buf_release(&b);
}

static uint32_t counter_random(struct hp_sys *sys)
{
	static uint32_t v = 0x12345678;
	(void)sys;
	v = v * 1664525u + 1013904223u;
	return v;
}

static void t_uuid_v4(void)
{
	struct hp_sys sys;
	uint8_t a[16], b[16];
	char s[37];

	memset(&sys, 0, sizeof(sys));
	sys.random = counter_random;
	hp_ssm_uuid_new(&sys, a);
	hp_ssm_uuid_new(&sys, b);
	T_ASSERT(memcmp(a, b, 16));
	hp_ssm_uuid_format(a, s);
	T_EQ(strlen(s), 36);
	T_EQ(s[14], '4');
	T_ASSERT(strchr("89ab", s[19]) != NULL);
}

/* Random and mutated bytes: every decoder answers, none reads out of bounds (ASan). */
static void t_fuzz_decoders(void)
{
	uint8_t good[256];
	size_t gn = unhex(vector_hex, good);
	int round;

	for (round = 0; round < 20000; round++) {
		size_t n = rnd() % 300, i;
		uint8_t *buf = malloc(n ? n : 1);
		struct hp_ws_frame f;
		struct hp_ssm_msg m;
		const char *why = NULL;
		long used;

		if (round % 2 && n >= gn) {
			/* A valid message with a few bytes flipped. */
			memcpy(buf, good, gn);
			n = gn;
			for (i = 0; i < 1 + rnd() % 4; i++)
				buf[rnd() % n] ^= (uint8_t)(1 + rnd() % 255);
		} else {
			for (i = 0; i < n; i++)
				buf[i] = (uint8_t)rnd();
		}
		used = hp_ws_parse(buf, n, 1 << 16, &f, &why);
		T_ASSERT(used >= -1 && used <= (long)n);
		if (used > 0)
			T_ASSERT(f.payload + f.len <= buf + n);
		if (!hp_ssm_msg_decode(buf, n, &m, &why)) {
			T_ASSERT(m.payload + m.payload_len == buf + n);
			T_ASSERT(m.type[0]);
		} else {
			T_ASSERT(why != NULL);
		}
		free(buf);
	}
}

T_MAIN(T(t_accept_key_rfc_example), T(t_parse_rfc_examples), T(t_parse_needs_more_bytes),
       T(t_parse_refuses_bad_frames), T(t_assembler_rules), T(t_encode_masks_and_lengths),
       T(t_upgrade_reply), T(t_upgrade_request), T(t_message_vector_encode),
       T(t_message_vector_decode), T(t_message_validation), T(t_publication_skips_digest),
       T(t_message_round_trip_and_longer_header), T(t_ack_payload), T(t_uuid_v4),
       T(t_fuzz_decoders))
