/*
 * The reliable stream (reordering, de-duplication, retransmission timeout)
 * and whole sessions against a scripted agent in memory: handshake, output
 * streams, exit code, duplicates, reordering, bad digests, KMS refusal,
 * pings, fragmentation, caps, silence and dropped connections; one node
 * end to end over a fake stream from sys->tls_connect; and the probe
 * collector over it: the output decoded when the session ends, the raw
 * text kept nowhere but in the snapshot file being saved. Time is a fake
 * clock that jumps to each deadline the client waits for.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fake-sys.h"
#include "hp/check.h"
#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "../../src/collect/ssm/ssm-int.h"
#include "probe-t.h"
#include "t.h"

/* ------------------------------------------------------------ rx / tx */

static void t_rx_in_order_and_duplicates(void)
{
	struct hp_ssm_rx rx;

	hp_ssm_rx_init(&rx, 8, 1024);
	T_EQ(hp_ssm_rx_offer(&rx, 0, 1, (const uint8_t *)"a", 1), HP_RX_DELIVER);
	T_EQ(hp_ssm_rx_offer(&rx, 1, 1, (const uint8_t *)"b", 1), HP_RX_DELIVER);
	T_EQ(hp_ssm_rx_offer(&rx, 0, 1, (const uint8_t *)"a", 1), HP_RX_DUPLICATE);
	T_EQ(hp_ssm_rx_offer(&rx, 1, 1, (const uint8_t *)"b", 1), HP_RX_DUPLICATE);
	T_EQ(rx.expected, 2);
	hp_ssm_rx_release(&rx);
}

static void t_rx_reorders(void)
{
	struct hp_ssm_rx rx;
	struct hp_ssm_held h;
	char got[16] = "";

	hp_ssm_rx_init(&rx, 8, 1024);
	T_EQ(hp_ssm_rx_offer(&rx, 3, 1, (const uint8_t *)"d", 1), HP_RX_HELD);
	T_EQ(hp_ssm_rx_offer(&rx, 1, 11, (const uint8_t *)"b", 1), HP_RX_HELD);
	T_EQ(hp_ssm_rx_offer(&rx, 3, 1, (const uint8_t *)"d", 1), HP_RX_DUPLICATE);
	T_EQ(hp_ssm_rx_pop(&rx, &h), 0);
	T_EQ(hp_ssm_rx_offer(&rx, 0, 1, (const uint8_t *)"a", 1), HP_RX_DELIVER);
	strcat(got, "a");
	while (hp_ssm_rx_pop(&rx, &h)) {
		strncat(got, (const char *)h.data, h.len);
		if (h.seq == 1)
			T_EQ(h.payload_type, 11);
		free(h.data);
	}
	/* 2 is still missing, so 3 stays held. */
	T_STREQ(got, "ab");
	T_EQ(rx.nheld, 1);
	T_EQ(hp_ssm_rx_offer(&rx, 2, 1, (const uint8_t *)"c", 1), HP_RX_DELIVER);
	strcat(got, "c");
	while (hp_ssm_rx_pop(&rx, &h)) {
		strncat(got, (const char *)h.data, h.len);
		free(h.data);
	}
	T_STREQ(got, "abcd");
	T_EQ(rx.nheld, 0);
	T_EQ(rx.held_bytes, 0);
	T_EQ(rx.expected, 4);
	hp_ssm_rx_release(&rx);
}

static void t_rx_bounded(void)
{
	struct hp_ssm_rx rx;
	uint8_t big[600];

	memset(big, 'x', sizeof(big));
	hp_ssm_rx_init(&rx, 2, 1000);
	T_EQ(hp_ssm_rx_offer(&rx, 5, 1, big, 600), HP_RX_HELD);
	/* Over the byte budget. */
	T_EQ(hp_ssm_rx_offer(&rx, 6, 1, big, 600), HP_RX_FULL);
	T_EQ(hp_ssm_rx_offer(&rx, 7, 1, big, 10), HP_RX_HELD);
	/* Over the message count. */
	T_EQ(hp_ssm_rx_offer(&rx, 8, 1, big, 1), HP_RX_FULL);
	/* The next in-order message is always delivered, room or not. */
	T_EQ(hp_ssm_rx_offer(&rx, 0, 1, big, 600), HP_RX_DELIVER);
	hp_ssm_rx_release(&rx);
}

static void t_tx_rto_and_resend(void)
{
	struct hp_ssm_tx tx;
	struct hp_ssm_unacked *u;

	hp_ssm_tx_init(&tx, 2);
	T_EQ(tx.rto_ms, HP_SSM_RTO_INITIAL_MS);
	T_EQ(hp_ssm_tx_add(&tx, 0, "f0", 2, 1000), 0);
	T_EQ(hp_ssm_tx_add(&tx, 1, "f1", 2, 1050), 0);
	T_EQ(hp_ssm_tx_add(&tx, 2, "f2", 2, 1060), -1);
	T_ASSERT(hp_ssm_tx_due(&tx, 1199) == NULL);
	u = hp_ssm_tx_due(&tx, 1200);
	T_ASSERT(u != NULL);
	T_EQ(u->seq, 0);
	hp_ssm_tx_resent(&tx, u, 1200);
	/* Now seq 1 is the oldest send. */
	u = hp_ssm_tx_due(&tx, 1250);
	T_ASSERT(u != NULL);
	T_EQ(u->seq, 1);
	hp_ssm_tx_resent(&tx, u, 1250);
	/* A resent message's ack does not move the estimate. */
	T_EQ(hp_ssm_tx_ack(&tx, 0, 1300), 1);
	T_EQ(tx.rto_ms, HP_SSM_RTO_INITIAL_MS);
	T_EQ(hp_ssm_tx_ack(&tx, 0, 1300), 0);
	T_EQ(tx.n, 1);
	/* A clean round trip of 20 ms: srtt 90, rttvar 20, rto 170. */
	T_EQ(hp_ssm_tx_add(&tx, 2, "f2", 2, 2000), 0);
	T_EQ(hp_ssm_tx_ack(&tx, 2, 2020), 1);
	T_EQ(tx.rto_ms, 170);
	/* Slow acks push it up to the 1 s cap and no further. */
	{
		int i;
		for (i = 0; i < 20; i++) {
			T_EQ(hp_ssm_tx_add(&tx, 10 + i, "x", 1, 10000 * i), 0);
			T_EQ(hp_ssm_tx_ack(&tx, 10 + i, 10000 * i + 5000), 1);
		}
	}
	T_EQ(tx.rto_ms, HP_SSM_RTO_MAX_MS);
	hp_ssm_tx_release(&tx);
}

