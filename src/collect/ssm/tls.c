/*
 * The byte transport under the data channel's WebSocket: the stream URL
 * checked and split, then a TLS connection to its host through
 * sys->tls_connect (libcurl for real, memory in the tests).
 */
#include <stdio.h>
#include <string.h>

#include "ssm-int.h"

int hp_ssm_parse_url(const char *url, char *host, size_t hn, int *port, char *path, size_t pn)
{
	const char *h, *end, *colon = NULL, *p;
	size_t len;

	if (strncmp(url, "wss://", 6))
		return -1;
	h = url + 6;
	end = h + strcspn(h, "/?#");
	if (*h == '[') {
		const char *rb = memchr(h, ']', (size_t)(end - h));
		if (!rb)
			return -1;
		if (rb + 1 < end)
			colon = rb + 1;
	} else {
		colon = memchr(h, ':', (size_t)(end - h));
	}
	len = (size_t)(end - h);
	if (!len || len >= hn || (colon && *colon != ':'))
		return -1;
	*port = 443;
	if (colon) {
		long v = 0;
		if (colon + 1 == end)
			return -1;
		for (p = colon + 1; p < end; p++) {
			if (*p < '0' || *p > '9')
				return -1;
			v = v * 10 + (*p - '0');
			if (v > 65535)
				return -1;
		}
		if (!v)
			return -1;
		*port = (int)v;
	}
	memcpy(host, h, len);
	host[len] = '\0';
	if (colon == h)
		return -1;
	/* Path and query go into the request line verbatim: nothing that could break it. */
	for (p = end; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return -1;
	if (*end == '#')
		return -1;
	if (*end == '?')
		len = (size_t)snprintf(path, pn, "/%s", end);
	else
		len = (size_t)snprintf(path, pn, "%s", *end ? end : "/");
	return len >= pn ? -1 : 0;
}

struct hp_stream *hp_ssm_tls_open(struct hp_sys *sys, const char *url, const char *ca_bundle,
				  int64_t deadline, char *err, size_t errn)
{
	char host[512], path[8192], why[256] = "";
	struct hp_stream *s;
	int port;

	if (hp_ssm_parse_url(url, host, sizeof(host), &port, path, sizeof(path))) {
		snprintf(err, errn, "stream URL is not a wss:// URL hpnode can use");
		return NULL;
	}
	if (deadline - sys->monotonic_ms(sys) <= 0) {
		snprintf(err, errn, "no time left to connect");
		return NULL;
	}
	s = sys->tls_connect(sys, host, ca_bundle, deadline, why, sizeof(why));
	if (!s)
		snprintf(err, errn, "cannot connect to the stream URL host '%.200s': %.200s", host, why);
	return s;
}
