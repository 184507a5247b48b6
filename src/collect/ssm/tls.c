/*
 * The byte transport under the data channel's WebSocket: a TLS connection
 * opened by libcurl in CONNECT_ONLY mode (so HTTPS proxies, the CA bundle
 * and certificate checks work as for every other call) and driven with
 * curl_easy_send/recv and poll() under deadlines. No HTTP is spoken here.
 */
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/ssm.h"

struct tls {
	struct hp_ssm_io io;
	struct hp_sys *sys;
	CURL *curl;
	curl_socket_t fd;
};

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

static int wait_fd(struct tls *t, short events, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - t->sys->monotonic_ms(t->sys);
		struct pollfd pfd;
		int rc;

		if (left <= 0)
			return 0;
		pfd.fd = (int)t->fd;
		pfd.events = events;
		pfd.revents = 0;
		rc = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
		if (rc > 0)
			return 1;
		if (rc < 0 && errno != EINTR) {
			snprintf(t->io.err, sizeof(t->io.err), "poll: %s", strerror(errno));
			return -1;
		}
	}
}

static int tls_send(struct hp_ssm_io *io, const void *p, size_t n, int64_t deadline)
{
	struct tls *t = io->impl;
	size_t done = 0;

	while (done < n) {
		size_t sent = 0;
		CURLcode rc = curl_easy_send(t->curl, (const char *)p + done, n - done, &sent);

		if (rc == CURLE_OK) {
			done += sent;
			continue;
		}
		if (rc != CURLE_AGAIN) {
			snprintf(io->err, sizeof(io->err), "%s", curl_easy_strerror(rc));
			return -1;
		}
		switch (wait_fd(t, POLLOUT, deadline)) {
		case 0:
			snprintf(io->err, sizeof(io->err), "send timed out");
			return -1;
		case -1:
			return -1;
		default:
			break;
		}
	}
	return 0;
}

static long tls_recv(struct hp_ssm_io *io, void *p, size_t n, int64_t deadline)
{
	struct tls *t = io->impl;

	for (;;) {
		size_t got = 0;
		/* Try first: TLS may hold decrypted bytes the socket no longer shows. */
		CURLcode rc = curl_easy_recv(t->curl, p, n, &got);
		int w;

		if (rc == CURLE_OK) {
			if (!got) {
				snprintf(io->err, sizeof(io->err), "connection closed by the server");
				return -1;
			}
			return (long)got;
		}
		if (rc != CURLE_AGAIN) {
			snprintf(io->err, sizeof(io->err), "%s", curl_easy_strerror(rc));
			return -1;
		}
		w = wait_fd(t, POLLIN, deadline);
		if (w <= 0)
			return w;
	}
}

static void tls_close(struct hp_ssm_io *io)
{
	struct tls *t = io->impl;

	curl_easy_cleanup(t->curl);
	free(t);
}

struct hp_ssm_io *hp_ssm_tls_open(struct hp_sys *sys, const char *url, const char *ca_bundle,
				  int64_t deadline, char *err, size_t errn)
{
	char host[512], path[8192], errbuf[CURL_ERROR_SIZE] = "";
	struct tls *t;
	char *https;
	CURLcode rc;
	int port;
	int64_t left = deadline - sys->monotonic_ms(sys);
	curl_socket_t fd = CURL_SOCKET_BAD;

	if (hp_ssm_parse_url(url, host, sizeof(host), &port, path, sizeof(path))) {
		snprintf(err, errn, "stream URL is not a wss:// URL hpnode can use");
		return NULL;
	}
	if (left <= 0) {
		snprintf(err, errn, "no time left to connect");
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	t->sys = sys;
	t->curl = curl_easy_init();
	if (!t->curl) {
		free(t);
		snprintf(err, errn, "cannot initialise libcurl");
		return NULL;
	}
	https = xasprintf("https://%s/", host);
	curl_easy_setopt(t->curl, CURLOPT_URL, https);
	curl_easy_setopt(t->curl, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(t->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(t->curl, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(t->curl, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(t->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)(left > 30000 ? 30000 : left));
	curl_easy_setopt(t->curl, CURLOPT_ERRORBUFFER, errbuf);
	if (ca_bundle)
		curl_easy_setopt(t->curl, CURLOPT_CAINFO, ca_bundle);
	rc = curl_easy_perform(t->curl);
	free(https);
	if (rc == CURLE_OK)
		rc = curl_easy_getinfo(t->curl, CURLINFO_ACTIVESOCKET, &fd);
	if (rc != CURLE_OK || fd == CURL_SOCKET_BAD) {
		snprintf(err, errn, "cannot connect to the stream URL host '%.200s': %.200s", host,
			 errbuf[0] ? errbuf : curl_easy_strerror(rc));
		curl_easy_cleanup(t->curl);
		free(t);
		return NULL;
	}
	curl_easy_setopt(t->curl, CURLOPT_ERRORBUFFER, NULL);
	t->fd = fd;
	t->io.send = tls_send;
	t->io.recv = tls_recv;
	t->io.close = tls_close;
	t->io.impl = t;
	return &t->io;
}
