/*
 * The real hp_sys TLS stream (include/hp/sys.h): a connection opened by
 * libcurl in CONNECT_ONLY mode (so HTTPS proxies, the CA bundle and the
 * certificate checks work as for every other call) and driven with
 * curl_easy_send/recv and poll() under deadlines. No HTTP is spoken here.
 */
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sys-int.h"

#define CONNECT_TIMEOUT_MAX_MS 30000L

struct tls {
	struct hp_stream s;
	struct hp_sys *sys;
	CURL *curl;
	curl_socket_t fd;
};

/* 1 when the socket is ready for events, 0 when the deadline passed, -1 on a poll error. */
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
			snprintf(t->s.err, sizeof(t->s.err), "poll: %s", strerror(errno));
			return -1;
		}
	}
}

static int tls_send(struct hp_stream *s, const void *p, size_t n, int64_t deadline)
{
	struct tls *t = s->impl;
	size_t done = 0;

	while (done < n) {
		size_t sent = 0;
		CURLcode rc = curl_easy_send(t->curl, (const char *)p + done, n - done, &sent);

		if (rc == CURLE_OK) {
			done += sent;
			continue;
		}
		if (rc != CURLE_AGAIN) {
			snprintf(s->err, sizeof(s->err), "%s", curl_easy_strerror(rc));
			return -1;
		}
		switch (wait_fd(t, POLLOUT, deadline)) {
		case 0:
			snprintf(s->err, sizeof(s->err), "send timed out");
			return -1;
		case -1:
			return -1;
		default:
			break;
		}
	}
	return 0;
}

static long tls_recv(struct hp_stream *s, void *p, size_t n, int64_t deadline)
{
	struct tls *t = s->impl;

	for (;;) {
		size_t got = 0;
		/* Try first: TLS may hold decrypted bytes the socket no longer shows. */
		CURLcode rc = curl_easy_recv(t->curl, p, n, &got);
		int w;

		if (rc == CURLE_OK) {
			if (!got) {
				snprintf(s->err, sizeof(s->err), "connection closed by the server");
				return -1;
			}
			return (long)got;
		}
		if (rc != CURLE_AGAIN) {
			snprintf(s->err, sizeof(s->err), "%s", curl_easy_strerror(rc));
			return -1;
		}
		w = wait_fd(t, POLLIN, deadline);
		if (w <= 0)
			return w;
	}
}

static void tls_close(struct hp_stream *s)
{
	struct tls *t = s->impl;

	curl_easy_cleanup(t->curl);
	free(t);
}

struct hp_stream *hp_sys_real_tls_connect(struct hp_sys *sys, const char *authority,
					  const char *ca_bundle, int64_t deadline, char *err,
					  size_t errn)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct hp_sys_sock sock = { 0, 0 };
	int64_t left = deadline - sys->monotonic_ms(sys);
	curl_socket_t fd = CURL_SOCKET_BAD;
	struct tls *t;
	char *https;
	CURLcode rc;

	/* A peer that hangs up must show as a failed write, not end the process. */
	signal(SIGPIPE, SIG_IGN);
	t = xcalloc(1, sizeof(*t));
	t->sys = sys;
	t->curl = curl_easy_init();
	if (!t->curl) {
		free(t);
		snprintf(err, errn, "cannot initialise libcurl");
		return NULL;
	}
	https = xasprintf("https://%s/", authority);
	curl_easy_setopt(t->curl, CURLOPT_URL, https);
	curl_easy_setopt(t->curl, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(t->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(t->curl, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(t->curl, CURLOPT_OPENSOCKETFUNCTION, hp_sys_open_socket);
	curl_easy_setopt(t->curl, CURLOPT_OPENSOCKETDATA, &sock);
	curl_easy_setopt(t->curl, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(t->curl, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(left > CONNECT_TIMEOUT_MAX_MS ? CONNECT_TIMEOUT_MAX_MS : left > 0 ? left : 1));
	curl_easy_setopt(t->curl, CURLOPT_ERRORBUFFER, errbuf);
	if (ca_bundle)
		curl_easy_setopt(t->curl, CURLOPT_CAINFO, ca_bundle);
	rc = curl_easy_perform(t->curl);
	free(https);
	if (rc == CURLE_OK)
		rc = curl_easy_getinfo(t->curl, CURLINFO_ACTIVESOCKET, &fd);
	if (rc != CURLE_OK || fd == CURL_SOCKET_BAD) {
		hp_sys_note_curl(t->curl, rc);
		if (sock.refused)
			snprintf(err, errn, "refused: the data channel's host resolves to a link-local "
				 "or metadata address");
		else
			snprintf(err, errn, "%.200s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
		curl_easy_cleanup(t->curl);
		free(t);
		return NULL;
	}
	curl_easy_setopt(t->curl, CURLOPT_ERRORBUFFER, NULL);
	t->fd = fd;
	t->s.send = tls_send;
	t->s.recv = tls_recv;
	t->s.close = tls_close;
	t->s.impl = t;
	return &t->s;
}
