/*
 * h2o-bench: how fast the engine, the timeline and the screen are on long
 * scenes (README, "Benchmark"). A benchmark, not a test: it prints figures
 * and asserts nothing.
 *
 * Scenes are generated in memory by the project's seeded generator (the
 * same numbers on every run): noise, local attention and four attention
 * sinks, so that H2O keeps the sinks and churns the rest as it does on real
 * traces. Each case (n tokens, dim, budget) runs in a child
 * process, so that its peak resident memory is its own. Every figure is
 * the median of repeated runs, with the smallest and largest in brackets.
 *
 * When Debian's PyTorch is installed, the straightforward PyTorch loop of
 * ../shared/bench/peer_lesson_torch.py runs on the very same scenes (written
 * to a temporary JSON file) and the ratios are printed beside ours.
 *
 * Usage: h2o-bench [--quick | --target | --report] [--no-peer] [--peer PATH]
 *   --quick    only the cases up to 10,000 tokens, the target and the designs
 *   --target   only the target case beside the PyTorch loop, and its report
 *   --report   only the target case's report, every policy beside
 *              --policies h2o,full (and both against the PyTorch loop's
 *              H2O + full cache)
 *   --no-peer  do not run the PyTorch loop
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "h2o/app.h"
#include "h2o/engine.h"
#include "h2o/frame.h"
#include "h2o/report.h"
#include "h2o/scene.h"
#include "h2o/timeline.h"
#include "h2o/view.h"
/* Snapshot intervals, to compare the timeline's designs; the vector width
 * and exp the engine uses, to say so. */
#include "../src/engine/engine_exp.h"
#include "../src/engine/engine_kernel.h"
#include "../src/timeline/timeline_impl.h"

#define MAX_SAMPLES 512

/* ---- measuring ---------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct samples {
	int n;
	double x[MAX_SAMPLES];
};

static void add(struct samples *s, double x)
{
	if (s->n < MAX_SAMPLES)
		s->x[s->n++] = x;
}

static int by_value(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(struct samples *s)
{
	qsort(s->x, (size_t)s->n, sizeof *s->x, by_value);
	if (s->n == 0)
		return NAN;
	return s->n % 2 ? s->x[s->n / 2] : (s->x[s->n / 2 - 1] + s->x[s->n / 2]) / 2;
}

/* "median [min-max]" of S scaled by SCALE, with DIGITS decimals; a single
 * run says so. */
static const char *fig(struct samples *s, double scale, int digits, char *buf, size_t size)
{
	const double m = median(s) * scale;
	if (s->n == 1)
		snprintf(buf, size, "%.*f (1 run)", digits, m);
	else
		snprintf(buf, size, "%.*f [%.*f-%.*f]", digits, m, digits, s->x[0] * scale, digits,
		         s->x[s->n - 1] * scale);
	return buf;
}

/* Rates: steps per second from samples of seconds, median [min-max]. */
static const char *rate(struct samples *s, int steps, char *buf, size_t size)
{
	const double m = median(s);
	const double lo = steps / s->x[s->n - 1], hi = steps / s->x[0], mid = steps / m;
	const char *unit = mid >= 1e6 ? "M" : "k";
	const double u = mid >= 1e6 ? 1e6 : 1e3;
	if (s->n == 1)
		snprintf(buf, size, "%.1f%s (1 run)", mid / u, unit);
	else
		snprintf(buf, size, "%.1f%s [%.1f-%.1f]", mid / u, unit, lo / u, hi / u);
	return buf;
}

static double peak_rss_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

/* ---- scenes ------------------------------------------------------------- */

static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* A vector scene of N tokens from the project's seeded generator
 * (docs/scene-format.md, "Generated scenes"): noise, local attention and
 * four attention sinks, so that H2O keeps the sinks and churns the rest as
 * it does on real traces. Freed with scene_free. */
