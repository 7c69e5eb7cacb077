/*
 * model_io: error lines and opening the files the model module reads.
 */
#include "model_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int model_fail(char *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, LLAMA_ERR_MAX, fmt, ap);
	va_end(ap);
	return -1;
}

const char *model_shown(const char *s, size_t len, char buf[MODEL_SHOWN_MAX])
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		const unsigned char ch = (unsigned char)s[i];
		if (i == 40) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\') {
			buf[o++] = (char)ch;
		} else {
			snprintf(buf + o, 5, "\\x%02x", ch);
			o += 4;
		}
	}
	buf[o] = '\0';
	return buf;
}

const char *model_shown_str(const char *s, char buf[MODEL_SHOWN_MAX])
{
	return model_shown(s, strlen(s), buf);
}

/* FD (ours to close) as a FILE if it is a regular file. */
static int open_stream(int fd, FILE **f, uint64_t *size, char *err)
{
	struct stat st;

	if (fstat(fd, &st) != 0) {
		const int e = errno;
		close(fd);
		return model_fail(err, "cannot stat: %s", strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return model_fail(err, "not a regular file");
	}
	const int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
		const int e = errno;
		close(fd);
		return model_fail(err, "cannot read: %s", strerror(e));
	}
	*f = fdopen(fd, "rb");
	if (*f == NULL) {
		const int e = errno;
		close(fd);
		return model_fail(err, "cannot read: %s", strerror(e));
	}
	*size = (uint64_t)st.st_size;
	return 0;
}

int model_open(const char *path, FILE **f, uint64_t *size, char *err)
{
	/* O_NONBLOCK: opening a FIFO with no writer would wait for one. */
	const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return model_fail(err, "cannot open: %s", strerror(errno));
	return open_stream(fd, f, size, err);
}

int model_open_fd(int fd, FILE **f, uint64_t *size, char *err)
{
	const int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own < 0)
		return model_fail(err, "cannot read: %s", strerror(errno));
	if (lseek(own, 0, SEEK_SET) < 0) {
		const int e = errno;
		close(own);
		return model_fail(err, "cannot read: %s", strerror(e));
	}
	return open_stream(own, f, size, err);
}
