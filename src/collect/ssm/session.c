/*
 * One SSM session over an open byte transport: the WebSocket upgrade, the
 * OpenDataChannelInput frame, then the agent message loop — handshake
 * (KMS refused), stdout/stderr/exit-code collection, acknowledgements,
 * reordering, de-duplication and retransmission — until the agent closes
 * the channel or the deadline passes. Standard_Stream shells and KMS
 * encryption are not spoken here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hp/json.h"
#include "ssm-int.h"

#define CLIENT_VERSION "1.2.650.0"
#define TICK_MS 100
/* After the exit code, how long to wait for channel_closed. */
#define CLOSE_GRACE_MS 3000
/* After refusing KMS, how long to let the agent hear it and close the channel. */
#define KMS_GRACE_MS 2000
/*
 * The reorder window: messages held until the ones before them arrive. No
 * more than the output a session keeps (what is past the caps is dropped
 * anyway), so one session holds at most about 5 MiB whatever an agent
 * sends (receive buffer 1 MiB, a fragmented message 2 MiB, this window,
 * stdout and stderr), and a few tens of KiB for a probe's usual output.
 */
#define MAX_HELD 4096
#define MAX_HELD_BYTES (HP_SSM_MAX_STDOUT + HP_SSM_MAX_STDERR)
#define MAX_UNACKED 64

const char *hp_ssm_end_name(enum hp_ssm_end e)
{
	static const char *const names[] = { "done", "timeout", "lost", "refused", "kms", "failed",
						     "unsupported", "stopped" };

	return (unsigned)e < HP_ARRAY_LEN(names) ? names[e] : "unknown";
}

void hp_ssm_output_init(struct hp_ssm_output *o)
{
	memset(o, 0, sizeof(*o));
	hp_buf_init(&o->out, HP_SSM_MAX_STDOUT);
	hp_buf_init(&o->err, HP_SSM_MAX_STDERR);
	o->exit_code = -1;
}

void hp_ssm_output_release(struct hp_ssm_output *o)
{
	hp_buf_release(&o->out);
	hp_buf_release(&o->err);
}

struct sess {
	const volatile sig_atomic_t *stop;
	struct hp_ws ws;
	struct hp_sys *sys;
	struct hp_ssm_output *out;
	struct hp_ssm_rx rx;
	struct hp_ssm_tx tx;
	int64_t deadline;
	int kms;           /* the agent asked for KMS */
	int64_t kms_at;    /* when we refused it (monotonic) */
	int failed;        /* a send failed */
	int64_t exit_at;   /* when the exit code arrived (monotonic) */
};

/* Append what fits under the cap; remember that something was cut. */
static void add_capped(struct hp_buf *b, int *capped, const uint8_t *p, size_t n)
{
	size_t room = b->max - b->len;

	if (n > room) {
		*capped = 1;
		n = room;
	}
	if (n && hp_buf_add(b, p, n))
		*capped = 1;
}

static int send_msg(struct sess *s, const char *type, int64_t seq, uint64_t flags,
		    uint32_t ptype, const void *p, size_t n, int sequenced)
{
	struct hp_buf frame = HP_BUF_INIT(HP_WS_MAX_MESSAGE);
	uint8_t id[16];
	int rc;

	hp_ssm_uuid_new(s->sys, id);
	hp_ssm_msg_encode(&frame, type, (uint64_t)s->sys->now_ms(s->sys), seq, flags, id, ptype, p,
			  n);
	/* Register before writing, so an ack that comes back at once finds it. */
	if (sequenced && hp_ssm_tx_add(&s->tx, seq, frame.buf, frame.len,
				       s->sys->monotonic_ms(s->sys))) {
		hp_buf_release(&frame);
		snprintf(s->out->detail, sizeof(s->out->detail), "too many unacknowledged messages");
		s->failed = 1;
		return -1;
	}
	rc = hp_ws_send(&s->ws, HP_WS_BINARY, frame.buf, frame.len, s->deadline);
	hp_buf_release(&frame);
	if (rc) {
		snprintf(s->out->detail, sizeof(s->out->detail), "send failed: %.200s", s->ws.io->err);
		s->failed = 1;
	}
	return rc;
}

static void send_ack(struct sess *s, const struct hp_ssm_msg *m)
{
	struct hp_buf ack = HP_BUF_INIT(4096);

	hp_ssm_ack_payload(&ack, m);
	if (!send_msg(s, "acknowledge", 0, 3, 0, ack.buf, ack.len, 0))
		s->out->acks_sent++;
	hp_buf_release(&ack);
}