static struct scene *make_scene(int n, int dim, int heavy, int recent)
{
	char json[512], err[SCENE_ERROR_MAX];
	const int len = snprintf(json, sizeof json,
	                         "{\"title\": \"bench\", \"heavy\": %d, \"recent\": %d, "
	                         "\"dim\": %d, \"generate\": {\"count\": %d, \"seed\": 1, "
	                         "\"sinks\": {\"count\": 4, \"strength\": 3}, "
	                         "\"locality\": {\"strength\": 2, \"width\": 8}}}",
	                         heavy, recent, dim, n);
	struct scene *sc;
	if (scene_load_text("bench", json, (size_t)len, &sc, err) != 0) {
		fprintf(stderr, "h2o-bench: %s\n", err);
		return NULL;
	}
	return sc;
}

static struct budget budget_of(const struct scene *sc)
{
	return (struct budget){sc->heavy, sc->recent, policy_default_sinks(sc->heavy + sc->recent),
	                       0,         sc->prompt, {{{0}}}};
}

/* ---- the engine alone --------------------------------------------------- */

/* Seconds to step an engine of POLICIES through the whole scene. */
static double run_engine(const struct scene *sc, unsigned policies)
{
	const struct budget b = budget_of(sc);
	struct engine *e = engine_new_only(sc, &b, policies);
	if (!e)
		return NAN;
	struct step_record rec;
	const double t0 = now();
	while (engine_step(e, &rec))
		;
	const double dt = now() - t0;
	engine_free(e);
	return dt;
}

/* ---- one case ----------------------------------------------------------- */

struct rng {
	uint64_t s;
};

static int rnd(struct rng *r, int bound)
{
	r->s = splitmix(r->s);
	return (int)(r->s % (uint64_t)bound);
}

static void measure_seeks(struct timeline *tl, struct samples *back, struct samples *jump,
                          struct samples *full_jump, int full_jumps)
{
	const int n = timeline_steps(tl);
	struct rng r = {42};
	/* One step back at a time from the end. */
	timeline_seek_lite(tl, n, NULL);
	for (int i = 1; i <= 200 && i <= n; i++) {
		const double t0 = now();
		timeline_seek_lite(tl, n - i, NULL);
		add(back, now() - t0);
	}
	/* From somewhere in the first half to somewhere in the last tenth. */
	for (int i = 0; i < 100; i++) {
		timeline_seek_lite(tl, rnd(&r, n / 2 + 1), NULL);
		const int t = n - rnd(&r, n / 10 + 1);
		const double t0 = now();
		timeline_seek_lite(tl, t, NULL);
		add(jump, now() - t0);
	}
	/* The same with the full cache's whole state (timeline_seek). */
	for (int i = 0; i < full_jumps; i++) {
		timeline_seek(tl, rnd(&r, n / 2 + 1), NULL);
		const int t = n - rnd(&r, n / 10 + 1);
		const double t0 = now();
		timeline_seek(tl, t, NULL);
		add(full_jump, now() - t0);
	}
}

static void measure_render(struct app *app, int cols, int rows, struct samples *s)
{
	struct frame *f = frame_new(cols, rows, false);
	if (!f)
		return;
	app_goto(app, timeline_steps(app->tl)); /* the seek, once */
	for (int i = 0; i < 15; i++) {
		const double t0 = now();
		view_draw(app, f);
		add(s, now() - t0);
	}
	frame_free(f);
}

static void print_head(void)
{
	printf("%7s %4s %9s | %-22s | %-22s | %-18s | %-20s | %-20s | %-20s | %-20s | %-20s | "
	       "%8s | %s\n",
	       "n", "dim", "budget", "H2O steps/s", "full-cache steps/s", "timeline build s",
	       "step back ms", "jump near end ms", "jump (full cache) ms", "frame 120x36 ms",
	       "frame 300x80 ms", "peak MB", "timeline MB / scene MB");
}

