/*
 * trace-bench: a whole model's trace (layers x heads x tokens x dim), timed
 * beside the limit the machine's arithmetic sets (README, "Benchmark").
 * A benchmark, not a test: it prints figures and asserts nothing.
 *
 * The trace is random (a seeded LCG), L x H query heads over G key/value
 * heads, in memory. It times --report's run over the whole model (every
 * policy, every layer and head: report_measure), and, beside it in the same
 * run, --report --policies h2o,window,streaming,tova,full (each in a child
 * process, so that each peak memory is its own). It measures the machine's
 * double-precision multiply-add rate on every core twice, with vectors of
 * the width the engine uses: as the engine computes (a multiply and an add,
 * no fused multiply-add) and with fused multiply-adds (one instruction;
 * design §10.3 says how the engine would use them bit for bit). It works
 * out the arithmetic a run cannot do without: the full cache's n^2 * dim
 * multiply-adds per query head (n^2/2 logits and n^2/2 output terms), and
 * for each policy that evicts 2 * dim per position it holds per step per
 * query head (a policy that keeps every token after the prompt holds as
 * many as the full cache, but computes nothing of its own where it holds
 * what the full cache holds: shared steps, engine_replay.h), plus TOVA's
 * layer plan (dim per position per step per query head), and the rules
 * that read every held key at every step: KeyDiff (2 dim per key) and
 * Expected Attention (per query head, dim + 128 per key: the new query's
 * projection, the mean and variance of 64). Its time at each measured
 * rate is a limit.
 *
 * With --open SCENE.json (a trace of .npy files, as bench/trace/make_trace.py
 * writes one), it times instead what opening it on the screen takes: the
 * load, the app set up with its timelines building in the background, and
 * the first frame drawn.
 *
 * Usage: trace-bench [--layers L] [--heads H] [--kv G] [--tokens N]
 *                    [--dim D] [--heavy B1] [--recent B2] [--set S]
 * (--set 1: every policy only, 2: the five only; 0, the default: both)
 *        trace-bench --open SCENE.json
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <immintrin.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "h2o/app.h"
#include "h2o/frame.h"
#include "h2o/heads.h"
#include "h2o/report.h"
#include "h2o/scene.h"
#include "h2o/view.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the machine's rate ------------------------------------------------- */

#define RATE_CHAINS 16
#define RATE_ITERS  20000000L

typedef double v8 __attribute__((vector_size(64)));
typedef double v4 __attribute__((vector_size(32)));

/* Multiply-adds in RATE_CHAINS independent chains of vectors of the widest
 * width the engine's kernels use here (separate multiply and add: the
 * build forbids fused ones), enough chains to hide their latency. */
#define RATE_BODY(V, LANES, MADD)                               \
	V acc[RATE_CHAINS], x[RATE_CHAINS], c;                  \
	for (int l = 0; l < LANES; l++)                         \
		c[l] = 0.999999999;                             \
	for (int i = 0; i < RATE_CHAINS; i++)                   \
		for (int l = 0; l < LANES; l++) {               \
			acc[i][l] = 0.0;                        \
			x[i][l] = 1.0 + 1e-9 * (i * LANES + l); \
		}                                               \
	for (long it = 0; it < RATE_ITERS; it++)                \
		for (int i = 0; i < RATE_CHAINS; i++)           \
			acc[i] = MADD(acc[i], c, x[i]);         \
	double s = 0.0;                                         \
	for (int i = 0; i < RATE_CHAINS; i++)                   \
		for (int l = 0; l < LANES; l++)                 \
			s += acc[i][l];                         \
	return s * 0.0 + (double)RATE_ITERS * RATE_CHAINS * LANES

/* a * b + c: two roundings (the build passes -ffp-contract=off), or one. */
#define MUL_ADD(a, b, c) ((a) * (b) + (c))
#define FMA512(a, b, c)  ((v8)_mm512_fmadd_pd((__m512d)(a), (__m512d)(b), (__m512d)(c)))
#define FMA256(a, b, c)  ((v4)_mm256_fmadd_pd((__m256d)(a), (__m256d)(b), (__m256d)(c)))

