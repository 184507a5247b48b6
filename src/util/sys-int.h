/*
 * The real hp_sys entries kept outside src/util/sys.c, for its table:
 * children and the pseudo-terminal (sys-proc.c), the TLS stream (sys-tls.c),
 * files read and written in pieces (sys-file.c).
 */
#ifndef HP_SYS_INT_H
#define HP_SYS_INT_H

#include <curl/curl.h>

#include "hp/sys.h"

int hp_sys_real_run(struct hp_sys *sys, const struct hp_run_req *req, struct hp_run_res *res);
struct hp_pty *hp_sys_real_pty_spawn(struct hp_sys *sys, const struct hp_pty_req *req);
struct hp_stream *hp_sys_real_tls_connect(struct hp_sys *sys, const char *authority,
					  const char *ca_bundle, int64_t deadline, char *err,
					  size_t errn);
struct hp_file_in *hp_sys_real_open_read(struct hp_sys *sys, const char *path, uint64_t max);
struct hp_file_in *hp_sys_real_open_stdin(struct hp_sys *sys, uint64_t max);
struct hp_file_out *hp_sys_real_open_write(struct hp_sys *sys, const char *path, int mode);
/* The folder of path ("." when it has none, "/" for a file at the root) into out. */
void hp_sys_dir_of(const char *path, char *out, size_t n);

/* What the socket callback is told and tells (CURLOPT_OPENSOCKETDATA). */
struct hp_sys_sock {
	int link_local_ok;  /* a metadata request: it may reach a link-local address */
	int refused;        /* set when a link-local address was refused */
};
/*
 * libcurl's socket callback for every handle (ud: a struct hp_sys_sock,
 * or NULL): a link-local or metadata address is refused unless allowed,
 * an EMFILE/ENFILE is noted (hp_sys_fd_exhausted).
 */
curl_socket_t hp_sys_open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *addr);
/* After a failed transfer: the system error libcurl met, noted when it is EMFILE/ENFILE. */
void hp_sys_note_curl(void *curl, int rc);

#endif
