/*
 * output: standard output's errors (see output.h).
 */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "options.h"

/* Whether stdout's error has been told: once a run. */
static bool told;

void output_guard(void)
{
	for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null >= 0 && null != fd) {
			dup2(null, fd);
			close(null);
		}
	}
}

/* Stdout's error, of errno E (0: none known), told once. */
static int tell(int e)
{
	if (!told) {
		if (e == 0) {
			/* The writes failed earlier and errno has moved on:
			 * what is left in the buffer tries again. */
			errno = 0;
			clearerr(stdout);
			fflush(stdout);
			e = errno;
		}
		fprintf(stderr, "h2o-tui: standard output: %s\n", e ? strerror(e) : "write error");
		told = true;
	}
	return EXIT_WRITE;
}

int output_out_of_memory(const char *what)
{
	fprintf(stderr, "h2o-tui: out of memory while %s\n", what);
	return EXIT_MEMORY;
}

int output_failed(const char *what)
{
	const int e = errno;
	if (!ferror(stdout))
		return output_out_of_memory(what);
	return tell(e == ENOMEM ? 0 : e);
}

int output_finish(int rc)
{
	errno = 0;
	const bool flushed = fflush(stdout) == 0;
	const int e = errno;
	if (rc != 0)
		return rc;
	if (!flushed || ferror(stdout))
		return tell(flushed ? 0 : e);
	return 0;
}