static void send_input(struct sess *s, uint32_t ptype, const char *text)
{
	int64_t seq = s->tx.next_seq++;

	(void)send_msg(s, "input_stream_data", seq, 0, ptype, text, strlen(text), 1);
}

/* Answer a HandshakeRequest: accept the session type, refuse KMS and anything unknown. */
static void handshake(struct sess *s, const uint8_t *p, size_t n)
{
	cJSON *req = hp_json_parse((const char *)p, n, NULL);
	cJSON *resp = cJSON_CreateObject(), *done = cJSON_CreateArray();
	const cJSON *a, *v;
	char *text;

	v = cJSON_GetObjectItemCaseSensitive(req, "AgentVersion");
	if (cJSON_IsString(v))
		hp_strlcpy(s->out->agent_version, v->valuestring, sizeof(s->out->agent_version));
	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(req, "RequestedClientActions")) {
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(a, "ActionType");
		const char *t = cJSON_IsString(type) ? type->valuestring : "";
		cJSON *row = cJSON_CreateObject();

		cJSON_AddStringToObject(row, "ActionType", t);
		if (!strcmp(t, "SessionType")) {
			const cJSON *st = hp_json_get(a, "ActionParameters.SessionType");
			if (cJSON_IsString(st))
				hp_strlcpy(s->out->session_type, st->valuestring,
					   sizeof(s->out->session_type));
			cJSON_AddNumberToObject(row, "ActionStatus", 1);
			cJSON_AddNullToObject(row, "ActionResult");
			cJSON_AddStringToObject(row, "Error", "");
		} else if (!strcmp(t, "KMSEncryption")) {
			s->kms = 1;
			s->kms_at = s->sys->monotonic_ms(s->sys);
			cJSON_AddNumberToObject(row, "ActionStatus", 2);
			cJSON_AddNullToObject(row, "ActionResult");
			cJSON_AddStringToObject(row, "Error",
						"hpnode does not support KMS-encrypted sessions");
		} else {
			if (!s->out->refused_action[0])
				hp_strlcpy(s->out->refused_action, t[0] ? t : "(no ActionType)",
					   sizeof(s->out->refused_action));
			cJSON_AddNumberToObject(row, "ActionStatus", 3);
			cJSON_AddNullToObject(row, "ActionResult");
			cJSON_AddStringToObject(row, "Error", "unsupported action");
		}
		cJSON_AddItemToArray(done, row);
	}
	cJSON_AddStringToObject(resp, "ClientVersion", CLIENT_VERSION);
	cJSON_AddItemToObject(resp, "ProcessedClientActions", done);
	cJSON_AddNullToObject(resp, "Errors");
	text = cJSON_PrintUnformatted(resp);
	if (!text)
		hp_die("out of memory");
	send_input(s, HP_SSM_PT_HANDSHAKE_RESPONSE, text);
	free(text);
	cJSON_Delete(resp);
	cJSON_Delete(req);
}

static void exit_code(struct sess *s, const uint8_t *p, size_t n)
{
	char text[64];
	const char *num;
	char *end;
	long v;

	if (n >= sizeof(text))
		n = sizeof(text) - 1;
	memcpy(text, p, n);
	text[n] = '\0';
	num = strstr(text, "EXIT_CODE:");
	if (!num)
		return;
	num += strlen("EXIT_CODE:");
	v = strtol(num, &end, 10);
	if (end == num || v < -1000000 || v > 1000000)
		return;
	while (*end == ' ' || *end == '\r' || *end == '\n')
		end++;
	if (*end)
		return;
	s->out->has_exit = 1;
	s->out->exit_code = (int)v;
	s->exit_at = s->sys->monotonic_ms(s->sys);
}

/* One in-order stream message from the agent. */
static void deliver(struct sess *s, uint32_t ptype, const uint8_t *p, size_t n)
{
	struct hp_ssm_output *o = s->out;

	switch (ptype) {
	case HP_SSM_PT_OUTPUT:
		add_capped(&o->out, &o->out_capped, p, n);
		break;
	case HP_SSM_PT_STDERR:
		add_capped(&o->err, &o->err_capped, p, n);
		break;
	case HP_SSM_PT_EXIT_CODE:
		exit_code(s, p, n);
		break;
	case HP_SSM_PT_HANDSHAKE_REQUEST:
		handshake(s, p, n);
		break;
	case HP_SSM_PT_ENC_CHALLENGE_REQUEST:
		if (!s->kms)
			s->kms_at = s->sys->monotonic_ms(s->sys);
		s->kms = 1;
		break;
	default:
		/* HandshakeComplete and anything newer carry nothing a probe needs. */
		break;
	}
}

