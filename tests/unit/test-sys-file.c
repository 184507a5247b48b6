/*
 * The real open_write on paths that are not regular files: a character
 * device is written in place, so a full one says "No space left on device"
 * (never "Invalid argument"); a FIFO and a link are still refused, and a
 * file of a private mode (a snapshot) is never a device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hp/sys.h"
#include "t.h"

static void t_dev_full_says_no_space(void)
{
	struct hp_sys *sys = hp_sys_real();
	struct hp_file_out *f;
	static char block[65536];
	int rc = 0;

	if (access("/dev/full", W_OK))
		return;
	errno = 0;
	f = sys->open_write(sys, "/dev/full", HP_SYS_MODE_DEFAULT);
	T_ASSERT(f != NULL);
	if (!f)
		return;
	memset(block, 'x', sizeof(block));
	rc = f->write(f, block, sizeof(block));
	if (!rc)
		rc = f->commit(f);
	else
		f->abort(f);
	T_EQ(rc, -1);
	T_EQ(errno, ENOSPC);
}

static void t_dev_null_is_written(void)
{
	struct hp_sys *sys = hp_sys_real();
	struct hp_file_out *f = sys->open_write(sys, "/dev/null", HP_SYS_MODE_DEFAULT);

	T_ASSERT(f != NULL);
	if (!f)
		return;
	T_EQ(f->write(f, "report\n", 7), 0);
	T_EQ(f->commit(f), 0);
}

static void t_fifo_and_link_refused(void)
{
	struct hp_sys *sys = hp_sys_real();
	char dir[] = "/tmp/hpnode-sysfile-XXXXXX", fifo[64], link[64];

	T_ASSERT(mkdtemp(dir) != NULL);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	T_EQ(mkfifo(fifo, 0600), 0);
	T_EQ(symlink("/dev/null", link), 0);
	errno = 0;
	T_ASSERT(sys->open_write(sys, fifo, HP_SYS_MODE_DEFAULT) == NULL);
	T_EQ(errno, EINVAL);
	errno = 0;
	T_ASSERT(sys->open_write(sys, link, HP_SYS_MODE_DEFAULT) == NULL);
	T_EQ(errno, ELOOP);
	/* A private file (a snapshot, a bundle) is never a device. */
	errno = 0;
	T_ASSERT(sys->open_write(sys, "/dev/null", 0600) == NULL);
	T_EQ(errno, EINVAL);
	unlink(fifo);
	unlink(link);
	rmdir(dir);
}

/* Standard input from a pipe: read whole up to max bytes, one byte past max is EFBIG. */
static long drain(struct hp_file_in *in, char *buf, size_t n, int *err)
{
	long got, total = 0;

	*err = 0;
	while ((size_t)total < n && (got = in->read(in, buf + total, n - (size_t)total)) > 0)
		total += got;
	if (got < 0)
		*err = errno;
	return total;
}

static void stdin_from(const char *text, uint64_t max, long *got, int *err, char *buf, size_t n)
{
	struct hp_sys *sys = hp_sys_real();
	struct hp_file_in *in;
	int p[2], saved = dup(STDIN_FILENO);

	T_EQ(pipe(p), 0);
	T_EQ(write(p[1], text, strlen(text)), (ssize_t)strlen(text));
	close(p[1]);
	dup2(p[0], STDIN_FILENO);
	close(p[0]);
	in = sys->open_stdin(sys, max);
	T_ASSERT(in != NULL);
	*got = in ? drain(in, buf, n, err) : -1;
	if (in)
		in->close(in);
	dup2(saved, STDIN_FILENO);
	close(saved);
}

static void t_stdin_bounded(void)
{
	char buf[64];
	long got;
	int err;

	memset(buf, 0, sizeof(buf));
	stdin_from("{\"version\": 1}\n", 16, &got, &err, buf, sizeof(buf));
	T_EQ(got, 15);
	T_EQ(err, 0);
	T_STREQ(buf, "{\"version\": 1}\n");
	/* Exactly max is read; one more byte is refused. */
	stdin_from("0123456789", 10, &got, &err, buf, sizeof(buf));
	T_EQ(got, 10);
	T_EQ(err, 0);
	stdin_from("0123456789x", 10, &got, &err, buf, sizeof(buf));
	T_EQ(err, EFBIG);
}

T_MAIN(T(t_dev_full_says_no_space), T(t_dev_null_is_written), T(t_fifo_and_link_refused),
       T(t_stdin_bounded))
