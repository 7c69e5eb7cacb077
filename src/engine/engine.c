/*
 * engine: spec §2, one step at a time, for every policy's cache.
 *
 * Every cache is kept in ascending position order, so "the recent newest
 * positions" are the tail of its arrays and every sum runs in position
 * order. The order of floating-point operations is part of the contract
 * with the timeline: a logit is engine_logit's (a dot product summed in
 * index order, times the scale), and the softmax normalisers in the record
 * let it recompute any past weight bit for bit.
 *
 * The caches that evict hold at most B + 1 positions; each computes the
 * logits of its own positions only, from its own copies of their key
 * rows, so a step of such a cache costs O(B * dim) whatever n is. Neither
 * its keys nor its value rows fit in the core's first-level cache, so it
 * reads each once for eight steps: the logits of the next eight queries in
 * one pass over the key rows (the lookahead, a query in each vector lane),
 * and, when engine_step wants outputs, eight steps computed at once (each
 * into its own frame, so that their records stay as they were) whose
 * outputs come from one pass over the value rows; the calls that follow
 * hand those steps out one by one.
 *
 * The full cache attends over every earlier position; its rows do not depend on any other
 * cache, so it computes a block of future steps at once: the block's
 * queries against one tile of keys at a time (each key tile loaded once for
 * all of them), then each row's softmax, then its output, each phase split
 * between two threads when the block is large enough to pay for one (see
 * full_phase). Every number is computed by one thread in one fixed order,
 * so neither the block size nor the threads change a bit of any result;
 * tests/test_reference.c holds the engine to a plain implementation.
 */
#include "h2o/engine.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h2o/engine_replay.h"
#include "engine_exp.h"
#include "engine_kernel.h"
#include "h2o/scene.h"

/* The weights of a block of full-cache steps stay within this many bytes
 * (rows * n doubles; the logits take as many again), and a block has at
 * most BLOCK_MAX_ROWS rows. Each block reads every key and value row once,
 * so on a long scene the block is what makes the full cache wait for
 * memory or not: at 100,000 tokens, dim 64, 40 rows (32 MiB) ran 2,500
 * steps/s, 80 rows 3,400 and 128 rows 3,900. */
#define BLOCK_BYTES    (128.0 * 1024 * 1024)
#define BLOCK_MAX_ROWS 128
/* Multiply-adds below which work stays on one thread: handing a part to
 * the helper costs a few microseconds of waking it up. */
#define THREAD_MIN_WORK (1L << 21)
/* Multiply-adds of one cache that evicts, per step, from which a step of
 * every policy gives half of them to the helper. */
#define STEP_SPLIT_WORK 8192L

/* Steps a cache that evicts computes at once when they have outputs: one
 * pass over the value rows (kernel_batch_out) then gives all of them. Up
 * to caches of AHEAD_MAX_CAP entries; larger ones, whose frames would take
 * too much memory, compute a step at a time. */
#define AHEAD         KERNEL_LANES
#define AHEAD_MAX_CAP 16384
/* Steps ahead whose rows a step asks memory for (prefetch_rows). */
#define PREFETCH_STEPS 16

/* What a cache that evicts did at one step, and what it held afterwards:
 * the arrays its record points to. */
struct frame {
	int len; /* positions attended, ascending */
	int *pos;
	double *score; /* after this step's update, before eviction */
	double *w;     /* this step's weights */
	double max, sum;
	int n_ev;
	int *ev_pos;
	double *ev_score, *ev_w;
	int cutoff_pos;
	double cutoff_value;
	int klen; /* after eviction: the cache */
	int *kpos;
	double *kscore;
};

/* A policy that evicts: at most cap = min(B + 1, n) entries. */
struct cache {
	int cap;
	/* Step s's frame is fr[s % nframes]; fr[0] starts as step 0, the
	 * empty cache. A step reads the cache from the previous frame and
	 * writes only its own, so a step's record stays as it was while the
	 * steps after it are computed, until the ring comes round. */
	int nframes;
	struct frame *fr;
	unsigned char *gone;
	/* Outputs of steps out_first .. out_first + AHEAD - 1, dim each,
	 * and a batch's positions and weights (kernel_batch_out). */
	int out_first;
	double *out;
	/* While a batch of steps with outputs is computed (brow >= 0, the
	 * batch's step being computed): the positions of the batch, u_pos
	 * (the cache before it, then each position appended; the one appended
	 * at step brow is u_pos[ub + brow], nu in all), the index in u_pos of
	 * each entry of the cache (uk, kept beside it like slot), and each
	 * step's weights by u_pos index, 0 where it attends none (wt). */
	int brow, ub, nu;
	int *u_pos, *uk;
	double *wt; /* row r (the batch's step r) at wt + r * wstride */
	size_t wstride;
	/* Vector scenes: entry i's key row is row slot[i] of KEYS (dim
	 * numbers each). Slots freed by eviction are reused. */
	int *slot;
	int *free_slot, n_free;
	int hi; /* slots 0 .. hi - 1 have been used */
	double *keys;
	/* Lookahead: the logits of the queries of steps la_first + 1 ..
	 * la_first + la_count against every slot, row r (the query of
	 * position la_first + r) at la_logit + r * la_stride. A step that
	 * finds its row here reads it; a key that arrives later fills in its
	 * slot in the rows still to come. So the key rows, which do not fit
	 * in the core's first-level cache, are read once per KERNEL_LANES
	 * steps instead of once per step. */
	int la_first, la_count;
	size_t la_stride;
	double *la_qt; /* those queries, transposed (kernel_rows_logits8) */
	double *la_logit;
};

/* The full cache: positions 0 .. len - 1, and a block of computed steps. */
struct full {
	int len;
	double *score; /* n */
	/* Lazy scores (engine_lazy_full): the rows of steps added + 1 ..
	 * len are not yet in SCORE. */
	bool lazy;
	int added;
	int *iota; /* 0 .. n - 1: its positions, and its record's */
	int rows;  /* block capacity */
	int first; /* the block holds positions first .. first + count - 1 */
	int count;
	double *w;   /* rows x n: row r's weights over 0 .. first + r */
	double *out; /* rows x dim */
	double *max, *sum;
	double *wsum; /* each row's sum of its weights: its attention recall */
	double *qt;   /* the block's queries, transposed eight at a time */
	/* The logits of each group of eight rows, key by key (n x 8 each),
	 * and each thread's running max of each of their lanes. */
	double *lt, *gmax[2];
	double *panel[2]; /* each thread's tile of value rows */
};