static void stream_data(struct sess *s, const struct hp_ssm_msg *m)
{
	struct hp_ssm_held h;

	switch (hp_ssm_rx_offer(&s->rx, m->seq, m->payload_type, m->payload, m->payload_len)) {
	case HP_RX_DELIVER:
		send_ack(s, m);
		deliver(s, m->payload_type, m->payload, m->payload_len);
		while (hp_ssm_rx_pop(&s->rx, &h)) {
			deliver(s, h.payload_type, h.data, h.len);
			free(h.data);
		}
		break;
	case HP_RX_HELD:
		s->out->held++;
		send_ack(s, m);
		break;
	case HP_RX_DUPLICATE:
		/* The agent resends until it sees an ack; ours may have been lost. */
		s->out->duplicates++;
		send_ack(s, m);
		break;
	case HP_RX_FULL:
		/* No ack: the agent will send it again once there is room. */
		break;
	}
}

static void channel_closed(struct sess *s, const struct hp_ssm_msg *m)
{
	cJSON *j = hp_json_parse((const char *)m->payload, m->payload_len, NULL);
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, "Output");

	s->out->closed = 1;
	if (cJSON_IsString(o) && o->valuestring[0])
		hp_strlcpy(s->out->detail, o->valuestring, sizeof(s->out->detail));
	cJSON_Delete(j);
}

static void open_channel(struct sess *s, const struct hp_ssm_channel *ch)
{
	cJSON *o = cJSON_CreateObject();
	uint8_t id[16];
	char rid[37], *text;

	hp_ssm_uuid_new(s->sys, id);
	hp_ssm_uuid_format(id, rid);
	cJSON_AddStringToObject(o, "MessageSchemaVersion", "1.0");
	cJSON_AddStringToObject(o, "RequestId", rid);
	cJSON_AddStringToObject(o, "TokenValue", ch->token);
	cJSON_AddStringToObject(o, "ClientId", ch->client_id);
	cJSON_AddStringToObject(o, "ClientVersion", CLIENT_VERSION);
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!text)
		hp_die("out of memory");
	if (hp_ws_send(&s->ws, HP_WS_TEXT, text, strlen(text), s->deadline)) {
		snprintf(s->out->detail, sizeof(s->out->detail), "cannot open the data channel: %.200s",
			 s->ws.io->err);
		s->failed = 1;
	}
	hp_wipe(text, strlen(text));
	free(text);
}

static void resend_due(struct sess *s)
{
	int64_t now = s->sys->monotonic_ms(s->sys);
	struct hp_ssm_unacked *u = hp_ssm_tx_due(&s->tx, now);

	if (!u)
		return;
	if (hp_ws_send(&s->ws, HP_WS_BINARY, u->frame, u->len, s->deadline)) {
		snprintf(s->out->detail, sizeof(s->out->detail), "send failed: %.200s", s->ws.io->err);
		s->failed = 1;
		return;
	}
	hp_ssm_tx_resent(&s->tx, u, now);
	s->out->resent++;
}

static enum hp_ssm_end loop(struct sess *s)
{
	struct hp_buf msg = HP_BUF_INIT(HP_WS_MAX_MESSAGE);
	enum hp_ssm_end end;
	char why[256];