/* ---------------------------------------------------- scripted agent */

static int64_t clock_ms = 1000000;
static uint32_t rnd_v = 7;

static int64_t f_clock(struct hp_sys *s)
{
	(void)s;
	return clock_ms;
}

static uint32_t f_rand(struct hp_sys *s)
{
	(void)s;
	rnd_v = rnd_v * 1103515245u + 12345u;
	return rnd_v;
}

static struct hp_sys fsys;

struct sent_msg {
	int opcode;
	char type[33];
	int64_t seq;
	uint32_t ptype;
	char *payload;
	size_t len;
};

struct agent {
	struct hp_stream io;
	const char *reply;        /* upgrade reply; @ACCEPT@ becomes the accept key */
	struct hp_buf head;       /* the upgrade reply, once the request came */
	struct hp_buf frames;     /* server frames queued after the upgrade */
	size_t pos, head_pos;
	int upgraded;
	int eof_at_end;           /* close once everything was read */
	size_t max_read;          /* bytes per recv (tests short reads) */
	int64_t *clock;           /* the clock an idle recv moves on (clock_ms unless set) */
	int closed;               /* close() was called */
	struct hp_buf client;     /* raw bytes from the client */
	struct sent_msg sent[4096];
	size_t nsent;
};

static void agent_decode_client(struct agent *ag)
{
	size_t off = 0;

	/* Client frames: always masked, FIN set. */
	while (ag->client.len - off >= 6) {
		uint8_t *b = (uint8_t *)ag->client.buf + off;
		size_t len = b[1] & 0x7f, h = 2, i;
		uint8_t mask[4];
		struct sent_msg *s;

		if (len == 126) {
			len = ((size_t)b[2] << 8) | b[3];
			h = 4;
		} else if (len == 127) {
			len = 0;
			for (i = 0; i < 8; i++)
				len = (len << 8) | b[2 + i];
			h = 10;
		}
		if (ag->client.len - off < h + 4 + len)
			break;
		memcpy(mask, b + h, 4);
		T_ASSERT(ag->nsent < HP_ARRAY_LEN(ag->sent));
		s = &ag->sent[ag->nsent++];
		memset(s, 0, sizeof(*s));
		s->opcode = b[0] & 0x0f;
		s->payload = malloc(len + 1);
		for (i = 0; i < len; i++)
			s->payload[i] = (char)(b[h + 4 + i] ^ mask[i & 3]);
		s->payload[len] = '\0';
		s->len = len;
		if (s->opcode == HP_WS_BINARY) {
			struct hp_ssm_msg m;
			const char *why;
			if (!hp_ssm_msg_decode((uint8_t *)s->payload, len, &m, &why)) {
				strcpy(s->type, m.type);
				s->seq = m.seq;
				s->ptype = m.payload_type;
				memmove(s->payload, m.payload, m.payload_len);
				s->len = m.payload_len;
				s->payload[s->len] = '\0';
			} else {
				strcpy(s->type, "undecodable");
			}
		}
		off += h + 4 + len;
	}
	memmove(ag->client.buf, ag->client.buf + off, ag->client.len - off);
	ag->client.len -= off;
}

static int a_send(struct hp_stream *io, const void *p, size_t n, int64_t deadline)
{
	struct agent *ag = io->impl;

	(void)deadline;
	if (!ag->upgraded) {
		const char *k = strstr(p, "Sec-WebSocket-Key: ");
		char key[64], acc[29];
		size_t kl;
		T_ASSERT(k != NULL);
		k += strlen("Sec-WebSocket-Key: ");
		kl = strcspn(k, "\r");
		memcpy(key, k, kl);
		key[kl] = '\0';
		hp_ws_accept_for(key, acc);
		{
			const char *at = strstr(ag->reply, "@ACCEPT@");
			hp_buf_putn(&ag->head, ag->reply, (size_t)(at - ag->reply));
			hp_buf_puts(&ag->head, acc);
			hp_buf_puts(&ag->head, at + 8);
		}
		ag->upgraded = 1;
		return 0;
	}
	hp_buf_putn(&ag->client, p, n);
	agent_decode_client(ag);
	return 0;
}

static long a_recv(struct hp_stream *io, void *p, size_t n, int64_t deadline)
{
	struct agent *ag = io->impl;
	size_t avail;

	if (n > ag->max_read)
		n = ag->max_read;
	if (ag->upgraded && ag->head_pos < ag->head.len) {
		avail = ag->head.len - ag->head_pos;
		if (avail > n)
			avail = n;
		memcpy(p, ag->head.buf + ag->head_pos, avail);
		ag->head_pos += avail;
		return (long)avail;
	}
	if (ag->upgraded && ag->pos < ag->frames.len) {
		avail = ag->frames.len - ag->pos;
		if (avail > n)
			avail = n;
		memcpy(p, ag->frames.buf + ag->pos, avail);
		ag->pos += avail;
		return (long)avail;
	}
	if (ag->upgraded && ag->eof_at_end) {
		hp_strlcpy(io->err, "connection reset by peer", sizeof(io->err));
		return -1;
	}
	/* Nothing to read: time passes until the caller's deadline. */
	if (deadline > *ag->clock)
		*ag->clock = deadline;
	return 0;
}

static void a_close(struct hp_stream *io)
{
	struct agent *ag = io->impl;

	ag->closed++;
}

static const char ok_reply[] =
	"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
	"Sec-WebSocket-Accept: @ACCEPT@\r\n\r\n";

static void agent_init(struct agent *ag)
{
	memset(ag, 0, sizeof(*ag));
	ag->io.send = a_send;
	ag->io.recv = a_recv;
	ag->io.close = a_close;
	ag->io.impl = ag;
	ag->clock = &clock_ms;
	ag->reply = ok_reply;
	ag->max_read = 100000;
	ag->eof_at_end = 0;
	hp_buf_init(&ag->head, 4096);
	hp_buf_init(&ag->frames, 8 << 20);
	hp_buf_init(&ag->client, 8 << 20);
	memset(&fsys, 0, sizeof(fsys));
	fsys.now_ms = f_clock;
	fsys.monotonic_ms = f_clock;
	fsys.random = f_rand;
}