__attribute__((target("avx512f"))) static double rate_avx512(void)
{
	RATE_BODY(v8, 8, MUL_ADD);
}

__attribute__((target("avx2"))) static double rate_avx2(void)
{
	RATE_BODY(v4, 4, MUL_ADD);
}

__attribute__((target("avx512f"))) static double rate_avx512_fma(void)
{
	RATE_BODY(v8, 8, FMA512);
}

__attribute__((target("avx2,fma"))) static double rate_avx2_fma(void)
{
	RATE_BODY(v4, 4, FMA256);
}

struct rate_job {
	bool fused;
	double done;
};

static void *rate_part(void *arg)
{
	struct rate_job *job = arg;
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		job->done = job->fused ? rate_avx512_fma() : rate_avx512();
	else if (job->fused && __builtin_cpu_supports("fma"))
		job->done = rate_avx2_fma();
	else
		job->done = rate_avx2();
	return NULL;
}

/* Multiply-adds per second on CORES threads at once, over the wall
 * clock (a loaded machine gives less); FUSED: fused ones. */
static double machine_rate(int cores, bool fused)
{
	pthread_t th[64];
	struct rate_job done[64];
	cores = cores < 64 ? cores : 64;
	const double t0 = now();
	for (int c = 0; c < cores; c++) {
		done[c].fused = fused;
		pthread_create(&th[c], NULL, rate_part, &done[c]);
	}
	for (int c = 0; c < cores; c++)
		pthread_join(th[c], NULL);
	const double dt = now() - t0;
	double total = 0.0;
	for (int c = 0; c < cores; c++)
		total += done[c].done;
	return total / dt;
}

/* ---- the trace ---------------------------------------------------------- */