/*
 * The second thread: started the first time work pays for it, joined by
 * engine_free. A job is the second of two parts; the engine's thread does
 * the first and then, if the helper has not picked the second up yet (the
 * other core is busy), takes it back and does it too, so no one ever
 * waits for a thread to be scheduled.
 *
 * Jobs come a microsecond or two apart when a step is split, so handing
 * one over must cost far less than that: the state is an atomic that both
 * threads watch, spinning with the processor's pause hint, and each claim
 * is a compare-and-swap. Only a thread that has watched in vain for
 * HELPER_SPIN_NS sleeps on a condition variable; it says so first (asleep,
 * waiting), and the other thread, after changing the state, signals only
 * when it reads that flag. Both sides store, then load, sequentially
 * consistently, so at least one of them sees the other's store: a sleeper
 * is always woken.
 */
enum job_state { JOB_NONE, JOB_POSTED, JOB_RUNNING, JOB_DONE, JOB_QUIT };

struct helper {
	bool started;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake, done;
	atomic_int state;    /* enum job_state */
	atomic_bool asleep;  /* the helper sleeps (or is about to) on WAKE */
	atomic_bool waiting; /* the engine's thread sleeps on DONE */
	void (*part)(void *arg, int part);
	void *arg;
};

/* How long a thread watches for the other before it sleeps: the steps of a
 * run come a few microseconds apart, and waking a sleeping thread takes
 * longer than the work of one. */
#define HELPER_SPIN_NS 100000L

struct engine {
	const struct scene *sc;
	struct policy_budget b;
	unsigned mask;
	int t;     /* steps done */
	int live;  /* steps the caches that evict have computed, >= t */
	int ahead; /* steps they compute at once with outputs */
	/* The step engine_step handed out last, if no other call came
	 * since; else -1. */
	int streak;
	struct cache c[POLICY_COUNT]; /* every policy but POLICY_FULL */
	struct full f;
	struct step_record rec; /* engine_advance's */
	struct helper h;
};

/* What a policy that does not run shows: nothing. */
static const int no_positions[1];
static const double no_scores[1];

static bool runs(const struct engine *e, int p)
{
	return e->mask & ENGINE_POLICY(p);
}

static int min_int(int a, int b)
{
	return a < b ? a : b;
}

static long elapsed_ns(const struct timespec *since)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - since->tv_sec) * 1000000000L + (now.tv_nsec - since->tv_nsec);
}

static void cpu_relax(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
	__builtin_ia32_pause();
#endif
}

/* Watch H's state for up to HELPER_SPIN_NS until it is WANT or, when
 * OR_QUIT, JOB_QUIT. False if it is not. */
static bool spin_until(struct helper *h, enum job_state want, bool or_quit)
{
	struct timespec since;
	clock_gettime(CLOCK_MONOTONIC, &since);
	for (int i = 1;; i++) {
		const int st = atomic_load(&h->state);
		if (st == (int)want || (or_quit && st == JOB_QUIT))
			return true;
		cpu_relax();
		if (i % 256 == 0 && elapsed_ns(&since) > HELPER_SPIN_NS)
			return false;
	}
}

/* Sleep on COND until H's state is WANT (or JOB_QUIT, when OR_QUIT),
 * having said so in FLAG. */
static void sleep_until(struct helper *h, pthread_cond_t *cond, atomic_bool *flag,
                        enum job_state want, bool or_quit)
{
	pthread_mutex_lock(&h->lock);
	atomic_store(flag, true);
	for (;;) {
		const int st = atomic_load(&h->state);
		if (st == (int)want || (or_quit && st == JOB_QUIT))
			break;
		pthread_cond_wait(cond, &h->lock);
	}
	atomic_store(flag, false);
	pthread_mutex_unlock(&h->lock);
}

/* Wake the thread that sleeps on COND, if FLAG says it does. */
static void wake_if(struct helper *h, pthread_cond_t *cond, atomic_bool *flag)
{
	if (!atomic_load(flag))
		return;
	pthread_mutex_lock(&h->lock);
	pthread_cond_signal(cond);
	pthread_mutex_unlock(&h->lock);
}

static void *helper_main(void *arg)
{
	struct helper *h = arg;
	for (;;) {
		if (!spin_until(h, JOB_POSTED, true))
			sleep_until(h, &h->wake, &h->asleep, JOB_POSTED, true);
		int st = JOB_POSTED;
		if (!atomic_compare_exchange_strong(&h->state, &st, JOB_RUNNING)) {
			if (st == JOB_QUIT)
				break;
			continue; /* the engine's thread took it back */
		}
		h->part(h->arg, 1);
		atomic_store(&h->state, JOB_DONE);
		wake_if(h, &h->done, &h->waiting);
	}
	return NULL;
}

static bool helper_start(struct helper *h)
{
	if (h->started)
		return true;
	if (pthread_mutex_init(&h->lock, NULL) != 0)
		return false;
	if (pthread_cond_init(&h->wake, NULL) != 0) {
		pthread_mutex_destroy(&h->lock);
		return false;
	}
	if (pthread_cond_init(&h->done, NULL) != 0) {
		pthread_cond_destroy(&h->wake);
		pthread_mutex_destroy(&h->lock);
		return false;
	}
	atomic_init(&h->state, JOB_NONE);
	atomic_init(&h->asleep, false);
	atomic_init(&h->waiting, false);
	if (pthread_create(&h->thread, NULL, helper_main, h) != 0) {
		pthread_cond_destroy(&h->done);
		pthread_cond_destroy(&h->wake);
		pthread_mutex_destroy(&h->lock);
		return false;
	}
	h->started = true;
	return true;
}

static void helper_stop(struct helper *h)
{
	if (!h->started)
		return;
	atomic_store(&h->state, JOB_QUIT);
	wake_if(h, &h->wake, &h->asleep);
	pthread_join(h->thread, NULL);
	pthread_cond_destroy(&h->done);
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->lock);
	h->started = false;
}

/* PART(ARG, 0) and PART(ARG, 1), the second on the helper when it gets to
 * it first. Both have run when this returns. */
static void run_two(struct helper *h, void (*part)(void *arg, int part), void *arg)
{
	if (!helper_start(h)) {
		part(arg, 0);
		part(arg, 1);
		return;
	}
	h->part = part;
	h->arg = arg;
	atomic_store(&h->state, JOB_POSTED);
	wake_if(h, &h->wake, &h->asleep);
	part(arg, 0);
	int st = JOB_POSTED;
	if (atomic_compare_exchange_strong(&h->state, &st, JOB_NONE)) {
		/* Not started: ours. */
		part(arg, 1);
		return;
	}
	/* Started: it ends about when ours did. */
	if (!spin_until(h, JOB_DONE, false))
		sleep_until(h, &h->done, &h->waiting, JOB_DONE, false);
	atomic_store(&h->state, JOB_NONE);
}