static void agent_release(struct agent *ag)
{
	size_t i;

	for (i = 0; i < ag->nsent; i++)
		free(ag->sent[i].payload);
	hp_buf_release(&ag->head);
	hp_buf_release(&ag->frames);
	hp_buf_release(&ag->client);
}

/* One unmasked server frame (or several fragments when frags > 1). */
static void server_frame(struct agent *ag, int opcode, const void *p, size_t n, int frags)
{
	size_t per = frags > 1 ? (n + (size_t)frags - 1) / (size_t)frags : n, off = 0;
	int first = 1;

	do {
		size_t len = n - off < per ? n - off : per;
		int fin = off + len >= n;
		uint8_t h[10];
		size_t hl = 0, i;

		h[hl++] = (uint8_t)((fin ? 0x80 : 0) | (first ? opcode : 0));
		if (len < 126) {
			h[hl++] = (uint8_t)len;
		} else if (len <= 0xffff) {
			h[hl++] = 126;
			h[hl++] = (uint8_t)(len >> 8);
			h[hl++] = (uint8_t)len;
		} else {
			h[hl++] = 127;
			for (i = 0; i < 8; i++)
				h[hl++] = (uint8_t)((uint64_t)len >> (56 - 8 * i));
		}
		hp_buf_putn(&ag->frames, h, hl);
		hp_buf_putn(&ag->frames, (const char *)p + off, len);
		off += len;
		first = 0;
	} while (off < n);
}

/* An agent message; corrupt != 0 flips a digest byte. */
static void agent_msg(struct agent *ag, const char *type, int64_t seq, uint32_t ptype,
		      const char *payload, int corrupt, int frags)
{
	struct hp_buf m = HP_BUF_INIT(4 << 20);
	uint8_t id[16];
	size_t i;

	for (i = 0; i < 16; i++)
		id[i] = (uint8_t)(seq * 31 + (int64_t)i);
	hp_ssm_msg_encode(&m, type, 1700000000000ULL, seq, seq == 0 ? 1 : 0, id, ptype, payload,
			  strlen(payload));
	if (corrupt)
		m.buf[100] ^= 0x40;
	server_frame(ag, HP_WS_BINARY, m.buf, m.len, frags);
	hp_buf_release(&m);
}

static void out_msg(struct agent *ag, int64_t seq, uint32_t ptype, const char *payload)
{
	agent_msg(ag, "output_stream_data", seq, ptype, payload, 0, 1);
}

static const char hs_request[] =
	"{\"AgentVersion\":\"3.3.40.0\",\"RequestedClientActions\":[{\"ActionType\":\"SessionType\","
	"\"ActionParameters\":{\"SessionType\":\"NonInteractiveCommands\",\"Properties\":null}}]}";
static const char hs_complete[] = "{\"HandshakeTimeToComplete\":1000000,\"CustomerMessage\":\"\"}";
static const char closed_ok[] =
	"{\"MessageId\":\"m\",\"CreatedDate\":\"2024-01-01T00:00:00Z\",\"DestinationId\":\"d\","
	"\"SessionId\":\"s\",\"MessageType\":\"channel_closed\",\"SchemaVersion\":1,\"Output\":\"\"}";

static const struct hp_ssm_channel chan = {
	"ssmmessages.us-west-2.amazonaws.com", "/v1/data-channel/s-1?role=publish_subscribe",
	"TOKEN-abc", "0d2c6f4e-0000-4000-8000-000000000001", NULL
};

static enum hp_ssm_end run(struct agent *ag, struct hp_ssm_output *o, long budget_ms)
{
	hp_ssm_output_init(o);
	return hp_ssm_session_run(&ag->io, &fsys, &chan, clock_ms + budget_ms, o);
}

static size_t count_sent(const struct agent *ag, const char *type, uint32_t ptype)
{
	size_t i, n = 0;

	for (i = 0; i < ag->nsent; i++)
		if (!strcmp(ag->sent[i].type, type) && (ptype == 99 || ag->sent[i].ptype == ptype))
			n++;
	return n;
}

/* Acks sent for seq (by their payload). */
static size_t acks_for(const struct agent *ag, int64_t seq)
{
	size_t i, n = 0;

	for (i = 0; i < ag->nsent; i++) {
		int64_t s;
		if (strcmp(ag->sent[i].type, "acknowledge"))
			continue;
		if (!hp_ssm_ack_parse((const uint8_t *)ag->sent[i].payload, ag->sent[i].len, &s) &&
		    s == seq)
			n++;
	}
	return n;
}

static const struct sent_msg *first_of(const struct agent *ag, uint32_t ptype)
{
	size_t i;

	for (i = 0; i < ag->nsent; i++)
		if (!strcmp(ag->sent[i].type, "input_stream_data") && ag->sent[i].ptype == ptype)
			return &ag->sent[i];
	return NULL;
}

