/*
 * A WebSocket client (RFC 6455) for the SSM data channel: the HTTP upgrade
 * and its accept key, masked client frames, decoding of server frames,
 * reassembly of fragmented messages, ping/pong and close. Extensions and
 * subprotocols are not offered; every buffer has a cap.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ssm-int.h"

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define MAX_REPLY_HEAD 16384

long hp_ws_parse(uint8_t *buf, size_t n, size_t max_payload, struct hp_ws_frame *f,
		 const char **why)
{
	size_t need = 2, i;
	uint64_t len;
	int masked;

	if (n < 2)
		return 0;
	if (buf[0] & 0x70) {
		*why = "reserved bits set (no extension was negotiated)";
		return -1;
	}
	f->fin = !!(buf[0] & 0x80);
	f->opcode = buf[0] & 0x0F;
	masked = !!(buf[1] & 0x80);
	len = buf[1] & 0x7F;
	switch (f->opcode) {
	case HP_WS_CONT: case HP_WS_TEXT: case HP_WS_BINARY:
		break;
	case HP_WS_CLOSE: case HP_WS_PING: case HP_WS_PONG:
		if (!f->fin) {
			*why = "fragmented control frame";
			return -1;
		}
		if (len > 125) {
			*why = "control frame longer than 125 bytes";
			return -1;
		}
		break;
	default:
		*why = "unknown opcode";
		return -1;
	}
	if (len == 126) {
		need += 2;
		if (n < need)
			return 0;
		len = ((uint64_t)buf[2] << 8) | buf[3];
	} else if (len == 127) {
		need += 8;
		if (n < need)
			return 0;
		len = 0;
		for (i = 0; i < 8; i++)
			len = (len << 8) | buf[2 + i];
		if (len >> 63) {
			*why = "64-bit length with the top bit set";
			return -1;
		}
	}
	if (masked) {
		/* A server must not mask; such a frame ends the connection (RFC 6455 5.1). */
		*why = "masked frame from the server";
		return -1;
	}
	if (len > max_payload) {
		*why = "frame larger than the limit";
		return -1;
	}
	if ((uint64_t)(n - need) < len)
		return 0;
	f->payload = buf + need;
	f->len = (size_t)len;
	return (long)(need + (size_t)len);
}

void hp_ws_encode(struct hp_buf *out, int opcode, int fin, const void *p, size_t n,
		  const uint8_t mask[4])
{
	uint8_t head[14];
	size_t h = 0, i;
	const uint8_t *src = p;

	head[h++] = (uint8_t)((fin ? 0x80 : 0) | (opcode & 0x0F));
	if (n < 126) {
		head[h++] = (uint8_t)(0x80 | n);
	} else if (n <= 0xFFFF) {
		head[h++] = 0x80 | 126;
		head[h++] = (uint8_t)(n >> 8);
		head[h++] = (uint8_t)n;
	} else {
		head[h++] = 0x80 | 127;
		for (i = 0; i < 8; i++)
			head[h++] = (uint8_t)((uint64_t)n >> (56 - 8 * i));
	}
	memcpy(head + h, mask, 4);
	h += 4;
	hp_buf_putn(out, head, h);
	for (i = 0; i < n; i++)
		hp_buf_putc(out, (char)(src[i] ^ mask[i & 3]));
}

void hp_ws_accept_for(const char *key, char out[29])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char joined[128];

	snprintf(joined, sizeof(joined), "%s%s", key, WS_GUID);
	EVP_Digest(joined, strlen(joined), md, &mdlen, EVP_sha1(), NULL);
	EVP_EncodeBlock((unsigned char *)out, md, (int)mdlen);
}

void hp_ws_request(struct hp_buf *out, const char *host, const char *path, const char *key)
{
	hp_buf_printf(out,
		      "GET %s HTTP/1.1\r\n"
		      "Host: %s\r\n"
		      "Upgrade: websocket\r\n"
		      "Connection: Upgrade\r\n"
		      "Sec-WebSocket-Key: %s\r\n"
		      "Sec-WebSocket-Version: 13\r\n"
		      "User-Agent: hpnode/" HP_VERSION "\r\n"
		      "\r\n",
		      path, host, key);
}

/* Value of header name in head (copied, trimmed); -1 when absent. */
static int header_value(const char *head, const char *name, char *out, size_t n)
{
	const char *p = strstr(head, "\r\n");
	size_t nl = strlen(name);

	while (p && p[2]) {
		const char *line = p + 2, *eol = strstr(line, "\r\n");
		size_t len = eol ? (size_t)(eol - line) : strlen(line);

		if (len > nl && line[nl] == ':' && !strncasecmp(line, name, nl)) {
			const char *v = line + nl + 1;
			size_t vl = len - nl - 1;
			while (vl && (*v == ' ' || *v == '\t'))
				v++, vl--;
			while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
				vl--;
			if (vl >= n)
				vl = n - 1;
			memcpy(out, v, vl);
			out[vl] = '\0';
			return 0;
		}
		p = eol;
	}
	return -1;
}