static void run_case(int n, int dim, int heavy, int recent)
{
	struct scene *sc = make_scene(n, dim, heavy, recent);
	if (!sc) {
		printf("%7d %4d %4d+%-4d | out of memory\n", n, dim, heavy, recent);
		return;
	}
	const int reps = n <= 1000 ? 7 : n <= 10000 ? 5 : 3;
	const int heavy_reps = n <= 10000 ? 3 : 1;
	struct samples h2o = {0}, full = {0}, build = {0}, back = {0}, jump = {0}, fjump = {0},
	               small = {0}, large = {0};
	for (int i = 0; i < reps; i++)
		add(&h2o, run_engine(sc, ENGINE_POLICY(POLICY_H2O)));
	for (int i = 0; i < heavy_reps; i++)
		add(&full, run_engine(sc, ENGINE_POLICY(POLICY_FULL)));
	double tl_mb = NAN;
	for (int i = 0; i < heavy_reps; i++) {
		struct app app;
		const double t0 = now();
		if (app_init(&app, sc, heavy, recent, -1, POLICY_FULL) < 0) {
			app_done(&app);
			break;
		}
		add(&build, now() - t0);
		if (i == heavy_reps - 1) {
			tl_mb = (double)timeline_memory(app.tl) / 1048576.0;
			measure_render(&app, 120, 36, &small);
			measure_render(&app, 300, 80, &large);
			measure_seeks(app.tl, &back, &jump, &fjump, n <= 10000 ? 20 : 3);
		}
		app_done(&app);
	}
	const double scene_mb = 3.0 * n * dim * sizeof(double) / 1048576.0;
	char b[11][64];
	printf("%7d %4d %4d+%-4d | %-22s | %-22s | %-18s | %-20s | %-20s | %-20s | %-20s | %-20s | "
	       "%8.0f | %.0f / %.0f = %.2f\n",
	       n, dim, heavy, recent, rate(&h2o, n, b[0], 64), rate(&full, n, b[1], 64),
	       fig(&build, 1, 2, b[2], 64), fig(&back, 1e3, 3, b[3], 64),
	       fig(&jump, 1e3, 3, b[4], 64), fig(&fjump, 1e3, 1, b[5], 64),
	       fig(&small, 1e3, 2, b[6], 64), fig(&large, 1e3, 2, b[7], 64), peak_rss_mb(), tl_mb,
	       scene_mb, tl_mb / scene_mb);
	fflush(stdout);
	scene_free(sc);
}

/* ---- the PyTorch peer --------------------------------------------------- */

static bool torch_available(void)
{
	return system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
}

/* The scene as the JSON file the peer reads (and h2o-tui would). */
static bool write_json(const struct scene *sc, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	fprintf(f,
	        "{\"title\": \"bench\", \"heavy\": %d, \"recent\": %d, \"dim\": %d, \"tokens\": [",
	        sc->heavy, sc->recent, sc->dim);
	const double *rows[3] = {sc->q, sc->k, sc->v};
	const char *names[3] = {"q", "k", "v"};
	for (int i = 0; i < sc->n; i++) {
		fprintf(f, "%s\n{\"text\": \"%s\"", i ? "," : "", sc->text[i]);
		for (int r = 0; r < 3; r++) {
			fprintf(f, ", \"%s\": [", names[r]);
			for (int c = 0; c < sc->dim; c++)
				fprintf(f, "%s%.17g", c ? ", " : "",
				        rows[r][(size_t)i * (size_t)sc->dim + (size_t)c]);
			fputc(']', f);
		}
		fputc('}', f);
	}
	fputs("]}\n", f);
	return fclose(f) == 0;
}

/* Seconds the peer's stepping loop took, or NAN. */
static double run_peer(const char *peer, const char *json, bool h2o_only)
{
	char cmd[4096];
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s'%s 2>&1", peer, json,
	         h2o_only ? " --h2o-only" : "");
	FILE *p = popen(cmd, "r");
	if (!p)
		return NAN;
	char line[4096];
	double seconds = NAN;
	while (fgets(line, sizeof line, p)) {
		const char *s = strstr(line, "seconds ");
		if (s)
			seconds = strtod(s + 8, NULL);
	}
	pclose(p);
	return seconds;
}

/* Ours beside the peer's on one scene: H2O alone, and the whole timeline
 * (every policy, figures and snapshots) against its H2O + full cache. */