	for (;;) {
		int64_t now = s->sys->monotonic_ms(s->sys), tick;
		struct hp_ssm_msg m;
		const char *bad;
		int op, rc;

		if (s->failed) {
			char was[sizeof(s->out->detail)];
			hp_strlcpy(was, s->out->detail, sizeof(was));
			snprintf(s->out->detail, sizeof(s->out->detail),
				 "connection lost before the session ended (%.200s)", was);
			end = HP_SSM_LOST;
			break;
		}
		/* Refused KMS: give the agent a moment to take the answer and close. */
		if (s->kms && now - s->kms_at >= KMS_GRACE_MS) {
			end = HP_SSM_KMS;
			break;
		}
		if (s->out->has_exit && now - s->exit_at >= CLOSE_GRACE_MS) {
			end = HP_SSM_DONE;
			break;
		}
		if (now >= s->deadline) {
			end = HP_SSM_TIMEOUT;
			break;
		}
		if (s->stop && *s->stop) {
			snprintf(s->out->detail, sizeof(s->out->detail), "interrupted");
			end = HP_SSM_STOPPED;
			break;
		}
		tick = now + TICK_MS < s->deadline ? now + TICK_MS : s->deadline;
		rc = hp_ws_next(&s->ws, tick, &op, &msg, why, sizeof(why));
		if (rc == 0) {
			resend_due(s);
			continue;
		}
		if (rc < 0) {
			if (s->kms) {
				end = HP_SSM_KMS;
			} else if (s->out->has_exit) {
				end = HP_SSM_DONE;
			} else if (!s->out->received) {
				snprintf(s->out->detail, sizeof(s->out->detail), "%s", why);
				end = HP_SSM_REFUSED;
			} else {
				snprintf(s->out->detail, sizeof(s->out->detail),
					 "connection lost before the session ended (%.200s)", why);
				end = HP_SSM_LOST;
			}
			break;
		}
		if (hp_ssm_msg_decode((const uint8_t *)msg.buf, msg.len, &m, &bad)) {
			/* Dropped unacknowledged: a good copy will be resent. */
			s->out->dropped_bad++;
			continue;
		}
		s->out->received++;
		if (!strcmp(m.type, "output_stream_data")) {
			stream_data(s, &m);
		} else if (!strcmp(m.type, "acknowledge")) {
			int64_t seq;
			if (!hp_ssm_ack_parse(m.payload, m.payload_len, &seq))
				hp_ssm_tx_ack(&s->tx, seq, s->sys->monotonic_ms(s->sys));
		} else if (!strcmp(m.type, "channel_closed")) {
			channel_closed(s, &m);
			if (s->kms)
				end = HP_SSM_KMS;
			else
				end = s->out->has_exit || !s->out->detail[0] ? HP_SSM_DONE : HP_SSM_FAILED;
			break;
		}
		/* start_publication, pause_publication and unknown types need nothing. */
		resend_due(s);
	}
	hp_buf_release(&msg);
	return end;
}

enum hp_ssm_end hp_ssm_session_run(struct hp_stream *io, struct hp_sys *sys,
				   const struct hp_ssm_channel *ch, int64_t deadline,
				   struct hp_ssm_output *out)
{
	struct sess s;
	enum hp_ssm_end end;
	char why[256];

	memset(&s, 0, sizeof(s));
	s.sys = sys;
	s.out = out;
	s.deadline = deadline;
	s.stop = ch->stop;
	hp_ws_init(&s.ws, io, sys);
	hp_ssm_rx_init(&s.rx, MAX_HELD, MAX_HELD_BYTES);
	hp_ssm_tx_init(&s.tx, MAX_UNACKED);
	if (hp_ws_handshake(&s.ws, ch->host, ch->path, deadline, why, sizeof(why))) {
		snprintf(out->detail, sizeof(out->detail), "%s", why);
		end = sys->monotonic_ms(sys) >= deadline ? HP_SSM_TIMEOUT : HP_SSM_REFUSED;
	} else {
		open_channel(&s, ch);
		end = s.failed ? HP_SSM_REFUSED : loop(&s);
		if (end == HP_SSM_KMS)
			snprintf(out->detail, sizeof(out->detail),
				 "the session is KMS-encrypted, which the native client does not support");
		if (!s.ws.closed && end != HP_SSM_LOST)
			(void)hp_ws_send(&s.ws, HP_WS_CLOSE, "\x03\xe8", 2, sys->monotonic_ms(sys) + 1000);
		/* The node answered: the session ended on an action we refused. */
		if ((end == HP_SSM_FAILED || end == HP_SSM_LOST) && out->refused_action[0] &&
		    !out->has_exit) {
			char was[sizeof(out->detail)];

			hp_strlcpy(was, out->detail, sizeof(was));
			snprintf(out->detail, sizeof(out->detail), "%.160s%s%.60s%s",
				 was[0] ? was : "the session ended", " (after refusing '",
				 out->refused_action, "')");
			end = HP_SSM_UNSUPPORTED;
		}
	}
	hp_ssm_rx_release(&s.rx);
	hp_ssm_tx_release(&s.tx);
	hp_ws_release(&s.ws);
	return end;
}
