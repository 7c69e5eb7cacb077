/*
 * tui_load: the scene loaded on a thread while the screen shows the
 * loading frame (tui.h, tui_load).
 *
 * The screen is up before the load starts, so the user sees at once what
 * is being opened, in which phase the load is (reading, tokenizing the
 * text, running the model), how far it has come and since when. This
 * thread keeps the terminal: it draws the frame (view_loading.h) every
 * POLL_MS and after a resize or a stop and fg, reads the keys (q stops the
 * load; none is echoed or left for the shell), and watches the signals
 * tui_signals.c turns into flags. The load's thread blocks every signal
 * that is not its own fault, so each one comes here (and the model's
 * helper threads, which it starts, inherit that).
 */
#include "tui.h"

#include "tui_draw.h"
#include "tui_impl.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <time.h>

#include "h2o/keys.h"
#include "h2o/view_loading.h"

/* How often the frame is redrawn (the time and the bar move) and the
 * flags looked at. */
#define POLL_MS 100

/* The load's thread and what it shares with this one. */
struct loading {
	tui_load_fn load;
	void *ctx;
	int status;
	atomic_bool stop, finished;
	/* Its progress, in millionths of the load (-1 before it is first
	 * told: a scene without a model never is). */
	atomic_int done;
};

static int told(void *ctx, double done, double total)
{
	struct loading *l = ctx;
	const double frac = total > 0 ? done / total : 0;
	atomic_store(&l->done, (int)(1e6 * (frac < 0 ? 0 : frac > 1 ? 1 : frac)));
	return atomic_load(&l->stop);
}

static void *run(void *arg)
{
	struct loading *l = arg;
	l->status = l->load(l->ctx, told, l);
	atomic_store(&l->finished, true);
	return NULL;
}

static double seconds_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Start the load's thread with every signal blocked but the faults its own
 * code may raise (which a blocked signal would not stop from killing, and
 * which the restoring handler must see). */
static bool start_thread(pthread_t *thread, struct loading *l)
{
	sigset_t all, old;
	sigfillset(&all);
	static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
	for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
		sigdelset(&all, faults[i]);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	const bool ok = pthread_create(thread, NULL, run, l) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ok;
}

int tui_load(tui_load_fn load, void *ctx, const char *file)
{
	struct tui *t = &tui_screen;
	struct loading l = {.load = load, .ctx = ctx};
	atomic_init(&l.stop, false);
	atomic_init(&l.finished, false);
	atomic_init(&l.done, -1);
	struct view_loading v = {.file = file, .fraction = -1};
	const double began = seconds_now();
	pthread_t thread;

	/* The first frame before anything else. */
	if (tui_draw_loading(t, &v) < 0) {
		fputs("h2o-tui: out of memory while drawing the screen\n", stderr);
		return 4;
	}
	if (!start_thread(&thread, &l)) {
		run(&l); /* no thread: load here, as every other mode does */
		return l.status;
	}
	bool quit = false, gone = false, oom = false, joined = false;
	while (!atomic_load(&l.finished)) {
		uint32_t key = KEYC_NONE;
		struct key_mouse m;

		tui_hold_drain();
		if (tui_signal || quit || gone || oom) {
			/* Stopped between two positions of the model: wait for
			 * that, keeping the terminal (and its keys) meanwhile. */
			atomic_store(&l.stop, true);
			pthread_join(thread, NULL);
			joined = true;
			break;
		}
		if (tui_continued) {
			tui_continued = 0;
			tui_resume();
		}
		const int done = atomic_load(&l.done);
		v.fraction = done < 0 ? -1 : done / 1e6;
		v.phase = view_load_phase_of(v.fraction);
		v.elapsed = seconds_now() - began;
		if (tui_draw_loading(t, &v) < 0) {
			oom = true;
			continue;
		}
		const enum tui_wait w = tui_wait_key(t, POLL_MS, &key, &m);
		if (w == TUI_GONE)
			gone = true;
		else if (w == TUI_KEY && key == 'q')
			quit = true;
		/* Any other key or click is dropped; a resize is drawn next. */
	}
	if (!joined)
		pthread_join(thread, NULL);
	tui_hold_drain();
	if (tui_signal)
		return 128 + tui_signal;
	if (gone)
		return 128 + SIGHUP; /* as if it had hung up */
	if (oom) {
		fputs("h2o-tui: out of memory while drawing the screen\n", stderr);
		return 4;
	}
	/* q: the user asked to quit (a load stopped says so: 0); a load that
	 * failed all the same says why. */
	return quit && l.status < 0 ? 0 : l.status;
}
