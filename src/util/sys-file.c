/*
 * The real hp_sys entries for files read and written in pieces
 * (include/hp/sys.h): open_read with read_file's refusals, open_write with
 * write_file's temporary file beside the path, renamed over it at commit.
 * write_file is open_write, one write and commit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "hp/util.h"
#include "sys-int.h"

struct in_file {
	struct hp_file_in f;
	int fd;                 /* -1: /dev/null, read as empty */
	int own;                /* fd is closed at close (not standard input) */
	uint64_t left;          /* standard input: bytes still allowed */
	int bounded;
};

static long in_read(struct hp_file_in *f, void *p, size_t n)
{
	struct in_file *x = f->impl;
	ssize_t got;

	if (x->fd < 0)
		return 0;
	/* Standard input has no size to check first: one byte past max is the refusal. */
	if (x->bounded && n > x->left)
		n = (size_t)x->left + 1;
	do
		got = read(x->fd, p, n);
	while (got < 0 && errno == EINTR);
	if (x->bounded && got > 0) {
		if ((uint64_t)got > x->left) {
			errno = EFBIG;
			return -1;
		}
		x->left -= (uint64_t)got;
	}
	return (long)got;
}

static void in_close(struct hp_file_in *f)
{
	struct in_file *x = f->impl;

	if (x->fd >= 0 && x->own)
		close(x->fd);
	free(x);
}

/* /dev/null reads as an empty file (AWS_CONFIG_FILE=/dev/null is common). */
static int is_dev_null(const struct stat *st)
{
	struct stat null;

	return S_ISCHR(st->st_mode) && stat("/dev/null", &null) == 0 &&
	       S_ISCHR(null.st_mode) && st->st_rdev == null.st_rdev;
}

/*
 * Regular files only: a FIFO, socket, directory or device (bar /dev/null)
 * is refused with EINVAL before any read, and a file over max with EFBIG.
 * O_NONBLOCK keeps the open itself from waiting on a FIFO.
 */
struct hp_file_in *hp_sys_real_open_read(struct hp_sys *sys, const char *path, uint64_t max)
{
	struct in_file *x;
	struct stat st;
	int fd, null;

	(void)sys;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		hp_sys_note_errno(errno);
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		return NULL;
	}
	null = !S_ISREG(st.st_mode) && is_dev_null(&st);
	if (!S_ISREG(st.st_mode) && !null) {
		close(fd);
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		return NULL;
	}
	if (!null && (st.st_size < 0 || (uint64_t)st.st_size > max)) {
		close(fd);
		errno = EFBIG;
		return NULL;
	}
	if (null) {
		close(fd);
		fd = -1;
	} else {
		/* Reads block as a regular file's do (O_NONBLOCK was for the open). */
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	}
	x = xcalloc(1, sizeof(*x));
	x->fd = fd;
	x->own = 1;
	x->f.read = in_read;
	x->f.close = in_close;
	x->f.impl = x;
	return &x->f;
}

/* A terminal is refused: `--snapshot -` with nothing piped in would wait on the keyboard. */
struct hp_file_in *hp_sys_real_open_stdin(struct hp_sys *sys, uint64_t max)
{
	struct in_file *x;
	struct stat st;

	(void)sys;
	if (fstat(STDIN_FILENO, &st) < 0)
		return NULL;
	if (isatty(STDIN_FILENO)) {
		errno = ENOTTY;
		return NULL;
	}
	x = xcalloc(1, sizeof(*x));
	x->fd = STDIN_FILENO;
	x->bounded = 1;
	x->left = max;
	x->f.read = in_read;
	x->f.close = in_close;
	x->f.impl = x;
	return &x->f;
}

struct out_file {
	struct hp_file_out f;
	int fd;
	int err;                /* the first write error, reported at commit */
	char *tmp, *path;
};

