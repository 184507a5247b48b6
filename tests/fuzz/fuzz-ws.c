/*
 * WebSocket frames and agent messages (src/collect/ssm/ws.c, msg.c, stream.c):
 * the input is a stream of server frames, decoded frame by frame and
 * joined into messages; each binary message is decoded as an agent
 * message (digest repaired, see ssm-fix.h), acknowledged and offered to
 * the reordering buffer; acknowledge payloads are parsed. The same bytes
 * are also read as an upgrade reply head and as session-manager-plugin
 * output. Oracles: no crash; decoded fields stay inside the buffer; an
 * acknowledgement we build parses back to the same sequence number.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "../../src/collect/ssm/ssm-int.h"
#include "hp/util.h"
#include "ssm-fix.h"

static void one_message(const uint8_t *p, size_t n, struct hp_ssm_rx *rx)
{
	struct hp_ssm_msg m;
	const char *why = NULL;
	uint8_t *copy = xmalloc(n ? n : 1);

	memcpy(copy, p, n);
	fz_fix_digest(copy, n);
	if (hp_ssm_msg_decode(copy, n, &m, &why) == 0) {
		struct hp_buf ack = HP_BUF_INIT(1 << 16);
		int64_t seq = -2;

		if (m.payload < copy || m.payload + m.payload_len > copy + n)
			fz_fail("decoded payload outside the message", NULL, 0);
		if (memchr(m.type, 0, sizeof(m.type)) == NULL)
			fz_fail("message type not terminated", NULL, 0);
		hp_ssm_ack_payload(&ack, &m);
		/* Acknowledge parsing takes sequence numbers a double holds exactly. */
		if (m.seq >= 0 && m.seq < ((int64_t)1 << 53) &&
		    (hp_ssm_ack_parse((const uint8_t *)ack.buf, ack.len, &seq) || seq != m.seq))
			fz_fail("our acknowledgement does not parse back", ack.buf, ack.len);
		hp_buf_release(&ack);
		hp_ssm_ack_parse(m.payload, m.payload_len, &seq);
		if (!strcmp(m.type, "output_stream_data")) {
			struct hp_ssm_held h;

			if (hp_ssm_rx_offer(rx, m.seq, m.payload_type, m.payload, m.payload_len) ==
			    HP_RX_DELIVER) {
				while (hp_ssm_rx_pop(rx, &h))
					free(h.data);
			}
		}
	} else if (!why) {
		fz_fail("decode failed without a reason", NULL, 0);
	}
	if (getenv("HP_FUZZ_SHOW"))
		fprintf(stderr, "message: %s\n", why ? why : m.type);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf;
	size_t off = 0;
	struct hp_ws_asm as;
	struct hp_ssm_rx rx;
	char why[256];

	if (size > (1u << 20))
		return 0;
	buf = xmalloc(size + 1);
	memcpy(buf, data, size);
	buf[size] = 0;
	fz_fix_frames(buf, size);
	hp_ws_asm_init(&as, 1 << 20);
	hp_ssm_rx_init(&rx, 64, 1 << 20);
	while (off < size) {
		struct hp_ws_frame f;
		const char *err = NULL;
		long used = hp_ws_parse(buf + off, size - off, 1 << 20, &f, &err);
		enum hp_ws_feed r;

		if (used <= 0)
			break;
		if ((size_t)used > size - off || f.len > (size_t)used ||
		    (f.len && (f.payload < buf + off || f.payload + f.len > buf + off + used)))
			fz_fail("frame outside the buffer", NULL, 0);
		off += (size_t)used;
		r = hp_ws_asm_feed(&as, &f, &err);
		if (r == HP_WS_BAD)
			break;
		if (r == HP_WS_MESSAGE) {
			if (as.opcode == HP_WS_BINARY)
				one_message((const uint8_t *)as.msg.buf, as.msg.len, &rx);
			else
				{
				int64_t seq;

				hp_ssm_ack_parse((const uint8_t *)as.msg.buf, as.msg.len, &seq);
			}
			hp_buf_reset(&as.msg);
		}
	}
	hp_ws_asm_release(&as);
	hp_ssm_rx_release(&rx);

	/* The bytes as an upgrade reply head and as the plugin's output. */
	hp_ws_check_reply((const char *)buf, "dGhlIHNhbXBsZSBub25jZQ==", why, sizeof(why));
	{
		struct hp_ssm_output o;

		hp_ssm_output_init(&o);
		hp_ssm_plugin_parse((const char *)buf, size, &o);
		if (memchr(o.detail, 0, sizeof(o.detail)) == NULL)
			fz_fail("plugin detail not terminated", NULL, 0);
		hp_ssm_output_release(&o);
	}
	free(buf);
	return 0;
}