static double *random_doubles(size_t count, unsigned long long seed)
{
	double *x = malloc(count * sizeof *x);
	unsigned long long s = seed;
	for (size_t i = 0; x && i < count; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		x[i] = (double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
	}
	return x;
}

static char *dup_text(const char *s)
{
	char *d = malloc(strlen(s) + 1);
	if (d)
		strcpy(d, s);
	return d;
}

static struct scene *make_trace(int layers, int heads, int kv, int n, int dim, int heavy,
                                int recent)
{
	struct scene *sc = calloc(1, sizeof *sc);
	sc->title = dup_text("trace");
	sc->description = dup_text("");
	sc->watch = dup_text("");
	sc->layers = layers;
	sc->heads = heads;
	sc->kv_heads = kv;
	sc->n = n;
	sc->dim = dim;
	sc->heavy = heavy;
	sc->recent = recent;
	sc->mode = SCENE_VECTOR;
	sc->scale = 2.0 / sqrt((double)dim);
	sc->text = calloc((size_t)n, sizeof *sc->text);
	for (int i = 0; i < n; i++)
		sc->text[i] = dup_text("t");
	const size_t cells = (size_t)n * (size_t)dim;
	sc->q = random_doubles((size_t)layers * (size_t)heads * cells, 1);
	sc->k = random_doubles((size_t)layers * (size_t)kv * cells, 2);
	sc->v = random_doubles((size_t)layers * (size_t)kv * cells, 3);
	return sc;
}

/* Open PATH as the screen does and draw its first frame. */
static int open_scene(const char *path)
{
	char err[SCENE_ERROR_MAX];
	struct scene *sc;
	const double t0 = now();
	if (scene_load_file(path, &sc, err) < 0) {
		fprintf(stderr, "%s\n", err);
		return 3;
	}
	const double t1 = now();
	struct app app;
	if (app_init_background(&app, sc, sc->heavy, sc->recent, -1, POLICY_FULL) < 0) {
		fprintf(stderr, "trace-bench: out of memory\n");
		return 4;
	}
	struct frame *f = frame_new(120, 36, false);
	view_draw(&app, f);
	const double t2 = now();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("open %s: %d layers x %d heads (%d kv) x %d tokens x dim %d\n", path, sc->layers,
	       sc->heads, sc->kv_heads, sc->n, sc->dim);
	printf("load %.2f s, app and first frame %.2f s: %.2f s to the first frame; "
	       "peak memory %.0f MB\n",
	       t1 - t0, t2 - t1, t2 - t0, ru.ru_maxrss / 1024.0);
	frame_free(f);
	app_done(&app);
	scene_free(sc);
	return 0;
}

static double load_average(void)
{
	double l[1] = {0};
	return getloadavg(l, 1) == 1 ? l[0] : NAN;
}

/* The multiply-adds a report of the policies of MASK cannot do without
 * (see the header): the full cache's, and each policy that evicts its own,
 * but a policy that keeps every token after the prompt beside the full
 * cache (the trace has no prompt: it holds what the full cache holds, and
 * copies its weights) or, without the full cache, beside another such. */
static double arithmetic(int layers, int heads, int kv, int n, int dim, int heavy, int recent,
                         unsigned mask)
{
	const double qh = (double)layers * heads, B = heavy + recent;
	const double cap = B + 1 < n ? B + 1 : n;
	/* Per step a cache holds min(t, cap) positions: logits and output. */
	const double held = cap * (cap + 1) / 2 + (n - cap) * cap;
	const double held_all = (double)n * (n + 1) / 2;
	double madds = 0.0;
	bool whole = (mask & ENGINE_POLICY(POLICY_FULL)) != 0;
	if (whole)
		madds += qh * (double)n * n * dim;
	for (int p = 0; p < POLICY_COUNT; p++) {
		if (p == POLICY_FULL || !(mask & ENGINE_POLICY(p)))
			continue;
		if (policies[p]->grows) {
			if (!whole)
				madds += qh * 2.0 * held_all * dim;
			whole = true;
		} else {
			madds += qh * 2.0 * held * dim;
		}
	}
	/* TOVA's layer plan: the logits of every head once more. */
	if (mask & ENGINE_POLICY(POLICY_TOVA))
		madds += qh * held * dim;
	/* The rules that read the keys at every step once the cache is full
	 * (n - cap steps, cap entries), as they compute now (each keeps what
	 * does not change while a key is held, policy_memo): KeyDiff, per
	 * key/value head, each key's share of the mean direction and its dot
	 * with it, and the new key's norm and quotient; Expected Attention,
	 * per query head, the new query's projection on each entry after the 4
	 * sinks, the mean and variance of each entry's projections on the last
	 * 64 queries, and the new key's projections on them. */
	const double full_steps = n > cap ? n - cap : 0.0, scored = cap > 4 ? cap - 4 : 0.0;
	if (mask & ENGINE_POLICY(POLICY_KEYDIFF))
		madds += (double)layers * kv * full_steps * (cap + 1.0) * 2.0 * dim;
	if (mask & ENGINE_POLICY(POLICY_EXPECTED)) {
		const double queries = n < 64 ? n : 64;
		madds += qh * full_steps * (scored * (dim + 2.0 * queries) + queries * dim);
	}
	return madds;
}

/* The report of the policies of MASK over SC, timed against the limits. */
static void run_report(const struct scene *sc, unsigned mask, double limit, double flimit, int n,
                       int dim, int layers, int heads, int kv, int heavy, int recent)
{
	const struct budget b = {heavy, recent,     policy_default_sinks(heavy + recent),
	                         0,     sc->prompt, {{{0}}}};
	const struct report_target target = REPORT_DEFAULT_TARGET;
	struct report_run run;
	const double t0 = now();
	if (report_measure_only(sc, &b, &target, 0, mask, &run, NULL, 0, n) < 0) {
		fprintf(stderr, "trace-bench: out of memory\n");
		_exit(4);
	}
	const double t = now() - t0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	const double trace_mb =
	        (double)sizeof(double) * n * dim * layers * (heads + 2.0 * kv) / 1e6;
	printf("report: %.2f s = %.2f x the engine's limit, %.2f x the FMA limit; peak memory %.0f "
	       "MB = %.2f x the trace (%.0f MB)\n",
	       t, t / limit, t / flimit, ru.ru_maxrss / 1024.0, ru.ru_maxrss / 1024.0 / trace_mb,
	       trace_mb);
	printf("h2o mean recall %.4f, tova %.4f\n", run.sum[POLICY_H2O].recall_sum / n,
	       run.sum[POLICY_TOVA].recall_sum / n);
	report_run_done(&run);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--open") == 0)
		return open_scene(argv[2]);
	int layers = 12, heads = 12, kv = 12, n = 4096, dim = 64, heavy = 64, recent = 64, set = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		int *x = strcmp(argv[i], "--layers") == 0   ? &layers
		         : strcmp(argv[i], "--heads") == 0  ? &heads
		         : strcmp(argv[i], "--kv") == 0     ? &kv
		         : strcmp(argv[i], "--tokens") == 0 ? &n
		         : strcmp(argv[i], "--dim") == 0    ? &dim
		         : strcmp(argv[i], "--heavy") == 0  ? &heavy
		         : strcmp(argv[i], "--recent") == 0 ? &recent
		         : strcmp(argv[i], "--set") == 0    ? &set
		                                            : NULL;
		if (!x) {
			fprintf(stderr, "trace-bench: unknown option %s\n", argv[i]);
			return 2;
		}
		*x = atoi(argv[i + 1]);
	}
	const int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
	printf("trace: %d layers x %d heads (%d kv) x %d tokens x dim %d, budget %d + %d; "
	       "%d cores, load average %.2f at start\n",
	       layers, heads, kv, n, dim, heavy, recent, cores, load_average());
	const double rate = machine_rate(cores, false), fused = machine_rate(cores, true);
	printf("machine: %.1f G double multiply-adds/s on %d cores as the "
	       "engine computes (%s "
	       "vectors, a multiply and an add), %.1f G fused (FMA)\n",
	       rate / 1e9, cores, __builtin_cpu_supports("avx512f") ? "avx512" : "avx2",
	       fused / 1e9);
	struct scene *sc = make_trace(layers, heads, kv, n, dim, heavy, recent);
	const unsigned some = ENGINE_POLICY(POLICY_H2O) | ENGINE_POLICY(POLICY_WINDOW) |
	                      ENGINE_POLICY(POLICY_STREAMING) | ENGINE_POLICY(POLICY_TOVA) |
	                      ENGINE_POLICY(POLICY_FULL);
	const unsigned sets[2] = {ENGINE_ALL_POLICIES, some};
	const char *const names[2] = {"every policy", "--policies h2o,window,streaming,tova,full"};
	for (int i = 0; i < 2; i++) {
		if (set == 2 - i)
			continue;
		const double madds = arithmetic(layers, heads, kv, n, dim, heavy, recent, sets[i]);
		const double limit = madds / rate, flimit = madds / fused;
		printf("\n%s: arithmetic %.3g multiply-adds = %.2f s at the engine's rate, %.2f s "
		       "with FMA\n",
		       names[i], madds, limit, flimit);
		fflush(stdout);
		const pid_t pid = fork();
		if (pid == 0) {
			run_report(sc, sets[i], limit, flimit, n, dim, layers, heads, kv, heavy,
			           recent);
			fflush(stdout);
			_exit(0);
		}
		int status = 0;
		if (pid < 0 || waitpid(pid, &status, 0) < 0 || status != 0)
			printf("  (the run failed)\n");
	}
	scene_free(sc);
	return 0;
}
