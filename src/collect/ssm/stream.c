/*
 * The reliable-stream bookkeeping of the SSM data channel, free of I/O:
 * the receiving side delivers messages in sequence order, holds a bounded
 * number that arrive early and recognises duplicates; the sending side
 * keeps unacknowledged messages for retransmission with an adaptive
 * timeout (smoothed round trip, capped at one second).
 */
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "ssm-int.h"

void hp_ssm_rx_init(struct hp_ssm_rx *rx, size_t max_held, size_t max_bytes)
{
	memset(rx, 0, sizeof(*rx));
	rx->max_held = max_held;
	rx->max_bytes = max_bytes;
}

void hp_ssm_rx_release(struct hp_ssm_rx *rx)
{
	size_t i;

	for (i = 0; i < rx->nheld; i++)
		free(rx->held[i].data);
	free(rx->held);
	rx->held = NULL;
	rx->nheld = rx->held_alloc = 0;
	rx->held_bytes = 0;
}

enum hp_ssm_rx_verdict hp_ssm_rx_offer(struct hp_ssm_rx *rx, int64_t seq, uint32_t payload_type,
				       const uint8_t *p, size_t n)
{
	struct hp_ssm_held *h;
	size_t i;

	if (seq == rx->expected) {
		rx->expected++;
		return HP_RX_DELIVER;
	}
	if (seq < rx->expected)
		return HP_RX_DUPLICATE;
	for (i = 0; i < rx->nheld; i++)
		if (rx->held[i].seq == seq)
			return HP_RX_DUPLICATE;
	if (rx->nheld >= rx->max_held || n > rx->max_bytes - rx->held_bytes)
		return HP_RX_FULL;
	rx->held = hp_array_grow(rx->held, &rx->held_alloc, rx->nheld, 1, sizeof(*rx->held));
	h = &rx->held[rx->nheld++];
	h->seq = seq;
	h->payload_type = payload_type;
	h->len = n;
	h->data = xmalloc(n ? n : 1);
	if (n)
		memcpy(h->data, p, n);
	rx->held_bytes += n;
	return HP_RX_HELD;
}

int hp_ssm_rx_pop(struct hp_ssm_rx *rx, struct hp_ssm_held *out)
{
	size_t i;

	for (i = 0; i < rx->nheld; i++) {
		if (rx->held[i].seq != rx->expected)
			continue;
		*out = rx->held[i];
		rx->held[i] = rx->held[--rx->nheld];
		rx->held_bytes -= out->len;
		rx->expected++;
		return 1;
	}
	return 0;
}

void hp_ssm_tx_init(struct hp_ssm_tx *tx, size_t max_unacked)
{
	memset(tx, 0, sizeof(*tx));
	tx->max = max_unacked;
	tx->srtt_ms = 100;
	tx->rttvar_ms = 0;
	tx->rto_ms = HP_SSM_RTO_INITIAL_MS;
}

void hp_ssm_tx_release(struct hp_ssm_tx *tx)
{
	size_t i;

	for (i = 0; i < tx->n; i++)
		free(tx->v[i].frame);
	free(tx->v);
	tx->v = NULL;
	tx->alloc = 0;
	tx->n = 0;
}

int hp_ssm_tx_add(struct hp_ssm_tx *tx, int64_t seq, const void *frame, size_t len, int64_t now)
{
	struct hp_ssm_unacked *u;

	if (tx->n >= tx->max)
		return -1;
	tx->v = hp_array_grow(tx->v, &tx->alloc, tx->n, 1, sizeof(*tx->v));
	u = &tx->v[tx->n++];
	u->seq = seq;
	u->frame = xmalloc(len ? len : 1);
	memcpy(u->frame, frame, len);
	u->len = len;
	u->first_ms = u->sent_ms = now;
	u->resends = 0;
	return 0;
}

int hp_ssm_tx_ack(struct hp_ssm_tx *tx, int64_t seq, int64_t now)
{
	size_t i;

	for (i = 0; i < tx->n; i++) {
		struct hp_ssm_unacked *u = &tx->v[i];
		double rtt, dev, var;

		if (u->seq != seq)
			continue;
		/* A resent message's round trip is ambiguous; only clean ones update the estimate. */
		if (!u->resends) {
			rtt = (double)(now - u->sent_ms);
			if (rtt < 0)
				rtt = 0;
			dev = tx->srtt_ms - rtt;
			if (dev < 0)
				dev = -dev;
			tx->rttvar_ms = 0.75 * tx->rttvar_ms + 0.25 * dev;
			tx->srtt_ms = 0.875 * tx->srtt_ms + 0.125 * rtt;
			var = 4 * tx->rttvar_ms;
			tx->rto_ms = (long)(tx->srtt_ms + (var > 10 ? var : 10));
			if (tx->rto_ms > HP_SSM_RTO_MAX_MS)
				tx->rto_ms = HP_SSM_RTO_MAX_MS;
		}
		free(u->frame);
		memmove(u, u + 1, (tx->n - i - 1) * sizeof(*u));
		tx->n--;
		return 1;
	}
	return 0;
}

struct hp_ssm_unacked *hp_ssm_tx_due(struct hp_ssm_tx *tx, int64_t now)
{
	struct hp_ssm_unacked *oldest = NULL;
	size_t i;

	for (i = 0; i < tx->n; i++)
		if (!oldest || tx->v[i].sent_ms < oldest->sent_ms)
			oldest = &tx->v[i];
	if (oldest && now - oldest->sent_ms >= tx->rto_ms)
		return oldest;
	return NULL;
}

void hp_ssm_tx_resent(struct hp_ssm_tx *tx, struct hp_ssm_unacked *u, int64_t now)
{
	(void)tx;
	u->sent_ms = now;
	u->resends++;
}