/* Whether a comma-separated header value lists token (case-insensitive). */
static int has_token(const char *value, const char *token)
{
	size_t tl = strlen(token);

	while (*value) {
		size_t len;
		while (*value == ' ' || *value == ',' || *value == '\t')
			value++;
		len = strcspn(value, ",");
		while (len && (value[len - 1] == ' ' || value[len - 1] == '\t'))
			len--;
		if (len == tl && !strncasecmp(value, token, tl))
			return 1;
		value += strcspn(value, ",");
	}
	return 0;
}

int hp_ws_check_reply(const char *head, const char *key, char *why, size_t whyn)
{
	char v[256], want[29];
	int major, minor, status;

	if (sscanf(head, "HTTP/%d.%d %d", &major, &minor, &status) != 3) {
		snprintf(why, whyn, "not an HTTP reply to the upgrade");
		return -1;
	}
	if (status != 101) {
		size_t len = strcspn(head, "\r\n");
		snprintf(why, whyn, "upgrade refused: %.*s", (int)(len > 120 ? 120 : len), head);
		return -1;
	}
	if (header_value(head, "Upgrade", v, sizeof(v)) || strcasecmp(v, "websocket")) {
		snprintf(why, whyn, "upgrade reply without 'Upgrade: websocket'");
		return -1;
	}
	if (header_value(head, "Connection", v, sizeof(v)) || !has_token(v, "upgrade")) {
		snprintf(why, whyn, "upgrade reply without 'Connection: upgrade'");
		return -1;
	}
	hp_ws_accept_for(key, want);
	if (header_value(head, "Sec-WebSocket-Accept", v, sizeof(v)) || strcmp(v, want)) {
		snprintf(why, whyn, "wrong Sec-WebSocket-Accept in the upgrade reply");
		return -1;
	}
	if (!header_value(head, "Sec-WebSocket-Extensions", v, sizeof(v)) && v[0]) {
		snprintf(why, whyn, "server chose an extension that was not offered");
		return -1;
	}
	return 0;
}

void hp_ws_asm_init(struct hp_ws_asm *a, size_t max_message)
{
	a->active = 0;
	a->opcode = 0;
	hp_buf_init(&a->msg, max_message);
}

void hp_ws_asm_release(struct hp_ws_asm *a)
{
	hp_buf_release(&a->msg);
	a->active = 0;
}

enum hp_ws_feed hp_ws_asm_feed(struct hp_ws_asm *a, const struct hp_ws_frame *f, const char **why)
{
	if (f->opcode >= HP_WS_CLOSE)
		return HP_WS_CONTROL;
	if (f->opcode == HP_WS_CONT) {
		if (!a->active) {
			*why = "continuation frame without a message to continue";
			return HP_WS_BAD;
		}
	} else {
		if (a->active) {
			*why = "new message inside a fragmented one";
			return HP_WS_BAD;
		}
		hp_buf_reset(&a->msg);
		a->opcode = f->opcode;
		a->active = 1;
	}
	if (hp_buf_add(&a->msg, f->payload, f->len)) {
		*why = "message larger than the limit";
		a->active = 0;
		return HP_WS_BAD;
	}
	if (!f->fin)
		return HP_WS_MORE;
	a->active = 0;
	return HP_WS_MESSAGE;
}

void hp_ws_init(struct hp_ws *ws, struct hp_stream *io, struct hp_sys *sys)
{
	memset(ws, 0, sizeof(*ws));
	ws->io = io;
	ws->sys = sys;
	ws->max_frame = HP_WS_MAX_FRAME;
	/* Room for one whole frame and its header, plus one read ahead. */
	hp_buf_init(&ws->in, HP_WS_MAX_FRAME + 65536);
	hp_ws_asm_init(&ws->asm_, HP_WS_MAX_MESSAGE);
}

void hp_ws_release(struct hp_ws *ws)
{
	hp_buf_release(&ws->in);
	hp_ws_asm_release(&ws->asm_);
}

static void random_bytes(struct hp_sys *sys, uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i += 4) {
		uint32_t r = sys->random(sys);
		size_t k;
		for (k = 0; k < 4 && i + k < n; k++)
			p[i + k] = (uint8_t)(r >> (8 * k));
	}
}

/* Read more bytes into ws->in. 1 read, 0 deadline, -1 closed (why). */
static int fill(struct hp_ws *ws, int64_t deadline, char *why, size_t whyn)
{
	uint8_t chunk[16384];
	long got;

	if (ws->in.max - ws->in.len < sizeof(chunk)) {
		snprintf(why, whyn, "receive buffer full");
		return -1;
	}
	got = ws->io->recv(ws->io, chunk, sizeof(chunk), deadline);
	if (got == 0)
		return 0;
	if (got < 0) {
		snprintf(why, whyn, "%s", ws->io->err[0] ? ws->io->err : "connection closed");
		return -1;
	}
	if (hp_buf_add(&ws->in, chunk, (size_t)got)) {
		snprintf(why, whyn, "receive buffer full");
		return -1;
	}
	return 1;
}