static int out_write(struct hp_file_out *f, const void *p, size_t n)
{
	struct out_file *x = f->impl;
	const char *c = p;
	size_t done = 0;

	if (x->err) {
		errno = x->err;
		return -1;
	}
	while (done < n) {
		ssize_t w = write(x->fd, c + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			x->err = w < 0 ? errno : EIO;
			errno = x->err;
			return -1;
		}
		done += (size_t)w;
	}
	return 0;
}

static void out_free(struct out_file *x)
{
	free(x->tmp);
	free(x->path);
	free(x);
}

static int out_commit(struct hp_file_out *f)
{
	struct out_file *x = f->impl;
	int err = x->err;

	/* A character device (x->tmp NULL) was written in place: nothing to sync or rename. */
	if (!err && x->tmp && fsync(x->fd) < 0)
		err = errno;
	if (close(x->fd) < 0 && !err)
		err = errno;
	/* rename() replaces the name itself: it never writes through a link. */
	if (!err && x->tmp && rename(x->tmp, x->path) < 0)
		err = errno;
	if (err && x->tmp)
		unlink(x->tmp);
	out_free(x);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

static void out_abort(struct hp_file_out *f)
{
	struct out_file *x = f->impl;

	close(x->fd);
	if (x->tmp)
		unlink(x->tmp);
	out_free(x);
}

void hp_sys_dir_of(const char *path, char *out, size_t n)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(out, n, ".");
	else if (slash == path)
		snprintf(out, n, "/");
	else
		snprintf(out, n, "%.*s", (int)(slash - path), path);
}

/*
 * An existing path that is not a regular file (a symlink, a block device,
 * a FIFO) is refused and left as it is: ELOOP for a link, EISDIR for a
 * directory, EINVAL for the rest. With HP_SYS_MODE_DEFAULT (the report
 * files), a character device (/dev/stdout, /dev/null) is written in place,
 * so its own errors are the ones reported (ENOSPC from /dev/full); a file
 * of a private mode (a snapshot, a bundle) is always a fresh regular file. The temporary file is a fresh one in the
 * same directory, with the mode given (HP_SYS_MODE_DEFAULT: 0666 less the
 * umask); a failure leaves it behind nowhere.
 */
struct hp_file_out *hp_sys_real_open_write(struct hp_sys *sys, const char *path, int mode)
{
	char dir[4096], tmp[4096 + 32];
	const char *base = strrchr(path, '/');
	struct out_file *x;
	struct stat st;
	int fd, device_ok = mode == HP_SYS_MODE_DEFAULT;

	(void)sys;
	if (mode == HP_SYS_MODE_DEFAULT) {
		mode_t mask = umask(0);

		umask(mask);
		mode = (int)(0666 & ~mask);
	}
	if (!*path || (base && !base[1])) {
		errno = EISDIR;
		return NULL;
	}
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode)) {
			errno = ELOOP;
			return NULL;
		}
		if (S_ISCHR(st.st_mode) && device_ok) {
			fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
			if (fd < 0)
				return NULL;
			x = xcalloc(1, sizeof(*x));
			x->fd = fd;
			x->path = xstrdup(path);
			x->f.write = out_write;
			x->f.commit = out_commit;
			x->f.abort = out_abort;
			x->f.impl = x;
			return &x->f;
		}
		if (!S_ISREG(st.st_mode)) {
			errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
			return NULL;
		}
	} else if (errno != ENOENT) {
		return NULL;
	}
	hp_sys_dir_of(path, dir, sizeof(dir));
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, base ? base + 1 : path) >=
	    (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		hp_sys_note_errno(errno);
		return NULL;
	}
	if (fchmod(fd, (mode_t)mode) < 0) {
		int err = errno;

		close(fd);
		unlink(tmp);
		errno = err;
		return NULL;
	}
	x = xcalloc(1, sizeof(*x));
	x->fd = fd;
	x->tmp = xstrdup(tmp);
	x->path = xstrdup(path);
	x->f.write = out_write;
	x->f.commit = out_commit;
	x->f.abort = out_abort;
	x->f.impl = x;
	return &x->f;
}