static void run_peer_case(int n, int dim, int heavy, int recent, const char *peer, bool torch)
{
	struct scene *sc = make_scene(n, dim, heavy, recent);
	if (!sc)
		return;
	/* A run of H2O alone takes a few hundredths of a second: many of
	 * them, so that the median is not one the machine disturbed. */
	struct samples h2o = {0}, tl = {0};
	for (int i = 0; i < 9; i++)
		add(&h2o, run_engine(sc, ENGINE_POLICY(POLICY_H2O)));
	const struct budget b = budget_of(sc);
	for (int i = 0; i < 3; i++) {
		const double t0 = now();
		struct timeline *t = timeline_new(sc, &b, NULL);
		add(&tl, now() - t0);
		timeline_free(t);
	}
	char b0[64], b1[64];
	const double h2o_s = median(&h2o), tl_s = median(&tl);
	printf("%7d %4d %4d+%-4d | H2O alone %s steps/s, %.3f s | whole timeline %s s", n, dim,
	       heavy, recent, rate(&h2o, n, b0, sizeof b0), h2o_s, fig(&tl, 1, 3, b1, sizeof b1));
	if (!torch) {
		printf(" | PyTorch loop: not run\n");
		scene_free(sc);
		return;
	}
	char path[] = "/tmp/h2o-bench-XXXXXX";
	const int fd = mkstemp(path);
	if (fd < 0 || !write_json(sc, path)) {
		printf(" | PyTorch loop: cannot write %s\n", path);
		if (fd >= 0)
			close(fd), unlink(path);
		scene_free(sc);
		return;
	}
	close(fd);
	const double th = run_peer(peer, path, true), tf = run_peer(peer, path, false);
	unlink(path);
	printf(" | PyTorch H2O alone %.3f s (%.1fx ours), H2O + full %.3f s (%.1fx ours)\n", th,
	       th / h2o_s, tf, tf / tl_s);
	fflush(stdout);
	scene_free(sc);
}

/* ---- the report with fewer policies --------------------------------------- */

/* The CPU seconds this process has used, on every thread. */
static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds report_measure_only takes over SC for the policies of SHOWN
 * (what h2o-tui --report --policies does before it prints), or NAN; and in
 * *CPU the CPU seconds it used (every thread's: on a loaded machine, the
 * work done, which waiting for a core does not inflate). */
static double run_report(const struct scene *sc, unsigned shown, double *cpu)
{
	const struct budget b = budget_of(sc);
	const struct report_target target = REPORT_DEFAULT_TARGET;
	struct report_run run;
	const double t0 = now(), c0 = cpu_now();
	if (report_measure_only(sc, &b, &target, 0, shown, &run, NULL, 0, sc->n) < 0)
		return NAN;
	const double dt = now() - t0;
	*cpu = cpu_now() - c0;
	report_run_done(&run);
	return dt;
}

/* The PyTorch loop's H2O + full cache on SC, in seconds, or NAN. */
static double peer_full_loop(const struct scene *sc, const char *peer)
{
	char path[] = "/tmp/h2o-bench-XXXXXX";
	const int fd = mkstemp(path);
	if (fd < 0)
		return NAN;
	close(fd);
	const double t = write_json(sc, path) ? run_peer(peer, path, false) : NAN;
	unlink(path);
	return t;
}

/* --report with every policy beside --report --policies h2o,full, on the
 * same scene, alternating so that a busy machine slows both alike; with
 * TORCH, then the PyTorch loop's H2O + full cache on it, in the same run. */
