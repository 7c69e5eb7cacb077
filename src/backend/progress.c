/*
 * progress: the progress line on stderr (see progress.h).
 */
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* The line is redrawn at most every PROGRESS_MS. */
#define PROGRESS_MS 100

static double seconds_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The one place that writes the terminal's control codes on stderr: back
 * to the line's start and clear it (a carriage return, then ECMA-48's
 * "erase in line"), so the next text replaces the line. */
static void clear_line(void)
{
	fputs("\r\033[K", stderr);
}

static void meter_show(void *ctx, double done, double total)
{
	struct meter *m = ctx;
	const double now = seconds_now();
	if (m->shown && now - m->last < PROGRESS_MS / 1000.0 && done < total)
		return;
	m->last = now;
	m->shown = true;
	const double frac = total > 0 ? done / total : 1;
	enum { BAR = 24 };
	char bar[BAR + 1];
	for (int i = 0; i < BAR; i++)
		bar[i] = i < (int)(frac * BAR) ? '#' : '.';
	bar[BAR] = '\0';
	char left[48] = "";
	const double elapsed = now - m->start;
	if (frac > 0 && frac < 1 && elapsed >= 1) {
		char t[32];
		cost_format_duration(elapsed * (1 - frac) / frac, t, sizeof t);
		snprintf(left, sizeof left, "  %s left", t);
	}
	clear_line();
	fprintf(stderr, "h2o-tui: %s [%s] %3.0f%%%s", m->what, bar, 100 * frac, left);
	fflush(stderr);
}

const struct progress *progress_start(struct meter *m, bool quiet, const char *what)
{
	*m = (struct meter){.what = what};
	if (quiet || !isatty(STDERR_FILENO))
		return NULL;
	m->start = seconds_now();
	m->progress = (struct progress){.report = meter_show, .ctx = m};
	return &m->progress;
}

void progress_done(const struct meter *m)
{
	if (m->shown)
		clear_line();
}

static void phase_report(void *ctx, double done, double total)
{
	const struct progress_phase *ph = ctx;
	progress_tell(ph->to, ph->from + ph->share * (total > 0 ? done / total : 1.0), 1.0);
}

const struct progress *progress_phase(struct progress_phase *ph, const struct progress *to,
                                      double from, double share)
{
	*ph = (struct progress_phase){{.report = phase_report, .ctx = ph}, to, from, share};
	return to ? &ph->progress : NULL;
}
