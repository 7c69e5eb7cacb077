/*
 * tui_hold: stderr held while the screen is up (tui_impl.h).
 *
 * A line written on stderr while curses owns the terminal would land in
 * the middle of the frame and be gone with the alternate screen: the load
 * failing on its thread, a message of the run. So file descriptor 2 is a
 * pipe for that time, emptied into memory by the screen's loops, and what
 * it held is written to the real stderr once the terminal is given back.
 * The pipe never blocks a writer: when it is full (nobody drained it for
 * 64 kB) the write fails and the text is lost, rather than the program
 * hanging.
 */
#include "tui_impl.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* At most this much is kept; the rest is counted and said to be lost. */
#define HOLD_MAX (1024 * 1024)

static int hold_saved = -1; /* the real stderr, while held */
static int hold_pipe = -1;  /* the pipe's read end */
static char *hold_text;
static size_t hold_len, hold_lost;

void tui_hold_start(void)
{
	int fds[2];

	if (hold_saved >= 0 || pipe(fds) != 0)
		return; /* not held: stderr stays the terminal */
	fflush(stderr);
	hold_saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (hold_saved < 0 || dup2(fds[1], STDERR_FILENO) < 0) {
		if (hold_saved >= 0)
			close(hold_saved);
		hold_saved = -1;
		close(fds[0]);
		close(fds[1]);
		return;
	}
	close(fds[1]);
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	fcntl(STDERR_FILENO, F_SETFL, O_NONBLOCK);
	hold_pipe = fds[0];
}

void tui_hold_drain(void)
{
	char buf[4096];
	ssize_t n;

	if (hold_pipe < 0)
		return;
	while ((n = read(hold_pipe, buf, sizeof buf)) > 0) {
		const size_t keep = hold_len + (size_t)n <= HOLD_MAX ? (size_t)n
		                    : hold_len < HOLD_MAX            ? HOLD_MAX - hold_len
		                                                     : 0;
		char *grown = keep ? realloc(hold_text, hold_len + keep) : hold_text;
		if (keep && grown) {
			hold_text = grown;
			memcpy(hold_text + hold_len, buf, keep);
			hold_len += keep;
		}
		hold_lost += (size_t)n - (keep && grown ? keep : 0);
	}
}

void tui_hold_release(void)
{
	if (hold_saved < 0)
		return;
	fflush(stderr);
	/* The pipe's only writer is gone with fd 2: the last drain reads
	 * everything, up to the end. */
	dup2(hold_saved, STDERR_FILENO);
	close(hold_saved);
	hold_saved = -1;
	tui_hold_drain();
	close(hold_pipe);
	hold_pipe = -1;
	if (hold_len)
		fwrite(hold_text, 1, hold_len, stderr);
	if (hold_lost)
		fprintf(stderr,
		        "h2o-tui: %zu bytes of messages written while the screen was up were "
		        "lost\n",
		        hold_lost);
	free(hold_text);
	hold_text = NULL;
	hold_len = hold_lost = 0;
}