static void run_report_case(int n, int dim, int heavy, int recent, const char *peer, bool torch)
{
	struct scene *sc = make_scene(n, dim, heavy, recent);
	if (!sc)
		return;
	struct samples all = {0}, two = {0}, all_cpu = {0}, two_cpu = {0};
	const unsigned h2o_full = ENGINE_POLICY(POLICY_H2O) | ENGINE_POLICY(POLICY_FULL);
	for (int i = 0; i < 3; i++) {
		double cpu = NAN;
		add(&all, run_report(sc, ENGINE_ALL_POLICIES, &cpu));
		add(&all_cpu, cpu);
		add(&two, run_report(sc, h2o_full, &cpu));
		add(&two_cpu, cpu);
	}
	char b0[64], b1[64], b2[64], b3[64];
	printf("%7d %4d %4d+%-4d | --report, every policy %s s (CPU %s s) | --policies h2o,full "
	       "%s s (CPU %s s) | every policy takes %.2fx the time of h2o,full (%.2fx the "
	       "CPU)\n",
	       n, dim, heavy, recent, fig(&all, 1, 3, b0, sizeof b0),
	       fig(&all_cpu, 1, 3, b2, sizeof b2), fig(&two, 1, 3, b1, sizeof b1),
	       fig(&two_cpu, 1, 3, b3, sizeof b3), median(&all) / median(&two),
	       median(&all_cpu) / median(&two_cpu));
	if (torch) {
		const double tf = peer_full_loop(sc, peer);
		printf("%7s %4s %9s | the PyTorch loop's H2O + full %.3f s: --policies h2o,full "
		       "%.1fx faster, every policy %.1fx faster\n",
		       "", "", "", tf, tf / median(&two), tf / median(&all));
	}
	fflush(stdout);
	scene_free(sc);
}

/* ---- timeline designs --------------------------------------------------- */

/* Seeking with snapshots every EVERY steps (0: the timeline's own choice).
 * A snapshot at every step is what exact per-step deltas cost: a step's
 * undo needs the scores every cache held before it (a score minus a weight
 * is not the score before it in floating point), so its memory is theirs,
 * and its seek a restore and one step. */
static void run_design(const struct scene *sc, int every)
{
	const struct budget b = budget_of(sc);
	const double t0 = now();
	struct timeline *tl = timeline_new_every(sc, &b, every, 0);
	const double build = now() - t0;
	if (!tl) {
		printf("  every %d: out of memory\n", every);
		return;
	}
	int e, fe;
	timeline_intervals(tl, &e, &fe);
	struct samples back = {0}, jump = {0}, fjump = {0};
	measure_seeks(tl, &back, &jump, &fjump, 0);
	const double mb = (double)timeline_memory(tl) / 1048576.0;
	const double scene_mb = 3.0 * sc->n * sc->dim * sizeof(double) / 1048576.0;
	char b0[64], b1[64];
	printf("  %-34s every %5d | %7.0f MB = %5.2f x scene | build %5.2f s | step back %-20s | "
	       "jump %s ms\n",
	       every == 1   ? "per-step states (exact deltas)"
	       : every == 0 ? "snapshots, interval chosen"
	                    : "snapshots, interval forced",
	       e, mb, mb / scene_mb, build, fig(&back, 1e3, 3, b0, sizeof b0),
	       fig(&jump, 1e3, 3, b1, sizeof b1));
	fflush(stdout);
	timeline_free(tl);
}

static void run_designs(int n, int dim, int heavy, int recent, const int *every, int count)
{
	struct scene *sc = make_scene(n, dim, heavy, recent);
	if (!sc)
		return;
	for (int i = 0; i < count; i++)
		run_design(sc, every[i]);
	scene_free(sc);
}

/* ---- main --------------------------------------------------------------- */

/* Run FN(ARGS) in a child process: its own peak memory, and a crash or an
 * out-of-memory kill ends one case, not the benchmark. */
#define IN_CHILD(call)                               \
	do {                                         \
		fflush(stdout);                      \
		const pid_t pid_ = fork();           \
		if (pid_ == 0) {                     \
			call;                        \
			fflush(stdout);              \
			_exit(0);                    \
		}                                    \
		int status_ = 0;                     \
		if (pid_ > 0)                        \
			waitpid(pid_, &status_, 0);  \
		if (pid_ < 0 || status_ != 0)        \
			printf("  (case failed)\n"); \
	} while (0)