static void t_session_happy_path(void)
{
	struct agent ag;
	struct hp_ssm_output o;
	const struct sent_msg *hs;
	cJSON *j;
	int64_t s;

	agent_init(&ag);
	ag.max_read = 7;   /* short reads everywhere */
	out_msg(&ag, 0, HP_SSM_PT_HANDSHAKE_REQUEST, hs_request);
	out_msg(&ag, 1, HP_SSM_PT_HANDSHAKE_COMPLETE, hs_complete);
	out_msg(&ag, 2, HP_SSM_PT_OUTPUT, "hello ");
	out_msg(&ag, 3, HP_SSM_PT_STDERR, "warning: x\n");
	out_msg(&ag, 4, HP_SSM_PT_OUTPUT, "world\n");
	out_msg(&ag, 5, HP_SSM_PT_EXIT_CODE, "EXIT_CODE: 3");
	agent_msg(&ag, "channel_closed", 0, 0, closed_ok, 0, 1);
	T_EQ(run(&ag, &o, 10000), HP_SSM_DONE);
	T_STREQ(o.out.buf, "hello world\n");
	T_STREQ(o.err.buf, "warning: x\n");
	T_EQ(o.has_exit, 1);
	T_EQ(o.exit_code, 3);
	T_EQ(o.closed, 1);
	T_STREQ(o.agent_version, "3.3.40.0");
	T_STREQ(o.session_type, "NonInteractiveCommands");
	/* First frame: the OpenDataChannelInput text message with the token. */
	T_ASSERT(ag.nsent > 0);
	T_EQ(ag.sent[0].opcode, HP_WS_TEXT);
	j = cJSON_Parse(ag.sent[0].payload);
	T_STREQ(cJSON_GetObjectItem(j, "TokenValue")->valuestring, "TOKEN-abc");
	T_STREQ(cJSON_GetObjectItem(j, "MessageSchemaVersion")->valuestring, "1.0");
	T_STREQ(cJSON_GetObjectItem(j, "ClientId")->valuestring, chan.client_id);
	T_EQ(strlen(cJSON_GetObjectItem(j, "RequestId")->valuestring), 36);
	cJSON_Delete(j);
	/* Every stream message acknowledged once; channel_closed is not. */
	for (s = 0; s <= 5; s++)
		T_EQ(acks_for(&ag, s), 1);
	T_EQ(count_sent(&ag, "acknowledge", 99), 6);
	/* The handshake response: seq 0, the session type accepted. */
	hs = first_of(&ag, HP_SSM_PT_HANDSHAKE_RESPONSE);
	T_ASSERT(hs != NULL);
	T_EQ(hs->seq, 0);
	j = cJSON_Parse(hs->payload);
	T_ASSERT(j != NULL);
	T_STREQ(cJSON_GetObjectItem(j, "ClientVersion")->valuestring, "1.2.650.0");
	{
		const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "ProcessedClientActions"), 0);
		T_STREQ(cJSON_GetObjectItem(row, "ActionType")->valuestring, "SessionType");
		T_EQ(cJSON_GetObjectItem(row, "ActionStatus")->valueint, 1);
	}
	cJSON_Delete(j);
	/* Nothing but acks and the handshake response went out as binary messages. */
	T_EQ(count_sent(&ag, "input_stream_data", 99), 1);
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

