/*
 * A whole SSM session (src/collect/ssm/session.c over ws.c, msg.c, stream.c) on
 * an in-memory transport: the client's upgrade request is answered with a
 * correct 101 reply, then the input is the byte stream the agent sends
 * (WebSocket frames; message digests repaired, see ssm-fix.h), read in
 * chunks of varying size while the clock advances. Oracles: the session
 * ends (no hang: the stream is finite and the deadline is fixed); stdout
 * and stderr stay within their caps; the failure detail is clean once
 * sanitised and never shows the session token; every client frame is
 * masked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-sys.h"
#include "fuzz.h"
#include "../../src/collect/ssm/ssm-int.h"
#include "hp/util.h"
#include "ssm-fix.h"

struct mem_io {
	struct hp_stream io;
	struct fake_sys *f;
	const uint8_t *in;
	size_t n, pos;
	struct hp_buf head;
	size_t head_pos;
	int upgraded;
	unsigned reads;
	size_t sent_bytes;
};

static int m_send(struct hp_stream *io, const void *p, size_t n, int64_t deadline)
{
	struct mem_io *m = io->impl;
	const uint8_t *b = p;

	(void)deadline;
	if (!m->upgraded) {
		const char *k = strstr((const char *)p, "Sec-WebSocket-Key: ");
		char key[64], acc[29];
		size_t kl;

		if (!k)
			fz_fail("upgrade request without a key", p, n);
		k += strlen("Sec-WebSocket-Key: ");
		kl = strcspn(k, "\r");
		if (kl >= sizeof(key))
			fz_fail("overlong key", p, n);
		memcpy(key, k, kl);
		key[kl] = 0;
		hp_ws_accept_for(key, acc);
		hp_buf_printf(&m->head, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
			      "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", acc);
		m->upgraded = 1;
		return 0;
	}
	/* Client frames are masked (RFC 6455 5.3). */
	if (n < 6 || !(b[1] & 0x80))
		fz_fail("client frame not masked", NULL, 0);
	m->sent_bytes += n;
	if (m->sent_bytes > ((size_t)64 << 20))
		fz_fail("client sent over 64 MiB", NULL, 0);
	return 0;
}

static long m_recv(struct hp_stream *io, void *p, size_t n, int64_t deadline)
{
	struct mem_io *m = io->impl;
	size_t avail, chunk = 1 + (m->reads * 37u) % 700u;

	m->reads++;
	m->f->now_ms += 20;
	if (m->upgraded && m->head_pos < m->head.len) {
		avail = m->head.len - m->head_pos;
		if (avail > n)
			avail = n;
		memcpy(p, m->head.buf + m->head_pos, avail);
		m->head_pos += avail;
		return (long)avail;
	}
	if (m->upgraded && m->pos < m->n) {
		avail = m->n - m->pos;
		if (avail > n)
			avail = n;
		if (avail > chunk)
			avail = chunk;
		memcpy(p, m->in + m->pos, avail);
		m->pos += avail;
		return (long)avail;
	}
	/* Nothing more: the agent went quiet until the deadline, or hung up. */
	if (m->n & 1) {
		if (m->f->now_ms < deadline)
			m->f->now_ms = deadline;
		return 0;
	}
	hp_strlcpy(io->err, "connection closed", sizeof(io->err));
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fake_sys f;
	struct mem_io m;
	struct hp_ssm_output out;
	struct hp_ssm_channel ch = { "ssmmessages.us-west-2.amazonaws.com", "/v1/data-channel/s-1?role=publish_subscribe",
				     FZ_TOKEN, "11111111-2222-4333-8444-555555555555", NULL };
	uint8_t *buf;
	enum hp_ssm_end end;

	if (size > (2u << 20))
		return 0;
	buf = xmalloc(size ? size : 1);
	memcpy(buf, data, size);
	fz_fix_frames(buf, size);
	fake_sys_init(&f);
	memset(&m, 0, sizeof(m));
	m.io.send = m_send;
	m.io.recv = m_recv;
	m.io.impl = &m;
	m.f = &f;
	m.in = buf;
	m.n = size;
	hp_buf_init(&m.head, 4096);
	hp_ssm_output_init(&out);
	end = hp_ssm_session_run(&m.io, &f.sys, &ch, f.now_ms + 180000, &out);
	if (getenv("HP_FUZZ_SHOW"))
		fprintf(stderr, "end %s exit %d (%d) detail '%s' stdout %zu bytes\n",
			hp_ssm_end_name(end), out.exit_code, out.has_exit, out.detail, out.out.len);
	if (hp_ssm_end_name(end) == NULL)
		fz_fail("unknown end", NULL, 0);
	if (out.out.len > HP_SSM_MAX_STDOUT || out.err.len > HP_SSM_MAX_STDERR)
		fz_fail("output over its cap", NULL, 0);
	if (!memchr(out.detail, 0, sizeof(out.detail)) ||
	    !memchr(out.agent_version, 0, sizeof(out.agent_version)) ||
	    !memchr(out.session_type, 0, sizeof(out.session_type)))
		fz_fail("output fields not terminated", NULL, 0);
	{
		/* The session token never shows in what is reported (unless the agent echoed it). */
		static const char *const tok[] = { FZ_TOKEN, NULL };
		const char *const *secrets = memmem(data, size, FZ_TOKEN, strlen(FZ_TOKEN)) ? NULL : tok;

		fz_check_error(out.detail, secrets);
		fz_check_error(out.agent_version, secrets);
		fz_check_error(out.session_type, secrets);
	}
	hp_ssm_output_release(&out);
	hp_buf_release(&m.head);
	fake_sys_release(&f);
	free(buf);
	return 0;
}