int main(int argc, char **argv)
{
	bool quick = false, target = false, report = false, peer_on = true;
	const char *peer = "../shared/bench/peer_lesson_torch.py";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			quick = true;
		else if (strcmp(argv[i], "--target") == 0)
			target = true;
		else if (strcmp(argv[i], "--report") == 0)
			report = true;
		else if (strcmp(argv[i], "--no-peer") == 0)
			peer_on = false;
		else if (strcmp(argv[i], "--peer") == 0 && i + 1 < argc)
			peer = argv[++i];
		else {
			fprintf(stderr,
			        "usage: h2o-bench [--quick | --target | --report] [--no-peer] "
			        "[--peer PATH]\n");
			return 2;
		}
	}
	double load[3] = {0};
	getloadavg(load, 3);
	printf("h2o-bench: %ld cores, load average %.2f at start, kernels %s, exp %s. Figures: "
	       "median [min-max] of repeated runs.\n",
	       sysconf(_SC_NPROCESSORS_ONLN), load[0], kernel_isa(), engine_exp_impl());
	printf("Scenes: generated vector scenes, budgets heavy+recent. H2O: an engine running H2O "
	       "alone. Full cache: an engine running the full cache alone.\n"
	       "Timeline build: the app's timeline over the whole scene (every policy, figures, "
	       "snapshots). Seeks: timeline_seek_lite (what a screen needs);\n"
	       "'jump (full cache)': timeline_seek, which also rebuilds the full cache's scores "
	       "at that step. Frames: view_draw at the last step, seek done.\n\n");
	const bool have_peer = peer_on && access(peer, R_OK) == 0;
	const bool torch = have_peer && torch_available();
	if (report) {
		printf("The report (h2o-tui --report) of the target scene, every policy against "
		       "--policies h2o,full:\n");
		IN_CHILD(run_report_case(20000, 64, 128, 128, peer, torch));
		return 0;
	}
	print_head();
	const int ns[] = {1000, 10000, 100000}, dims[] = {64, 128}, budgets[] = {64, 512};
	for (size_t a = 0; a < 3 && !target; a++) {
		if (quick && ns[a] > 10000)
			continue;
		for (size_t d = 0; d < 2; d++)
			for (size_t b = 0; b < 2; b++)
				IN_CHILD(run_case(ns[a], dims[d], budgets[b], budgets[b]));
	}
	if (quick)
		printf("(--quick: the 100,000-token cases were not run)\n");

	printf("\nAgainst the PyTorch loop (%s):\n", peer);
	if (!peer_on)
		printf("  not run (--no-peer)\n");
	else if (!have_peer)
		printf("  not run: %s not found\n", peer);
	else if (!torch)
		printf("  not run: /usr/bin/python3 cannot import torch (apt-get install "
		       "python3-torch)\n");
	if (!target) {
		IN_CHILD(run_peer_case(1000, 64, 64, 64, peer, torch));
		IN_CHILD(run_peer_case(10000, 64, 64, 64, peer, torch));
	}
	printf("Target: n = 20,000, dim 64, heavy 128 + recent 128: H2O alone >= 400k steps/s; "
	       "whole timeline >= 10x faster than the PyTorch H2O + full loop.\n");
	IN_CHILD(run_peer_case(20000, 64, 128, 128, peer, torch));
	printf("\nThe report (h2o-tui --report) of the target scene, every policy against "
	       "--policies h2o,full:\n");
	IN_CHILD(run_report_case(20000, 64, 128, 128, peer, torch));
	if (target)
		return 0;

	printf("\nTimeline designs: seeking with snapshots of the caches that evict every K "
	       "steps, and K = 1 (what exact per-step deltas hold):\n");
	printf(" n = 20,000, dim 64, heavy 128 + recent 128:\n");
	const int designs[] = {1, 4, 0, 256};
	IN_CHILD(run_designs(20000, 64, 128, 128, designs, 4));
	printf(" At 100,000 tokens K = 1 holds 4 caches x (B + 1) x 12 bytes per step: %.1f GB "
	       "for 64+64, %.1f GB for 512+512,\n against a budget of 2 x the scene: 0.31 GB "
	       "(dim 64), 0.61 GB (dim 128). The table above uses the chosen K.\n",
	       100000.0 * 4 * 129 * 12 / 1e9, 100000.0 * 4 * 1025 * 12 / 1e9);
	return 0;
}