static void t_session_reorders_and_dedups(void)
{
	struct agent ag;
	struct hp_ssm_output o;

	agent_init(&ag);
	out_msg(&ag, 0, HP_SSM_PT_HANDSHAKE_REQUEST, hs_request);
	out_msg(&ag, 1, HP_SSM_PT_HANDSHAKE_COMPLETE, hs_complete);
	out_msg(&ag, 4, HP_SSM_PT_OUTPUT, "D");
	out_msg(&ag, 3, HP_SSM_PT_OUTPUT, "C");
	out_msg(&ag, 2, HP_SSM_PT_OUTPUT, "B");
	out_msg(&ag, 2, HP_SSM_PT_OUTPUT, "B");
	out_msg(&ag, 4, HP_SSM_PT_OUTPUT, "D");
	out_msg(&ag, 6, HP_SSM_PT_EXIT_CODE, "EXIT_CODE: 0");
	out_msg(&ag, 5, HP_SSM_PT_OUTPUT, "E");
	out_msg(&ag, 6, HP_SSM_PT_EXIT_CODE, "EXIT_CODE: 0");
	agent_msg(&ag, "channel_closed", 0, 0, closed_ok, 0, 1);
	T_EQ(run(&ag, &o, 10000), HP_SSM_DONE);
	T_STREQ(o.out.buf, "BCDE");
	T_EQ(o.exit_code, 0);
	T_EQ(o.duplicates, 3);
	T_EQ(o.held, 3);
	/* Duplicates are acknowledged again. */
	T_EQ(acks_for(&ag, 2), 2);
	T_EQ(acks_for(&ag, 4), 2);
	T_EQ(acks_for(&ag, 6), 2);
	T_EQ(acks_for(&ag, 5), 1);
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

static void t_session_drops_bad_digest(void)
{
	struct agent ag;
	struct hp_ssm_output o;

	agent_init(&ag);
	out_msg(&ag, 0, HP_SSM_PT_HANDSHAKE_REQUEST, hs_request);
	out_msg(&ag, 1, HP_SSM_PT_HANDSHAKE_COMPLETE, hs_complete);
	agent_msg(&ag, "output_stream_data", 2, HP_SSM_PT_OUTPUT, "good", 1, 1);
	agent_msg(&ag, "output_stream_data", 2, HP_SSM_PT_OUTPUT, "good", 0, 1);
	out_msg(&ag, 3, HP_SSM_PT_EXIT_CODE, "EXIT_CODE: 0");
	agent_msg(&ag, "channel_closed", 0, 0, closed_ok, 0, 1);
	T_EQ(run(&ag, &o, 10000), HP_SSM_DONE);
	T_STREQ(o.out.buf, "good");
	T_EQ(o.dropped_bad, 1);
	/* Only the good copy was acknowledged. */
	T_EQ(acks_for(&ag, 2), 1);
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

static void t_session_refuses_kms(void)
{
	struct agent ag;
	struct hp_ssm_output o;
	const struct sent_msg *hs;
	cJSON *j;
	const cJSON *rows, *row;
	int seen_kms = 0;

	agent_init(&ag);
	out_msg(&ag, 0, HP_SSM_PT_HANDSHAKE_REQUEST,
		"{\"AgentVersion\":\"3.3\",\"RequestedClientActions\":["
		"{\"ActionType\":\"SessionType\",\"ActionParameters\":{\"SessionType\":\"NonInteractiveCommands\"}},"
		"{\"ActionType\":\"KMSEncryption\",\"ActionParameters\":{\"KMSKeyId\":\"arn:aws:kms:k\"}}]}");
	T_EQ(run(&ag, &o, 10000), HP_SSM_KMS);
	T_CONTAINS(o.detail, "KMS");
	hs = first_of(&ag, HP_SSM_PT_HANDSHAKE_RESPONSE);
	T_ASSERT(hs != NULL);
	j = cJSON_Parse(hs->payload);
	rows = cJSON_GetObjectItem(j, "ProcessedClientActions");
	T_EQ(cJSON_GetArraySize(rows), 2);
	cJSON_ArrayForEach(row, rows) {
		if (!strcmp(cJSON_GetObjectItem(row, "ActionType")->valuestring, "KMSEncryption")) {
			seen_kms = 1;
			T_EQ(cJSON_GetObjectItem(row, "ActionStatus")->valueint, 2);
			T_CONTAINS(cJSON_GetObjectItem(row, "Error")->valuestring, "KMS");
		}
	}
	T_ASSERT(seen_kms);
	cJSON_Delete(j);
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

static void t_session_silent_agent_times_out(void)
{
	struct agent ag;
	struct hp_ssm_output o;
	int64_t start = clock_ms;

	agent_init(&ag);
	T_EQ(run(&ag, &o, 5000), HP_SSM_TIMEOUT);
	T_ASSERT(clock_ms >= start + 5000);
	T_ASSERT(clock_ms < start + 7000);
	T_EQ(o.received, 0);
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

/* The run's stop flag (SIGINT) ends a silent session at the next tick, well before its deadline. */
static void t_session_stops_when_interrupted(void)
{
	static volatile sig_atomic_t stop = SIGINT;
	struct hp_ssm_channel ch = chan;
	struct agent ag;
	struct hp_ssm_output o;
	int64_t start = clock_ms;

	agent_init(&ag);
	ch.stop = &stop;
	hp_ssm_output_init(&o);
	T_EQ(hp_ssm_session_run(&ag.io, &fsys, &ch, clock_ms + 60000, &o), HP_SSM_STOPPED);
	T_ASSERT(clock_ms < start + 1000);
	T_STREQ(o.detail, "interrupted");
	T_STREQ(hp_ssm_end_name(HP_SSM_STOPPED), "stopped");
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

static void t_session_unanswered_handshake_is_resent(void)
{
	struct agent ag;
	struct hp_ssm_output o;

	agent_init(&ag);
	out_msg(&ag, 0, HP_SSM_PT_HANDSHAKE_REQUEST, hs_request);
	T_EQ(run(&ag, &o, 3000), HP_SSM_TIMEOUT);
	/* No ack for the response: resent every RTO (200 ms) until the deadline. */
	T_ASSERT(o.resent >= 5);
	T_EQ(count_sent(&ag, "input_stream_data", HP_SSM_PT_HANDSHAKE_RESPONSE), 1 + o.resent);
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

static void t_session_ack_stops_resends(void)
{
	struct agent ag;
	struct hp_ssm_output o;
	struct hp_buf ack = HP_BUF_INIT(1024);
	struct hp_ssm_msg m;

	agent_init(&ag);
	out_msg(&ag, 0, HP_SSM_PT_HANDSHAKE_REQUEST, hs_request);
	/* The agent acknowledges our seq 0 (the handshake response) at once. */
	memset(&m, 0, sizeof(m));
	strcpy(m.type, "input_stream_data");
	m.seq = 0;
	hp_ssm_ack_payload(&ack, &m);
	agent_msg(&ag, "acknowledge", 0, 0, ack.buf, 0, 1);
	hp_buf_release(&ack);
	T_EQ(run(&ag, &o, 3000), HP_SSM_TIMEOUT);
	T_EQ(o.resent, 0);
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

static void t_session_dropped_mid_stream(void)
{
	struct agent ag;
	struct hp_ssm_output o;

	agent_init(&ag);
	ag.eof_at_end = 1;
	out_msg(&ag, 0, HP_SSM_PT_HANDSHAKE_REQUEST, hs_request);
	out_msg(&ag, 1, HP_SSM_PT_HANDSHAKE_COMPLETE, hs_complete);
	out_msg(&ag, 2, HP_SSM_PT_OUTPUT, "partial");
	T_EQ(run(&ag, &o, 10000), HP_SSM_LOST);
	T_STREQ(o.out.buf, "partial");
	T_CONTAINS(o.detail, "connection lost");
	T_EQ(o.has_exit, 0);
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

static void t_session_upgrade_refused(void)
{
	struct agent ag;
	struct hp_ssm_output o;

	agent_init(&ag);
	ag.reply = "HTTP/1.1 403 Forbidden\r\nX-Ignored: @ACCEPT@\r\n\r\n";
	T_EQ(run(&ag, &o, 10000), HP_SSM_REFUSED);
	T_CONTAINS(o.detail, "403");
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

static void t_session_closed_at_once_is_refused(void)
{
	struct agent ag;
	struct hp_ssm_output o;

	agent_init(&ag);
	ag.eof_at_end = 1;
	T_EQ(run(&ag, &o, 10000), HP_SSM_REFUSED);
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

static void t_session_ping_fragments_and_publication(void)
{
	struct agent ag;
	struct hp_ssm_output o;
	size_t i, pongs = 0;
	struct hp_buf m = HP_BUF_INIT(4096);
	uint8_t id[16] = { 0 };

	agent_init(&ag);
	server_frame(&ag, HP_WS_PING, "keepalive", 9, 1);
	out_msg(&ag, 0, HP_SSM_PT_HANDSHAKE_REQUEST, hs_request);
	hp_ssm_msg_encode(&m, "start_publication", 1, 0, 0, id, 0, NULL, 0);
	server_frame(&ag, HP_WS_BINARY, m.buf, m.len, 1);
	hp_buf_release(&m);
	agent_msg(&ag, "output_stream_data", 1, HP_SSM_PT_OUTPUT, "split across five frames", 0, 5);
	server_frame(&ag, HP_WS_PONG, "x", 1, 1);
	agent_msg(&ag, "some_future_type", 0, 0, "{}", 0, 1);
	out_msg(&ag, 2, HP_SSM_PT_EXIT_CODE, "EXIT_CODE: 0");
	agent_msg(&ag, "channel_closed", 0, 0, closed_ok, 0, 1);
	T_EQ(run(&ag, &o, 10000), HP_SSM_DONE);
	T_STREQ(o.out.buf, "split across five frames");
	for (i = 0; i < ag.nsent; i++)
		if (ag.sent[i].opcode == HP_WS_PONG) {
			pongs++;
			T_STREQ(ag.sent[i].payload, "keepalive");
		}
	T_EQ(pongs, 1);
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

static void t_session_agent_failure(void)
{
	struct agent ag;
	struct hp_ssm_output o;

	agent_init(&ag);
	out_msg(&ag, 0, HP_SSM_PT_HANDSHAKE_REQUEST, hs_request);
	agent_msg(&ag, "channel_closed", 0, 0,
		  "{\"MessageType\":\"channel_closed\",\"Output\":\"Commands cannot be empty\"}", 0, 1);
	T_EQ(run(&ag, &o, 10000), HP_SSM_FAILED);
	T_STREQ(o.detail, "Commands cannot be empty");
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

/* An action this client does not know is refused; the agent ending there is its own reason. */
static void t_session_unknown_action(void)
{
	struct agent ag;
	struct hp_ssm_output o;
	const struct sent_msg *hs;
	const cJSON *row;
	cJSON *j;

	agent_init(&ag);
	out_msg(&ag, 0, HP_SSM_PT_HANDSHAKE_REQUEST,
		"{\"AgentVersion\":\"3.4\",\"RequestedClientActions\":["
		"{\"ActionType\":\"SessionType\",\"ActionParameters\":{\"SessionType\":\"NonInteractiveCommands\"}},"
		"{\"ActionType\":\"FutureAction\",\"ActionParameters\":{}}]}");
	agent_msg(&ag, "channel_closed", 0, 0,
		  "{\"MessageType\":\"channel_closed\",\"Output\":\"Encountered error while initiating "
		  "handshake. unsupported action\"}", 0, 1);
	T_EQ(run(&ag, &o, 10000), HP_SSM_UNSUPPORTED);
	T_STREQ(o.refused_action, "FutureAction");
	T_CONTAINS(o.detail, "Encountered error while initiating handshake");
	T_CONTAINS(o.detail, "after refusing 'FutureAction'");
	T_STREQ(hp_ssm_end_name(HP_SSM_UNSUPPORTED), "unsupported");
	hs = first_of(&ag, HP_SSM_PT_HANDSHAKE_RESPONSE);
	T_ASSERT(hs != NULL);
	j = cJSON_Parse(hs->payload);
	row = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "ProcessedClientActions"), 1);
	T_STREQ(cJSON_GetObjectItem(row, "ActionType")->valuestring, "FutureAction");
	T_EQ(cJSON_GetObjectItem(row, "ActionStatus")->valueint, 3);
	cJSON_Delete(j);
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

static void t_session_output_caps(void)
{
	struct agent ag;
	struct hp_ssm_output o;
	char *chunk = malloc(1025);
	int64_t seq;

	agent_init(&ag);
	memset(chunk, 'o', 1024);
	chunk[1024] = '\0';
	out_msg(&ag, 0, HP_SSM_PT_HANDSHAKE_REQUEST, hs_request);
	for (seq = 1; seq <= 1030; seq++)
		out_msg(&ag, seq, seq % 2 ? HP_SSM_PT_OUTPUT : HP_SSM_PT_STDERR, chunk);
	out_msg(&ag, 1031, HP_SSM_PT_EXIT_CODE, "EXIT_CODE: 0");
	agent_msg(&ag, "channel_closed", 0, 0, closed_ok, 0, 1);
	T_EQ(run(&ag, &o, 60000), HP_SSM_DONE);
	/* 515 KiB of stdout fits; stderr stops at 64 KiB. */
	T_EQ(o.out.len, 515 * 1024);
	T_EQ(o.out_capped, 0);
	T_EQ(o.err.len, HP_SSM_MAX_STDERR);
	T_EQ(o.err_capped, 1);
	T_EQ(o.exit_code, 0);
	free(chunk);
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

static void t_session_exit_code_without_close(void)
{
	struct agent ag;
	struct hp_ssm_output o;
	int64_t start = clock_ms;

	agent_init(&ag);
	out_msg(&ag, 0, HP_SSM_PT_HANDSHAKE_REQUEST, hs_request);
	out_msg(&ag, 1, HP_SSM_PT_OUTPUT, "x");
	out_msg(&ag, 2, HP_SSM_PT_EXIT_CODE, "EXIT_CODE: 17\n");
	T_EQ(run(&ag, &o, 60000), HP_SSM_DONE);
	T_EQ(o.exit_code, 17);
	T_EQ(o.closed, 0);
	/* Ended by the grace period, long before the deadline. */
	T_ASSERT(clock_ms - start < 10000);
	hp_ssm_output_release(&o);
	agent_release(&ag);
}

static void t_session_garbage_frames(void)
{
	struct agent ag;
	struct hp_ssm_output o;
	int round;

	/* Random bytes after the upgrade: the session ends cleanly, whatever they are. */
	for (round = 0; round < 200; round++) {
		size_t n = (size_t)(f_rand(NULL) % 400), i;
		agent_init(&ag);
		ag.eof_at_end = round % 2;
		for (i = 0; i < n; i++) {
			char c = (char)f_rand(NULL);
			hp_buf_putc(&ag.frames, c);
		}
		(void)run(&ag, &o, 2000);
		hp_ssm_output_release(&o);
		agent_release(&ag);
	}
}

/*
 * One node end to end through hp_sys alone: StartSession over the fake
 * HTTP queue, the stream URL's host connected through sys->tls_connect to
 * the scripted agent, the session, and no TerminateSession (it ended).
 */
static void t_node_over_a_fake_stream(void)
{
	static const char started[] =
		"{\"SessionId\":\"hpnode-ci-1\",\"TokenValue\":\"TOKEN-abc\",\"StreamUrl\":"
		"\"wss://ssmmessages.us-west-2.amazonaws.com/v1/data-channel/hpnode-ci-1?role=publish_subscribe\"}";
	struct fake_sys f;
	struct hp_aws a;
	struct hp_ssm_config c;
	struct hp_ssm_bucket b;
	struct hp_ssm_shared sh;
	struct hp_ssm_target t;
	struct hp_ssm_result r;
	struct agent ag;

	memset(&f, 0, sizeof(f));
	fake_aws(&f, &a, 3);
	a.ca_bundle = "/etc/hpnode-test-ca.pem";
	agent_init(&ag);
	ag.clock = &f.now_ms;
	out_msg(&ag, 0, HP_SSM_PT_HANDSHAKE_REQUEST, hs_request);
	out_msg(&ag, 1, HP_SSM_PT_HANDSHAKE_COMPLETE, hs_complete);
	out_msg(&ag, 2, HP_SSM_PT_OUTPUT, "probe output\n");
	out_msg(&ag, 3, HP_SSM_PT_EXIT_CODE, "EXIT_CODE: 0");
	agent_msg(&ag, "channel_closed", 0, 0, closed_ok, 0, 1);
	f.stream = &ag.io;
	fake_reply(&f, 200, NULL, started);
	hp_ssm_config_defaults(&c);
	c.command = "true";
	strcpy(c.client_id, chan.client_id);
	hp_ssm_bucket_init(&b, 3, 1, f.now_ms);
	memset(&sh, 0, sizeof(sh));
	sh.bucket = &b;
	memset(&t, 0, sizeof(t));
	t.instance_id = "i-0123456789abcdef0";
	t.group = "workers";
	strcpy(t.target, "sagemaker-cluster:abcdefghijkl_workers-i-0123456789abcdef0");
	memset(&r, 0, sizeof(r));
	hp_ssm_probe_node(&a, &c, &sh, &t, &r);
	T_EQ(r.state, HP_SSM_PROBED);
	T_EQ(r.used, HP_SSM_NATIVE);
	T_STREQ(r.output.out.buf, "probe output\n");
	T_EQ(r.output.exit_code, 0);
	T_EQ(f.tls_connects, 1);
	T_STREQ(f.tls_authority, "ssmmessages.us-west-2.amazonaws.com");
	T_STREQ(f.tls_ca, "/etc/hpnode-test-ca.pem");
	T_EQ(ag.closed, 1);
	/* The data channel was opened with the session's token; nothing else went to AWS. */
	T_ASSERT(ag.nsent > 0);
	T_CONTAINS(ag.sent[0].payload, "TOKEN-abc");
	T_EQ(f.nreq, 1);
	T_EQ(r.terminated, 0);
	hp_ssm_result_release(&r);
	agent_release(&ag);

	/* A refused connection: unreachable, and the session is ended. */
	fake_aws(&f, &a, 3);
	fake_reply(&f, 200, NULL, started);
	fake_reply(&f, 200, NULL, "{\"SessionId\":\"hpnode-ci-1\"}");
	hp_ssm_bucket_init(&b, 3, 1, f.now_ms);
	memset(&r, 0, sizeof(r));
	hp_ssm_probe_node(&a, &c, &sh, &t, &r);
	T_EQ(r.state, HP_SSM_UNREACHABLE);
	T_CONTAINS(r.reason, "fake: connection refused");
	T_EQ(r.terminated, 1);
	T_CONTAINS(f.req_headers[1], "AmazonSSM.TerminateSession");
	hp_ssm_result_release(&r);
	fake_sys_release(&f);
}

static void t_url_parse(void)
{
	char host[256], path[512];
	int port;

	T_EQ(hp_ssm_parse_url("wss://ssmmessages.us-west-2.amazonaws.com/v1/data-channel/s-1?role=publish_subscribe",
			      host, sizeof(host), &port, path, sizeof(path)), 0);
	T_STREQ(host, "ssmmessages.us-west-2.amazonaws.com");
	T_EQ(port, 443);
	T_STREQ(path, "/v1/data-channel/s-1?role=publish_subscribe");
	T_EQ(hp_ssm_parse_url("wss://127.0.0.1:40123/v1/data-channel/x", host, sizeof(host), &port,
			      path, sizeof(path)), 0);
	T_STREQ(host, "127.0.0.1:40123");
	T_EQ(port, 40123);
	T_STREQ(path, "/v1/data-channel/x");
	T_EQ(hp_ssm_parse_url("https://x/y", host, sizeof(host), &port, path, sizeof(path)), -1);
	T_EQ(hp_ssm_parse_url("wss://", host, sizeof(host), &port, path, sizeof(path)), -1);
	T_EQ(hp_ssm_parse_url("wss://h:99999/p", host, sizeof(host), &port, path, sizeof(path)), -1);
	T_EQ(hp_ssm_parse_url("wss://h:12x/p", host, sizeof(host), &port, path, sizeof(path)), -1);
	T_EQ(hp_ssm_parse_url("wss://h/p\r\nX: y", host, sizeof(host), &port, path, sizeof(path)), -1);
	T_EQ(hp_ssm_parse_url("wss://h", host, sizeof(host), &port, path, sizeof(path)), 0);
	T_STREQ(path, "/");
}


/* The agent of one node answering the on-node probe with out (in 1 KB messages, as agents send). */
static void probe_agent(struct agent *ag, const char *out)
{
	size_t len = strlen(out), at;
	int64_t seq = 2;

	agent_init(ag);
	out_msg(ag, 0, HP_SSM_PT_HANDSHAKE_REQUEST, hs_request);
	out_msg(ag, 1, HP_SSM_PT_HANDSHAKE_COMPLETE, hs_complete);
	for (at = 0; at < len; at += 1024) {
		char *piece = xstrndup(out + at, len - at < 1024 ? len - at : 1024);

		out_msg(ag, seq++, HP_SSM_PT_OUTPUT, piece);
		free(piece);
	}
	out_msg(ag, seq++, HP_SSM_PT_STDERR, "probe: dmesg: read kernel buffer failed\n");
	out_msg(ag, seq, HP_SSM_PT_EXIT_CODE, "EXIT_CODE: 0");
	agent_msg(ag, "channel_closed", 0, 0, closed_ok, 0, 1);
}

/* A cluster of one Running node, i-0123456789abcdef0 in group workers. */
static void one_node_cluster(struct hp_snapshot *s)
{
	hp_snapshot_init(s);
	hp_snapshot_set(s, "cluster", cJSON_Parse(
		"{\"ClusterName\":\"c\",\"ClusterArn\":\"arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef123456\"}"));
	hp_snapshot_set(s, "nodes", cJSON_Parse(
		"[{\"InstanceId\":\"i-0123456789abcdef0\",\"InstanceGroupName\":\"workers\","
		"\"InstanceType\":\"ml.m5.2xlarge\",\"InstanceStatus\":{\"Status\":\"Running\"}}]"));
}

static const char one_started[] =
	"{\"SessionId\":\"hpnode-ci-1\",\"TokenValue\":\"TOKEN-abc\",\"StreamUrl\":"
	"\"wss://ssmmessages.us-west-2.amazonaws.com/v1/data-channel/hpnode-ci-1?role=publish_subscribe\"}";

/* Whether any key or string in v holds needle. */
static int tree_has(const cJSON *v, const char *needle)
{
	const cJSON *c;

	if (v->string && strstr(v->string, needle))
		return 1;
	if (cJSON_IsString(v) && strstr(v->valuestring, needle))
		return 1;
	for (c = v->child; c; c = c->next)
		if (tree_has(c, needle))
			return 1;
	return 0;
}

/* The on-node findings, one line each (message and evidence). */
static char *node_findings(struct hp_snapshot *s)
{
	static const char *const ids[] = { "node.*", "ssm.*", NULL };
	struct hp_findings f = { 0 };
	struct hp_buf b = HP_BUF_INIT((size_t)1 << 20);
	size_t i;

	hp_facts_prepare(s);
	hp_checks_run_only(s, ids, &f);
	for (i = 0; i < f.n; i++) {
		const cJSON *e;

		hp_buf_printf(&b, "%s %d %s\n", f.v[i].check->id, f.v[i].tag, f.v[i].message);
		cJSON_ArrayForEach(e, f.v[i].evidence)
			hp_buf_printf(&b, "  %s\n", e->valuestring);
	}
	hp_findings_release(&f);
	return hp_buf_detach(&b, NULL);
}

/*
 * The probe collector decodes each node's output when its session ends:
 * the store holds the entry and its facts, the checks decode nothing, and
 * the raw text is nowhere in the snapshot. With a file being saved, the
 * raw text is in the file, which is valid JSON and replays to the same
 * findings.
 */
static void t_collector_decodes_at_session_end(void)
{
	char *out = pt_file("probe-debian-vm.txt"), *live, *replayed;
	struct hp_facts_counts all0, all1, mine;
	struct hp_probe_opts o;
	struct hp_error e = HP_ERROR_INIT;
	struct fake_sys f;
	struct hp_aws a;
	struct hp_snapshot s, r;
	struct hp_probe_iter it;
	struct agent ag;
	const cJSON *ent;
	cJSON *facts, *doc;
	int saving;

	for (saving = 0; saving < 2; saving++) {
		memset(&f, 0, sizeof(f));
		fake_aws(&f, &a, 3);
		probe_agent(&ag, out);
		ag.clock = &f.now_ms;
		f.stream = &ag.io;
		fake_reply(&f, 200, NULL, one_started);
		one_node_cluster(&s);
		if (saving)
			T_EQ(hp_snapshot_stream_open(&s, &f.sys, "snap.json", &e), 0);
		hp_probe_opts_defaults(&o);
		o.concurrency = 1;
		hp_facts_counts_all(&all0);
		hp_collect_probes(&a, &o, &s);
		hp_facts_counts_all(&all1);
		/* Decoded once, by the sweep. */
		T_EQ(all1.probe - all0.probe, 1);
		T_ASSERT(hp_snapshot_get(&s, "probes") == NULL);
		ent = hp_probes_first(&s, "probes", &it);
		T_ASSERT(ent != NULL);
		T_STREQ(ent->string, "i-0123456789abcdef0");
		T_STREQ(hp_json_str(ent, "state"), "probed");
		T_ASSERT(!cJSON_GetObjectItem(ent, "stdout"));
		T_STREQ(hp_json_str(ent, "stderr"), "probe: dmesg: read kernel buffer failed\n");
		T_ASSERT(!hp_json_bool(ent, "truncated", 1));
		facts = hp_probes_facts(&it);
		T_STREQ(hp_json_str(facts, "node.hostname"), "vm");
		/* Nothing of the raw text is kept: no framing line in the entry or its facts. */
		T_ASSERT(!tree_has(ent, "@@HP@@") && !tree_has(facts, "@@HP@@"));
		cJSON_Delete(facts);
		hp_probes_end(&it);
		/* The checks read those facts: nothing decoded again. */
		live = node_findings(&s);
		T_CONTAINS(live, "On-node probe output received from node i-0123456789abcdef0");
		hp_facts_counts(&s, &mine);
		T_EQ(mine.probe, 0);
		hp_facts_counts_all(&all1);
		T_EQ(all1.probe - all0.probe, 1);
		if (!saving) {
			/* No file: the raw text went nowhere. */
			T_EQ(f.nwrote, 0);
		} else {
			T_EQ(hp_snapshot_save(&s, &f.sys, "snap.json", &e), 0);
			doc = cJSON_Parse(f.written);
			T_ASSERT(doc != NULL);
			T_STREQ(hp_json_str(hp_json_get(doc, "probes"), "i-0123456789abcdef0.stdout"), out);
			T_STREQ(cJSON_GetArrayItem(hp_json_get(doc, "probes_order"), 0)->valuestring,
				"i-0123456789abcdef0");
			T_EQ(hp_json_num(doc, "probes_meta.probed", 0), 1);
			cJSON_Delete(doc);
			hp_snapshot_init(&r);
			T_EQ(hp_snapshot_load(&r, &f.sys, "snap.json", &e), 0);
			replayed = node_findings(&r);
			T_STREQ(replayed, live);
			free(replayed);
			hp_snapshot_release(&r);
		}
		free(live);
		hp_snapshot_release(&s);
		agent_release(&ag);
		fake_sys_release(&f);
	}
	free(out);
}

T_MAIN(T(t_node_over_a_fake_stream), T(t_collector_decodes_at_session_end), T(t_rx_in_order_and_duplicates), T(t_rx_reorders), T(t_rx_bounded), T(t_tx_rto_and_resend),
       T(t_session_happy_path), T(t_session_reorders_and_dedups), T(t_session_drops_bad_digest),
       T(t_session_refuses_kms), T(t_session_silent_agent_times_out), T(t_session_stops_when_interrupted),
       T(t_session_unanswered_handshake_is_resent), T(t_session_ack_stops_resends),
       T(t_session_dropped_mid_stream), T(t_session_upgrade_refused),
       T(t_session_closed_at_once_is_refused), T(t_session_ping_fragments_and_publication),
       T(t_session_agent_failure), T(t_session_output_caps), T(t_session_exit_code_without_close),
       T(t_session_garbage_frames), T(t_url_parse), T(t_session_unknown_action))