static double dot(const double *a, const double *b, int n)
{
	double s = 0.0;
	for (int i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

double engine_logit(const struct scene *sc, int q, int j)
{
	if (sc->mode == SCENE_ATTENTION)
		return log(sc->attn[scene_attn_offset(q) + (size_t)j]);
	const size_t d = (size_t)sc->dim;
	return sc->scale * dot(sc->q + (size_t)q * d, sc->k + (size_t)j * d, sc->dim);
}

double engine_weight(double logit, double max, double sum)
{
	return engine_exp(logit - max) / sum;
}

struct engine_keys {
	const struct scene *sc;
	int count, tiles;
	double *keys;  /* tiles * KERNEL_LANES * dim, kernel_put_key's layout */
	double *logit; /* tiles * KERNEL_LANES */
};

struct engine_keys *engine_keys_new(const struct scene *sc, const int *pos, int count)
{
	struct engine_keys *ks = calloc(1, sizeof *ks);
	if (!ks)
		return NULL;
	const size_t dim = (size_t)sc->dim;
	ks->sc = sc;
	ks->count = count;
	ks->tiles = (count + KERNEL_LANES - 1) / KERNEL_LANES;
	ks->keys = calloc((size_t)ks->tiles * KERNEL_LANES * dim, sizeof *ks->keys);
	ks->logit = malloc(((size_t)ks->tiles * KERNEL_LANES + 1) * sizeof *ks->logit);
	if (!ks->keys || !ks->logit) {
		engine_keys_free(ks);
		return NULL;
	}
	for (int i = 0; i < count; i++)
		if (pos[i] >= 0 && pos[i] < sc->n) /* else a zero key */
			kernel_put_key(ks->keys, i, sc->k + (size_t)pos[i] * dim, sc->dim);
	return ks;
}

void engine_keys_logits(const struct engine_keys *ks, int q, double *out)
{
	const struct scene *sc = ks->sc;
	kernel_slot_logits(ks->keys, ks->tiles, sc->dim, sc->q + (size_t)q * (size_t)sc->dim,
	                   sc->scale, ks->logit);
	memcpy(out, ks->logit, (size_t)ks->count * sizeof *out);
}

void engine_keys_free(struct engine_keys *ks)
{
	if (!ks)
		return;
	free(ks->keys);
	free(ks->logit);
	free(ks);
}

static void cache_done(struct cache *c)
{
	for (int i = 0; c->fr && i < c->nframes; i++) {
		struct frame *f = &c->fr[i];
		free(f->pos);
		free(f->score);
		free(f->w);
		free(f->ev_pos);
		free(f->ev_score);
		free(f->ev_w);
		free(f->kpos);
		free(f->kscore);
	}
	free(c->fr);
	free(c->gone);
	free(c->out);
	free(c->u_pos);
	free(c->uk);
	free(c->wt);
	free(c->slot);
	free(c->free_slot);
	free(c->keys);
	free(c->la_qt);
	free(c->la_logit);
}

/* Slots, from slot 0 up, all free. */
static void cache_reset_slots(struct cache *c)
{
	c->n_free = c->cap;
	for (int i = 0; i < c->cap; i++)
		c->free_slot[i] = c->cap - 1 - i;
	c->hi = 0;
	c->la_count = 0;
}

static struct frame *frame_of(const struct cache *c, int step)
{
	return &c->fr[step % c->nframes];
}

static bool frame_init(struct frame *f, size_t cap)
{
	f->pos = malloc(cap * sizeof *f->pos);
	f->score = malloc(cap * sizeof *f->score);
	f->w = malloc(cap * sizeof *f->w);
	f->ev_pos = malloc(cap * sizeof *f->ev_pos);
	f->ev_score = malloc(cap * sizeof *f->ev_score);
	f->ev_w = malloc(cap * sizeof *f->ev_w);
	f->kpos = malloc(cap * sizeof *f->kpos);
	f->kscore = malloc(cap * sizeof *f->kscore);
	f->klen = 0;
	return f->pos && f->score && f->w && f->ev_pos && f->ev_score && f->ev_w && f->kpos &&
	       f->kscore;
}

/* Steps a cache of CAP entries computes at once in a scene like SC. */
static int ahead_of(const struct scene *sc, int cap)
{
	return sc->v && cap <= AHEAD_MAX_CAP ? AHEAD : 1;
}

/* A cache of CAP entries that computes up to AHEAD steps at once. */
static bool cache_init(struct cache *c, int cap, int ahead_steps, const struct scene *sc)
{
	const size_t n = (size_t)cap, dim = (size_t)sc->dim, ahead = (size_t)ahead_steps;
	c->cap = cap;
	c->brow = -1;
	c->nframes = (int)ahead + 1;
	c->fr = calloc(ahead + 1, sizeof *c->fr);
	bool ok = c->fr != NULL;
	for (size_t i = 0; ok && i <= ahead; i++)
		ok = frame_init(&c->fr[i], n);
	c->gone = malloc(n);
	c->out = malloc(AHEAD * dim * sizeof *c->out);
	ok = ok && c->gone && c->out;
	if (ok && ahead > 1) {
		c->u_pos = malloc((n + ahead) * sizeof *c->u_pos);
		c->uk = malloc(n * sizeof *c->uk);
		c->wstride = n + ahead;
		c->wt = malloc(c->wstride * AHEAD * sizeof *c->wt);
		ok = c->u_pos && c->uk && c->wt;
	}
	if (ok && sc->mode == SCENE_VECTOR) {
		c->slot = malloc(n * sizeof *c->slot);
		c->free_slot = malloc(n * sizeof *c->free_slot);
		c->keys = malloc(n * dim * sizeof *c->keys);
		c->la_qt = calloc(KERNEL_LANES * dim, sizeof *c->la_qt);
		c->la_stride = n;
		c->la_logit = malloc(n * KERNEL_LANES * sizeof *c->la_logit);
		ok = c->slot && c->free_slot && c->keys && c->la_qt && c->la_logit;
		if (ok)
			cache_reset_slots(c);
	}
	return ok;
}

static void full_done(struct full *f)
{
	free(f->score);
	free(f->iota);
	free(f->w);
	free(f->out);
	free(f->max);
	free(f->sum);
	free(f->wsum);
	free(f->qt);
	free(f->lt);
	for (int i = 0; i < 2; i++) {
		free(f->gmax[i]);
		free(f->panel[i]);
	}
}

/* BLOCK_ROWS: the rows of a block, or 0 for as many as BLOCK_BYTES hold. */
static bool full_init(struct full *f, const struct scene *sc, int block_rows)
{
	const size_t n = (size_t)sc->n, dim = (size_t)sc->dim;
	double rows = BLOCK_BYTES / ((double)n * sizeof(double));
	rows = block_rows > 0 ? block_rows : rows;
	rows = rows < 1 ? 1 : rows > BLOCK_MAX_ROWS ? BLOCK_MAX_ROWS : rows;
	f->rows = min_int((int)rows, sc->n);
	/* Whole groups of eight rows: a group's logits, n keys of eight
	 * lanes, are kept in its rows before its softmax. */
	const size_t wrows = ((size_t)f->rows + KERNEL_LANES - 1) / KERNEL_LANES * KERNEL_LANES;
	f->score = malloc(n * sizeof *f->score);
	f->iota = malloc(n * sizeof *f->iota);
	f->w = malloc(wrows * n * sizeof *f->w);
	f->out = malloc((size_t)f->rows * dim * sizeof *f->out);
	f->max = malloc((size_t)f->rows * sizeof *f->max);
	f->sum = malloc((size_t)f->rows * sizeof *f->sum);
	f->wsum = malloc((size_t)f->rows * sizeof *f->wsum);
	f->qt = calloc(wrows * dim, sizeof *f->qt);
	f->lt = malloc(wrows * n * sizeof *f->lt);
	bool ok = f->score && f->iota && f->w && f->out && f->max && f->sum && f->wsum && f->qt &&
	          f->lt;
	for (int i = 0; i < 2 && ok; i++) {
		f->gmax[i] = malloc(wrows * sizeof *f->gmax[i]);
		f->panel[i] = malloc((size_t)kernel_tile_keys(sc->dim) * dim * sizeof *f->panel[i]);
		ok = f->gmax[i] && f->panel[i];
	}
	if (!ok)
		return false;
	for (int i = 0; i < sc->n; i++)
		f->iota[i] = i;
	return true;
}

struct engine *engine_new_only(const struct scene *sc, const struct policy_budget *b,
                               unsigned policies)
{
	return engine_new_rows(sc, b, policies, 0);
}

struct engine *engine_new_rows(const struct scene *sc, const struct policy_budget *b,
                               unsigned policies, int block_rows)
{
	struct engine *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->sc = sc;
	e->b = *b;
	e->b.n = sc->n;
	e->mask = policies & ENGINE_ALL_POLICIES;
	/* A cache never holds more than budget + 1 tokens, nor more than the
	 * scene has: a huge budget is not trusted with memory. */
	long cap = (long)b->heavy + b->recent + 1;
	cap = cap < sc->n ? cap : sc->n;
	bool ok = e->mask != 0;
	if (ok && runs(e, POLICY_FULL))
		ok = full_init(&e->f, sc, block_rows);
	e->ahead = ahead_of(sc, (int)cap);
	for (int p = 0; p < POLICY_COUNT && ok; p++)
		if (p != POLICY_FULL && runs(e, p))
			ok = cache_init(&e->c[p], (int)cap, e->ahead, sc);
	if (!ok) {
		engine_free(e);
		return NULL;
	}
	return e;
}

struct engine *engine_new(const struct scene *sc, const struct policy_budget *b)
{
	return engine_new_only(sc, b, ENGINE_ALL_POLICIES);
}

void engine_free(struct engine *e)
{
	if (!e)
		return;
	helper_stop(&e->h);
	for (int p = 0; p < POLICY_COUNT; p++)
		cache_done(&e->c[p]);
	full_done(&e->f);
	free(e);
}

unsigned engine_policies(const struct engine *e)
{
	return e->mask;
}

int engine_step_count(const struct engine *e)
{
	return e->t;
}

const struct policy_budget *engine_budget(const struct engine *e)
{
	return &e->b;
}

int engine_len(const struct engine *e, enum policy_id p)
{
	if (!runs(e, p))
		return 0;
	return p == POLICY_FULL ? e->f.len : frame_of(&e->c[p], e->t)->klen;
}

const int *engine_positions(const struct engine *e, enum policy_id p)
{
	if (!runs(e, p))
		return no_positions;
	return p == POLICY_FULL ? e->f.iota : frame_of(&e->c[p], e->t)->kpos;
}

const double *engine_scores(const struct engine *e, enum policy_id p)
{
	if (!runs(e, p))
		return no_scores;
	return p == POLICY_FULL ? e->f.score : frame_of(&e->c[p], e->t)->kscore;
}

/* ---- the full cache ---------------------------------------------------- */

/*
 * A block of steps goes in three phases, each split between two threads
 * when the block is large enough: the logits (split by keys: each thread
 * reads half of K, every logit is one dot product), the softmax of each
 * row (split by rows: a row's max and sum are chains in key order), and
 * the outputs (split by the output's numbers: each reads half of every
 * value row, and each number sums its keys in order). Every number is
 * computed by one thread in one order, however the work is split.
 */
enum phase { PHASE_LOGITS, PHASE_SOFTMAX, PHASE_OUTPUT };

/* Part PART of PARTS (1 or 2) of phase PH of the block at f->first. */
static void full_phase(const struct engine *e, enum phase ph, int part, int parts)
{
	const struct scene *sc = e->sc;
	const struct full *f = &e->f;
	const int first = f->first, count = f->count,
	          groups = (count + KERNEL_LANES - 1) / KERNEL_LANES;
	const size_t n = (size_t)sc->n, dim = (size_t)sc->dim, lanes = KERNEL_LANES;
	/* Groups of eight rows: the first half of them, or the rest. */
	const int gh = parts == 1 ? groups : (groups + 1) / 2;
	const int g0 = part == 0 ? 0 : gh, g1 = part == 0 ? gh : groups;
	switch (ph) {
	case PHASE_LOGITS: {
		double *gmax = f->gmax[part];
		for (int i = 0; i < groups * KERNEL_LANES; i++)
			gmax[i] = -INFINITY;
		/* Every group's logits of one tile of keys are computed while
		 * the tile is in the cache: the keys are read once per block. */
		if (sc->mode == SCENE_VECTOR) {
			const int keys = first + count, tile = 2 * kernel_tile_keys(sc->dim);
			const int split = parts == 1 ? keys : (keys / 2 + tile - 1) / tile * tile;
			const int k0 = part == 0 ? 0 : split, k1 = part == 0 ? split : keys;
			for (int j0 = k0; j0 < k1; j0 += tile)
				for (int g = 0; g < groups; g++)
					kernel_group_logits(
					        f->qt + (size_t)g * lanes * dim,
					        first + g * KERNEL_LANES,
					        min_int(KERNEL_LANES, count - g * KERNEL_LANES),
					        sc->k, sc->dim, sc->scale,
					        f->lt + (size_t)g * lanes * n, j0,
					        min_int(j0 + tile, k1), gmax + g * KERNEL_LANES);
			break;
		}
		for (int g = g0; g < g1; g++) {
			const int rows = min_int(KERNEL_LANES, count - g * KERNEL_LANES);
			const int pos = first + g * KERNEL_LANES;
			double *lt = f->lt + (size_t)g * lanes * n, *m = gmax + g * KERNEL_LANES;
			for (int j = 0; j < pos + rows; j++) {
				for (int l = 0; l < rows; l++) {
					const double x =
					        j <= pos + l
					                ? log(sc->attn[scene_attn_offset(pos + l) +
					                               (size_t)j])
					                : -INFINITY;
					lt[(size_t)j * lanes + (size_t)l] = x;
					if (x > m[l])
						m[l] = x;
				}
			}
		}
		break;
	}
	case PHASE_SOFTMAX:
		for (int g = g0; g < g1; g++) {
			const int r = g * KERNEL_LANES, rows = min_int(KERNEL_LANES, count - r);
			/* Each lane's max: the first part's keys come first, the
			 * second's replace it only when greater, as one scan over
			 * all of them would. */
			double m8[KERNEL_LANES];
			for (int l = 0; l < KERNEL_LANES; l++) {
				const double a = f->gmax[0][r + l], b = f->gmax[1][r + l];
				m8[l] = b > a ? b : a;
			}
			kernel_group_softmax(f->lt + (size_t)r * n, first + r, rows, m8,
			                     f->w + (size_t)r * n, n, f->max + r, f->sum + r,
			                     f->wsum + r);
		}
		break;
	case PHASE_OUTPUT: {
		const int kh = parts == 1 ? sc->dim : sc->dim / 2 / KERNEL_LANES * KERNEL_LANES;
		kernel_block_out(f->w, n, count, first + 1, sc->v, sc->dim, part == 0 ? 0 : kh,
		                 part == 0 ? kh : sc->dim, f->out, f->panel[part]);
		break;
	}
	}
}

struct phase_job {
	const struct engine *e;
	enum phase ph;
};

static void phase_part(void *arg, int part)
{
	const struct phase_job *job = arg;
	full_phase(job->e, job->ph, part, 2);
}

/* Phase PH in two parts, on two threads when the helper is free (TWO), or
 * in one. */
static void run_phase(struct engine *e, enum phase ph, bool two)
{
	if (!two) {
		full_phase(e, ph, 0, 1);
		return;
	}
	struct phase_job job = {e, ph};
	run_two(&e->h, phase_part, &job);
}

/* Compute the block of steps that starts at position FIRST. */
static void full_block(struct engine *e, int first)
{
	const struct scene *sc = e->sc;
	struct full *f = &e->f;
	const int count = min_int(f->rows, sc->n - first);
	f->first = first;
	f->count = count;
	if (sc->mode == SCENE_VECTOR) {
		const size_t dim = (size_t)sc->dim;
		const size_t groups = ((size_t)count + KERNEL_LANES - 1) / KERNEL_LANES;
		memset(f->qt, 0, groups * KERNEL_LANES * dim * sizeof *f->qt);
		for (int r = 0; r < count; r++)
			kernel_put_key(f->qt, r, sc->q + (size_t)(first + r) * dim, sc->dim);
	}
	const bool two = (long)count * (first + count) * sc->dim >= THREAD_MIN_WORK;
	/* A part that does not run leaves its maxima at -inf. */
	for (int i = 0; i < (count + KERNEL_LANES - 1) / KERNEL_LANES * KERNEL_LANES; i++)
		f->gmax[1][i] = -INFINITY;
	run_phase(e, PHASE_LOGITS, two);
	run_phase(e, PHASE_SOFTMAX, two && count > KERNEL_LANES);
	if (sc->v)
		run_phase(e, PHASE_OUTPUT, two && sc->dim >= 2 * KERNEL_LANES);
}

/* Spec §2 steps 1-5 for the full cache, from the block's row of P. */
struct add_job {
	const struct engine *e;
	int from, to; /* steps */
};

/* Part PART of 2 of adding the rows of steps from + 1 .. to (in the block)
 * to the scores: keys split in two, each key's weights added in step order
 * a tile of keys at a time, so the tile stays in the cache. */
static void add_part(void *arg, int part)
{
	const struct add_job *job = arg;
	const struct full *f = &job->e->f;
	const size_t n = (size_t)job->e->sc->n;
	const int keys = job->to, half = keys / 2 / 1024 * 1024;
	const int k0 = part == 0 ? 0 : half, k1 = part == 0 ? half : keys;
	for (int j0 = k0; j0 < k1; j0 += 2048) {
		const int j1 = min_int(j0 + 2048, k1);
		for (int s = job->from + 1; s <= job->to; s++) {
			/* Step s adds its weights over positions 0 .. s - 1. */
			const int end = min_int(j1, s);
			if (end > j0)
				kernel_add(f->score + j0,
				           f->w + (size_t)(s - 1 - f->first) * n + j0, end - j0);
		}
	}
}

/* Bring a lazy full cache's scores up to its last step. */
static void full_catch_up(struct engine *e)
{
	struct full *f = &e->f;
	if (!f->lazy || f->added >= f->len)
		return;
	/* Positions that arrived since score 0 before their first weight. */
	for (int p = f->added; p < f->len; p++)
		f->score[p] = 0.0;
	struct add_job job = {e, f->added, f->len};
	if ((long)(f->len - f->added) * f->len >= THREAD_MIN_WORK)
		run_two(&e->h, add_part, &job);
	else
		for (int part = 0; part < 2; part++)
			add_part(&job, part);
	f->added = f->len;
}

void engine_lazy_full(struct engine *e)
{
	e->f.lazy = true;
	e->f.added = e->f.len;
}

void engine_sync_full(struct engine *e)
{
	full_catch_up(e);
}

static void full_step(struct engine *e, int p, struct cache_record *r)
{
	struct full *f = &e->f;
	if (p < f->first || p >= f->first + f->count) {
		/* The old block's rows go into the scores before it is gone. */
		full_catch_up(e);
		full_block(e, p);
	}
	const int row = p - f->first;
	const double *w = f->w + (size_t)row * (size_t)e->sc->n;
	f->len = p + 1;
	if (!f->lazy) {
		f->score[p] = 0.0;
		kernel_add(f->score, w, f->len);
	}
	*r = (struct cache_record){
	        .n_attended = f->len,
	        .attended = f->iota,
	        .attn = w,
	        .scores = f->lazy ? NULL : f->score,
	        .max = f->max[row],
	        .sum = f->sum[row],
	        .cutoff_pos = -1,
	        .out = e->sc->v ? f->out + (size_t)row * (size_t)e->sc->dim : NULL,
	};
}

/* ---- the caches that evict --------------------------------------------- */

/*
 * The logits of P's query against every used slot of C, where the key of P
 * has just been put into slot S: from the lookahead when it holds P (after
 * filling in slot S for P and the queries after it), else from a new batch
 * of lookahead that starts at P.
 */
static const double *lookahead_row(const struct scene *sc, struct cache *c, int p, int s)
{
	const size_t dim = (size_t)sc->dim;
	const int r = p - c->la_first;
	if (c->la_count > 0 && r >= 0 && r < c->la_count) {
		double l8[KERNEL_LANES];
		kernel_key_logits8(c->la_qt, sc->dim, sc->k + (size_t)p * dim, sc->scale, l8);
		for (int i = r; i < c->la_count; i++)
			c->la_logit[(size_t)i * c->la_stride + (size_t)s] = l8[i];
		return c->la_logit + (size_t)r * c->la_stride;
	}
	c->la_first = p;
	c->la_count = min_int(KERNEL_LANES, sc->n - p);
	for (int i = 0; i < KERNEL_LANES; i++) {
		if (i < c->la_count)
			kernel_put_key(c->la_qt, i, sc->q + (size_t)(p + i) * dim, sc->dim);
		else /* zeros: those lanes' logits go unread */
			for (size_t j = 0; j < dim; j++)
				c->la_qt[j * KERNEL_LANES + (size_t)i] = 0.0;
	}
	kernel_rows_logits8(c->keys, c->hi, sc->dim, c->la_qt, sc->scale, c->la_logit,
	                    c->la_stride);
	return c->la_logit;
}

/* Ask for the key and value rows of position P, and the query of P + 8
 * (a lookahead needs the next eight): reading rows that are further on, a
 * step does not wait for them to come from memory. */
static void prefetch_rows(const struct scene *sc, int p)
{
#if defined(__GNUC__)
	const size_t dim = (size_t)sc->dim;
	for (size_t i = 0; i < dim; i += 8) { /* a cache line of doubles */
		__builtin_prefetch(sc->k + (size_t)p * dim + i);
		__builtin_prefetch(sc->q + (size_t)(p + KERNEL_LANES) * dim + i);
		if (sc->v)
			__builtin_prefetch(sc->v + (size_t)p * dim + i);
	}
#else
	(void)sc;
	(void)p;
#endif
}

/*
 * Spec §2 for cache ID at step S (position p = S - 1), into frame S from
 * the cache in frame S - 1: append p, the softmax of this step's logits
 * over the positions held, the scores, and eviction by the policy; in a
 * batch with outputs (outputs_begin), this step's row of its weights. The
 * output itself is outputs_end's.
 */
static void cache_step(const struct engine *e, enum policy_id id, struct cache *c, int s)
{
	const struct scene *sc = e->sc;
	const struct frame *prev = frame_of(c, s - 1);
	struct frame *f = frame_of(c, s);
	const int p = s - 1, n = prev->klen;
	memcpy(f->pos, prev->kpos, (size_t)n * sizeof *f->pos);
	f->pos[n] = p;
	f->len = n + 1;
	double *w = f->w;
	const size_t dim = (size_t)sc->dim;
	if (sc->mode == SCENE_VECTOR) {
		const int slot = c->free_slot[--c->n_free];
		c->slot[n] = slot;
		c->hi = slot >= c->hi ? slot + 1 : c->hi;
		memcpy(c->keys + (size_t)slot * dim, sc->k + (size_t)p * dim,
		       dim * sizeof *c->keys);
		if (p + PREFETCH_STEPS + KERNEL_LANES < sc->n)
			prefetch_rows(sc, p + PREFETCH_STEPS);
		const double *logit = lookahead_row(sc, c, p, slot);
		for (int j = 0; j < f->len; j++)
			w[j] = logit[c->slot[j]];
	} else {
		const double *a = sc->attn + scene_attn_offset(p);
		for (int j = 0; j < f->len; j++)
			w[j] = log(a[f->pos[j]]);
	}
	kernel_softmax_scores(w, f->len, &f->max, &f->sum, prev->kscore, f->score);
	if (c->brow >= 0) {
		/* This step's row of the batch's weights. */
		c->uk[n] = c->ub + c->brow;
		for (int j = 0; j < f->len; j++)
			c->wt[(size_t)c->brow * c->wstride + (size_t)c->uk[j]] = w[j];
		c->brow++;
	}

	/* Step 6: mark, then what stays, run by run, into the frame's
	 * cache, and what goes into its evictions. */
	const struct policy *pol = policies[id];
	memset(c->gone, 0, (size_t)f->len);
	const struct policy_cache view = {f->len, f->pos, f->score, w};
	int cut = -1;
	pol->evict(&e->b, &view, c->gone, &cut);
	f->cutoff_pos = cut >= 0 ? f->pos[cut] : -1;
	f->cutoff_value = cut >= 0 ? (pol->by_weight ? w[cut] : f->score[cut]) : 0.0;
	int kept = 0, n_ev = 0;
	for (int i = 0; i < f->len;) {
		const unsigned char *g = memchr(c->gone + i, 1, (size_t)(f->len - i));
		const int j = g ? (int)(g - c->gone) : f->len;
		const size_t run = (size_t)(j - i);
		memcpy(f->kpos + kept, f->pos + i, run * sizeof *f->kpos);
		memcpy(f->kscore + kept, f->score + i, run * sizeof *f->kscore);
		if (c->slot && kept != i)
			memmove(c->slot + kept, c->slot + i, run * sizeof *c->slot);
		if (c->brow >= 0 && kept != i)
			memmove(c->uk + kept, c->uk + i, run * sizeof *c->uk);
		kept += j - i;
		if (j < f->len) {
			f->ev_pos[n_ev] = f->pos[j];
			f->ev_score[n_ev] = f->score[j];
			f->ev_w[n_ev] = w[j];
			n_ev++;
			if (c->slot)
				c->free_slot[c->n_free++] = c->slot[j];
		}
		i = j + 1;
	}
	f->klen = kept;
	f->n_ev = n_ev;
}

/*
 * The outputs of steps S0 .. S0 + COUNT - 1 of C (COUNT <= AHEAD): one pass
 * over the value rows of the union of the positions they attend, which is
 * the cache before S0 and the positions appended since. outputs_begin
 * comes before the steps (which then write their rows of weights), and
 * outputs_end after them.
 */
static void outputs_begin(struct cache *c, int s0, int count)
{
	c->out_first = s0;
	if (count == 1)
		return;
	const struct frame *prev = frame_of(c, s0 - 1);
	const int len = prev->klen;
	for (int j = 0; j < len; j++) {
		c->u_pos[j] = prev->kpos[j];
		c->uk[j] = j;
	}
	for (int k = 0; k < count; k++)
		c->u_pos[len + k] = s0 - 1 + k;
	c->ub = len;
	c->nu = len + count;
	for (int r = 0; r < AHEAD; r++)
		memset(c->wt + (size_t)r * c->wstride, 0, (size_t)c->nu * sizeof *c->wt);
	c->brow = 0;
}

static void outputs_end(const struct scene *sc, struct cache *c, int count)
{
	if (count == 1) {
		const struct frame *f = frame_of(c, c->out_first);
		kernel_gather_out(f->w, f->pos, f->len, sc->v, sc->dim, c->out);
		return;
	}
	c->brow = -1;
	kernel_batch_out(c->wt, c->wstride, c->u_pos, c->nu, sc->v, sc->dim, c->out);
}

/* Step S of C, computed, as a record (with its output when OUTPUT). */
static void cache_record_of(const struct scene *sc, const struct cache *c, int s, bool output,
                            struct cache_record *r)
{
	const struct frame *f = frame_of(c, s);
	*r = (struct cache_record){
	        .n_attended = f->len,
	        .attended = f->pos,
	        .attn = f->w,
	        .scores = f->score,
	        .max = f->max,
	        .sum = f->sum,
	        .n_evicted = f->n_ev,
	        .evicted = f->ev_pos,
	        .evicted_scores = f->ev_score,
	        .evicted_weights = f->ev_w,
	        .cutoff_pos = f->cutoff_pos,
	        .cutoff_value = f->cutoff_value,
	        .out = sc->v && output ? c->out + (size_t)(s - c->out_first) * (size_t)sc->dim
	                               : NULL,
	};
}

/* ---- figures ------------------------------------------------------------ */

/* Positions held by both ascending arrays. */
static int overlap(const int *a, int na, const int *b, int nb)
{
	int i = 0, j = 0, both = 0;
	while (i < na && j < nb) {
		if (a[i] == b[j])
			both++, i++, j++;
		else if (a[i] < b[j])
			i++;
		else
			j++;
	}
	return both;
}

/* FULL is the full cache's record, or NULL when it does not run. */
static void measure(const struct engine *e, enum policy_id p, struct cache_record *r,
                    const struct cache_record *full)
{
	const struct scene *sc = e->sc;
	struct step_metrics *m = &r->m;
	m->tokens = engine_len(e, p);
	m->kv = (long)m->tokens * 2 * sc->dim;
	if (!runs(e, POLICY_H2O))
		m->overlap_h2o = 0;
	else if (p == POLICY_H2O)
		m->overlap_h2o = m->tokens;
	else
		m->overlap_h2o =
		        overlap(engine_positions(e, p), m->tokens, engine_positions(e, POLICY_H2O),
		                engine_len(e, POLICY_H2O));
	m->has_out = sc->v != NULL;
	if (!full) {
		m->attn_recall = m->out_err = m->out_cos = NAN;
		return;
	}
	double recall = 0.0;
	if (p == POLICY_FULL) {
		/* The same sum, of every weight in position order, made
		 * while the weights were: a chain of n adds here would cost
		 * more than the rest of the step. */
		recall = e->f.wsum[e->t - 1 - e->f.first];
	} else {
		for (int i = 0; i < r->n_attended; i++)
			recall += full->attn[r->attended[i]];
	}
	m->attn_recall = recall;
	m->out_err = 0.0;
	m->out_cos = 1.0;
	if (!m->has_out)
		return;
	double diff = 0.0, hh = 0.0, ff = 0.0, hf = 0.0;
	for (int k = 0; k < sc->dim; k++) {
		const double a = r->out[k], b = full->out[k];
		diff += (a - b) * (a - b);
		hh += a * a;
		ff += b * b;
		hf += a * b;
	}
	m->out_err = sqrt(diff);
	if (hh == 0.0 || ff == 0.0)
		m->out_cos = hh == ff ? 1.0 : 0.0;
	else
		m->out_cos = hf / (sqrt(hh) * sqrt(ff));
}

/* ---- stepping ----------------------------------------------------------- */

/* Steps from .. from + count - 1 of the caches of a mask that evict, each
 * cache all its steps in order, then (OUTPUTS) their outputs. The caches
 * do not depend on each other. */
struct run_job {
	struct engine *e;
	unsigned mask[2];
	int from, count;
	bool outputs;
};

static void run_part(void *arg, int part)
{
	const struct run_job *job = arg;
	struct engine *e = job->e;
	for (int i = 0; i < POLICY_COUNT; i++) {
		if (i == POLICY_FULL || !(job->mask[part] & ENGINE_POLICY(i)))
			continue;
		struct cache *c = &e->c[i];
		if (job->outputs)
			outputs_begin(c, job->from, job->count);
		for (int s = job->from; s < job->from + job->count; s++)
			cache_step(e, (enum policy_id)i, c, s);
		if (job->outputs)
			outputs_end(e->sc, c, job->count);
	}
}

/* Half the caches that evict in each of JOB's masks; how many there are. */
static int split_caches(const struct engine *e, struct run_job *job)
{
	int count = 0;
	for (int i = 0; i < POLICY_COUNT; i++)
		if (i != POLICY_FULL && runs(e, i))
			job->mask[count++ % 2] |= ENGINE_POLICY(i);
	return count;
}

/*
 * One step; FIGURES: the outputs and figures too (a replay skips them).
 * The caches that evict compute the steps after e->live in batches: with
 * outputs, as many steps as their frames hold (AHEAD), handed out one by
 * one by the calls that follow; else one step.
 */
static bool step(struct engine *e, struct step_record *rec, bool figures)
{
	const struct scene *sc = e->sc;
	if (e->t >= sc->n)
		return false;
	const int s = e->t + 1;
	if (e->live < s) {
		struct run_job job = {e, {0, 0}, s, 1, figures && sc->v};
		const int evicting = split_caches(e, &job);
		/* Ahead only when stepping on from the last step handed out:
		 * a step after a jump or a replay (a seek) is likely alone. */
		if (evicting > 0 && job.outputs && e->streak == e->t)
			job.count = min_int(e->ahead, sc->n - e->t);
		/* The caches that evict do not depend on each other: with
		 * the full cache beside them (a run over the whole scene,
		 * where the helper is around), half of them on the helper
		 * when they are large enough. */
		const long cap = e->b.heavy + e->b.recent + 1L;
		if (runs(e, POLICY_FULL) && evicting >= 2 &&
		    job.count * cap * sc->dim >= STEP_SPLIT_WORK)
			run_two(&e->h, run_part, &job);
		else
			for (int part = 0; part < 2; part++)
				run_part(&job, part);
		e->live = e->t + job.count;
	}
	rec->step = s;
	rec->pos = s - 1;
	for (int i = 0; i < POLICY_COUNT; i++) {
		struct cache_record *r = &rec->c[i];
		if (!runs(e, i))
			*r = (struct cache_record){.cutoff_pos = -1};
		else if (i == POLICY_FULL)
			full_step(e, s - 1, r);
		else
			cache_record_of(sc, &e->c[i], s, figures, r);
	}
	e->t = s;
	e->streak = figures ? s : -1;
	if (!figures)
		return true;
	/* Figures compare against the full cache and H2O, so they come
	 * after every cache has stepped. */
	const struct cache_record *full = runs(e, POLICY_FULL) ? &rec->c[POLICY_FULL] : NULL;
	for (int i = 0; i < POLICY_COUNT; i++)
		if (runs(e, i))
			measure(e, (enum policy_id)i, &rec->c[i], full);
	return true;
}

bool engine_step(struct engine *e, struct step_record *rec)
{
	return step(e, rec, true);
}

bool engine_advance(struct engine *e)
{
	return step(e, &e->rec, false);
}

void engine_advance_to(struct engine *e, int t)
{
	t = t < e->sc->n ? t : e->sc->n;
	if (t <= e->t)
		return;
	e->streak = -1;
	const long cap = e->b.heavy + e->b.recent + 1L;
	const long work = (long)(t - e->t) * cap * e->sc->dim;
	if (runs(e, POLICY_FULL) || work < THREAD_MIN_WORK / 8) {
		while (e->t < t)
			engine_advance(e);
		return;
	}
	/* Steps computed ahead first; then the caches are independent: half
	 * of them on a second thread, each cache stepped by one thread in
	 * step order. */
	e->t = min_int(e->live, t);
	if (e->t == t)
		return;
	struct run_job job = {e, {0, 0}, e->t + 1, t - e->t, false};
	split_caches(e, &job);
	run_two(&e->h, run_part, &job);
	e->t = e->live = t;
}

/* ---- snapshots ---------------------------------------------------------- */

/* Layout: t, the mask, then per policy of the mask: len, pos[len] (not for
 * the full cache, whose positions are 0 .. len - 1), score[len]. */
struct snap_head {
	int t;
	unsigned mask;
};

size_t engine_snapshot_size_of(const struct engine *e, unsigned mask)
{
	size_t size = sizeof(struct snap_head);
	for (int i = 0; i < POLICY_COUNT; i++) {
		if (!(mask & e->mask & ENGINE_POLICY(i)))
			continue;
		const size_t len = (size_t)engine_len(e, i);
		size += sizeof(int) + len * sizeof(double);
		if (i != POLICY_FULL)
			size += len * sizeof(int);
	}
	return size;
}

void engine_snapshot_of(const struct engine *e, unsigned mask, void *buf)
{
	unsigned char *b = buf;
	const struct snap_head head = {e->t, mask & e->mask};
	memcpy(b, &head, sizeof head);
	b += sizeof head;
	for (int i = 0; i < POLICY_COUNT; i++) {
		if (!(head.mask & ENGINE_POLICY(i)))
			continue;
		const int len = engine_len(e, i);
		memcpy(b, &len, sizeof len);
		b += sizeof len;
		if (i != POLICY_FULL) {
			memcpy(b, engine_positions(e, i), (size_t)len * sizeof(int));
			b += (size_t)len * sizeof(int);
		}
		memcpy(b, engine_scores(e, i), (size_t)len * sizeof(double));
		b += (size_t)len * sizeof(double);
	}
}

size_t engine_snapshot_size(const struct engine *e)
{
	return engine_snapshot_size_of(e, e->mask);
}

void engine_snapshot(const struct engine *e, void *buf)
{
	engine_snapshot_of(e, e->mask, buf);
}

/* Make C hold LEN entries at step T (from a blob: any alignment), their
 * keys in slots 0 .. len - 1. */
static void cache_restore(const struct engine *e, struct cache *c, int t, int len, const void *pos,
                          const void *score)
{
	struct frame *f = frame_of(c, t);
	f->klen = len;
	memcpy(f->kpos, pos, (size_t)len * sizeof *f->kpos);
	memcpy(f->kscore, score, (size_t)len * sizeof *f->kscore);
	if (!c->slot)
		return;
	const struct scene *sc = e->sc;
	cache_reset_slots(c);
	for (int i = 0; i < len; i++) {
		c->slot[i] = c->free_slot[--c->n_free];
		memcpy(c->keys + (size_t)c->slot[i] * (size_t)sc->dim,
		       sc->k + (size_t)f->kpos[i] * (size_t)sc->dim,
		       (size_t)sc->dim * sizeof *c->keys);
	}
	c->hi = len;
}

void engine_restore(struct engine *e, const void *buf)
{
	const unsigned char *b = buf;
	struct snap_head head;
	memcpy(&head, b, sizeof head);
	b += sizeof head;
	e->t = e->live = head.t;
	e->streak = -1;
	for (int i = 0; i < POLICY_COUNT; i++) {
		if (!(head.mask & ENGINE_POLICY(i)))
			continue;
		int len;
		memcpy(&len, b, sizeof len);
		b += sizeof len;
		const unsigned char *pos = b;
		if (i != POLICY_FULL)
			b += (size_t)len * sizeof(int);
		const unsigned char *score = b;
		b += (size_t)len * sizeof(double);
		if (!runs(e, i))
			continue;
		if (i == POLICY_FULL) {
			e->f.len = e->f.added = len;
			memcpy(e->f.score, score, (size_t)len * sizeof(double));
			continue;
		}
		cache_restore(e, &e->c[i], head.t, len, pos, score);
	}
	/* The full cache's block stays: its rows depend on the scene alone,
	 * so they are still the rows of the steps they hold. */
}

void engine_restore_full(struct engine *e, const double *scores)
{
	if (!runs(e, POLICY_FULL))
		return;
	e->f.len = e->t;
	e->f.added = e->t;
	memcpy(e->f.score, scores, (size_t)e->t * sizeof *scores);
}

size_t engine_memory(const struct engine *e)
{
	const struct scene *sc = e->sc;
	const size_t n = (size_t)sc->n, dim = (size_t)sc->dim;
	size_t bytes = sizeof *e;
	if (runs(e, POLICY_FULL)) {
		const size_t rows = (size_t)e->f.rows;
		const size_t wrows = (rows + KERNEL_LANES - 1) / KERNEL_LANES * KERNEL_LANES;
		/* Scores and positions; weights and logits of a block; its
		 * outputs, max, sum and weight sums; queries, maxima and value
		 * tiles. */
		bytes += n * (sizeof(double) + sizeof(int)) + 2 * wrows * n * sizeof(double) +
		         rows * (dim + 3) * sizeof(double);
		bytes += (wrows * dim + 2 * wrows + 2 * (size_t)kernel_tile_keys(sc->dim) * dim) *
		         sizeof(double);
	}
	for (int i = 0; i < POLICY_COUNT; i++) {
		if (i == POLICY_FULL || !runs(e, i))
			continue;
		const struct cache *c = &e->c[i];
		const size_t cap = (size_t)c->cap, frames = (size_t)c->nframes;
		/* Frames; marks; outputs; a batch's positions and weights. */
		bytes += frames * (sizeof *c->fr + cap * (3 * sizeof(int) + 5 * sizeof(double))) +
		         cap + AHEAD * dim * sizeof(double);
		if (frames > 2) /* u_pos, uk, wt */
			bytes += (cap + AHEAD) * (sizeof(int) + AHEAD * sizeof(double)) +
			         cap * sizeof(int);
		/* Slots, free slots, key rows, the lookahead's logits and
		 * queries. */
		if (sc->mode == SCENE_VECTOR)
			bytes += cap * 2 * sizeof(int) +
			         (cap * (dim + KERNEL_LANES) + KERNEL_LANES * dim) * sizeof(double);
	}
	return bytes;
}
