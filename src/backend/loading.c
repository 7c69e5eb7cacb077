/*
 * loading: a scene loaded on a thread while the terminal waits (loading.h).
 */
#include "loading.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "h2o/cost.h"
#include "h2o/scene.h"
#include "progress.h"

/* The signal that asked to stop the load, or 0: set by the handler only
 * (a handler can reach nothing else), read by the waiting loop. */
static volatile sig_atomic_t loading_signal;

static void on_signal(int sig)
{
	loading_signal = sig;
}

/* The signals that end a waiting user's load. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define STOP_SIGNALS (int)(sizeof stop_signals / sizeof stop_signals[0])

/* The load's thread and what it shares with the waiting one. */
struct loading {
	loading_fn load;
	void *ctx;
	int status;
	atomic_bool stop, finished;
	/* Its progress, in thousandths of the load (-1 before it is first
	 * told: a scene without a model never is). */
	atomic_int per_mille;
};

/* The progress line's words: the load's WHAT, or, once a model scene's
 * load tells its progress, the phase it is in (scene.h). */
static const char *phase_words(int per_mille, const char *what)
{
	if (per_mille < 0)
		return what;
	return per_mille < (int)(1000 * SCENE_TOLD_ENCODE)
	               ? "loading the scene: tokenizing the text (q quits)"
	               : "loading the scene: running the model (q quits)";
}

static int told(void *ctx, double done, double total)
{
	struct loading *l = ctx;
	atomic_store(&l->per_mille, total > 0 ? (int)(1000 * done / total) : 0);
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

/* The keys typed so far, read (so never echoed, nor left for the shell):
 * whether one of them was q. */
static bool read_keys(void)
{
	struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
	bool quit = false;
	while (poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN)) {
		char buf[64];
		const ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
		if (n <= 0)
			break;
		quit = quit || memchr(buf, 'q', (size_t)n) != NULL;
	}
	return quit;
}

int loading_run(loading_fn load, void *ctx, const char *what)
{
	struct termios shell, quiet;
	const bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &shell) == 0;
	if (tty) {
		/* No echo, no lines: each key is read as it comes. ISIG stays,
		 * so Ctrl-C is SIGINT. */
		quiet = shell;
		quiet.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		quiet.c_cc[VMIN] = 0;
		quiet.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
	}
	struct sigaction old[STOP_SIGNALS], sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	loading_signal = 0;
	for (int i = 0; i < STOP_SIGNALS; i++)
		sigaction(stop_signals[i], &sa, &old[i]);

	struct loading l = {.load = load, .ctx = ctx};
	atomic_init(&l.stop, false);
	atomic_init(&l.finished, false);
	atomic_init(&l.per_mille, -1);
	pthread_t thread;
	const bool threaded = pthread_create(&thread, NULL, run, &l) == 0;
	if (!threaded)
		run(&l); /* no thread: load here, as every other mode does */
	struct meter meter;
	const struct progress *pr = progress_start(&meter, false, what);
	const double began = seconds_now();
	bool quit = false;
	while (threaded && !atomic_load(&l.finished)) {
		struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
		poll(&pfd, tty ? 1 : 0, 100);
		if (tty && read_keys())
			quit = true;
		if (quit || loading_signal)
			atomic_store(&l.stop, true);
		/* A load that ends at once shows no line. */
		const int per_mille = atomic_load(&l.per_mille);
		meter.what = phase_words(per_mille, what);
		if (seconds_now() - began >= 0.3)
			progress_tell(pr, per_mille < 0 ? 0 : per_mille, 1000);
	}
	if (threaded)
		pthread_join(thread, NULL);
	progress_done(&meter);
	if (tty) {
		/* What was typed and not read yet is the program's, not the
		 * shell's. */
		read_keys();
		tcflush(STDIN_FILENO, TCIFLUSH);
		tcsetattr(STDIN_FILENO, TCSANOW, &shell);
	}
	for (int i = 0; i < STOP_SIGNALS; i++)
		sigaction(stop_signals[i], &old[i], NULL);
	if (loading_signal) {
		/* The terminal is back: end of the signal, as it asked. */
		signal(loading_signal, SIG_DFL);
		raise(loading_signal);
	}
	/* q: the user asked to quit (a load stopped says so: 0); a load that
	 * failed all the same says why. */
	return quit && l.status < 0 ? 0 : l.status;
}