static void consume(struct hp_buf *b, size_t n)
{
	memmove(b->buf, b->buf + n, b->len - n);
	b->len -= n;
	b->buf[b->len] = '\0';
}

int hp_ws_handshake(struct hp_ws *ws, const char *host, const char *path, int64_t deadline,
		    char *why, size_t whyn)
{
	struct hp_buf req = HP_BUF_INIT(HP_MAX_LINE);
	uint8_t raw[16];
	char key[32];
	const char *end;
	int rc;

	random_bytes(ws->sys, raw, sizeof(raw));
	EVP_EncodeBlock((unsigned char *)key, raw, sizeof(raw));
	hp_ws_request(&req, host, path, key);
	rc = ws->io->send(ws->io, req.buf, req.len, deadline);
	hp_buf_release(&req);
	if (rc) {
		snprintf(why, whyn, "cannot send the upgrade request: %s", ws->io->err);
		return -1;
	}
	while (!(end = memmem(ws->in.buf, ws->in.len, "\r\n\r\n", 4))) {
		if (ws->in.len > MAX_REPLY_HEAD) {
			snprintf(why, whyn, "upgrade reply head larger than %d bytes", MAX_REPLY_HEAD);
			return -1;
		}
		rc = fill(ws, deadline, why, whyn);
		if (rc == 0) {
			snprintf(why, whyn, "no upgrade reply before the deadline");
			return -1;
		}
		if (rc < 0)
			return -1;
	}
	{
		size_t head_len = (size_t)(end - ws->in.buf) + 4;
		char *head = xstrndup(ws->in.buf, head_len);
		rc = hp_ws_check_reply(head, key, why, whyn);
		free(head);
		/* Bytes after the head are already frames. */
		consume(&ws->in, head_len);
	}
	return rc;
}

int hp_ws_send(struct hp_ws *ws, int opcode, const void *p, size_t n, int64_t deadline)
{
	struct hp_buf frame = HP_BUF_INIT(HP_WS_MAX_MESSAGE + 16);
	uint8_t mask[4];
	int rc;

	random_bytes(ws->sys, mask, sizeof(mask));
	hp_ws_encode(&frame, opcode, 1, p, n, mask);
	rc = ws->io->send(ws->io, frame.buf, frame.len, deadline);
	hp_buf_release(&frame);
	if (opcode == HP_WS_CLOSE)
		ws->closed = 1;
	return rc;
}

int hp_ws_next(struct hp_ws *ws, int64_t deadline, int *opcode, struct hp_buf *msg, char *why,
	       size_t whyn)
{
	for (;;) {
		struct hp_ws_frame f;
		const char *bad = NULL;
		long used;

		if (ws->closed) {
			snprintf(why, whyn, "connection closed");
			return -1;
		}
		used = hp_ws_parse((uint8_t *)ws->in.buf, ws->in.len, ws->max_frame, &f, &bad);
		if (used < 0) {
			snprintf(why, whyn, "websocket protocol error: %s", bad);
			return -1;
		}
		if (used == 0) {
			int rc = fill(ws, deadline, why, whyn);
			if (rc <= 0)
				return rc;
			continue;
		}
		switch (hp_ws_asm_feed(&ws->asm_, &f, &bad)) {
		case HP_WS_BAD:
			snprintf(why, whyn, "websocket protocol error: %s", bad);
			return -1;
		case HP_WS_MORE:
			consume(&ws->in, (size_t)used);
			continue;
		case HP_WS_MESSAGE:
			consume(&ws->in, (size_t)used);
			*opcode = ws->asm_.opcode;
			hp_buf_reset(msg);
			if (hp_buf_add(msg, ws->asm_.msg.buf, ws->asm_.msg.len)) {
				snprintf(why, whyn, "message larger than the caller's buffer");
				return -1;
			}
			hp_buf_reset(&ws->asm_.msg);
			return 1;
		case HP_WS_CONTROL:
			break;
		}
		if (f.opcode == HP_WS_PING) {
			uint8_t echo[125];
			size_t len = f.len;
			memcpy(echo, f.payload, len);
			consume(&ws->in, (size_t)used);
			ws->pings++;
			if (hp_ws_send(ws, HP_WS_PONG, echo, len, deadline)) {
				snprintf(why, whyn, "cannot answer a ping: %s", ws->io->err);
				return -1;
			}
			continue;
		}
		if (f.opcode == HP_WS_PONG) {
			consume(&ws->in, (size_t)used);
			continue;
		}
		/* Close: echo the status code (if any) and stop. */
		{
			uint8_t code[2];
			size_t clen = f.len >= 2 ? 2 : 0;
			unsigned status = clen ? ((unsigned)f.payload[0] << 8) | f.payload[1] : 1005;
			if (clen)
				memcpy(code, f.payload, 2);
			consume(&ws->in, (size_t)used);
			(void)hp_ws_send(ws, HP_WS_CLOSE, code, clen, deadline);
			snprintf(why, whyn, "server closed the websocket (status %u)", status);
			return -1;
		}
	}
}
