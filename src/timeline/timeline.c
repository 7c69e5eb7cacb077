/*
 * timeline: the engine run once over the scene, kept so any step can be
 * shown again.
 *
 * Per step it keeps a summary of every cache (figures, softmax normalisers,
 * evictions) and per policy and position the step that evicted it. The
 * caches that evict hold at most B + 1 positions: a snapshot of all of them
 * is taken every `every` steps, and seeking to step t restores the last
 * snapshot before t and replays the rest, so the record of step t comes
 * from the engine itself, bit for bit as it came the first time. Moving one
 * step forward from the current step is a single engine step.
 *
 * The full cache is the big state: t scores at step t, n^2 / 2 numbers
 * over the scene. Its scores are kept only every `full_every` steps; a
 * score at step t is the kept one plus the weights of the steps since,
 * each recomputed from its logit and the step's stored max and sum and
 * added in step order, exactly as the engine added them. So a screen that
 * shows a few positions reads them in O(full_every * dim) each and never
 * needs the full cache replayed (timeline_seek_lite); timeline_seek, which
 * hands out a whole engine, replays the full cache from its kept scores.
 *
 * The other way to step back, per-step deltas, cannot be compact: a step
 * is undone exactly only with the scores every cache held before it (a
 * score minus a weight is not the score before it in floating point), so
 * deltas hold a snapshot's worth per step, 4 caches x (B + 1) x 12 bytes,
 * 0.6 GB for 100,000 steps at B = 128 against a budget of 0.3 GB for a
 * scene of dim 64. h2o-bench measures both ("Timeline designs": every = 1
 * is the deltas' memory and speed); snapshots every few steps answer in
 * well under a millisecond within the budget.
 *
 * Intervals are chosen from the scene so that the timeline stays within
 * about twice the memory of the scene's own q, k and v: of what is left
 * after the summaries and the engines, nine tenths go to snapshots of the
 * caches that evict (seeking replays them) and a tenth to the full cache's
 * kept scores (reading one adds up a few hundred weights more, a few
 * microseconds).
 *
 * This file builds the timeline and answers for the steps built;
 * timeline_seek.c takes its engines to a step and adds up the full
 * cache's scores; both share what a timeline holds (timeline_state.h).
 */
#include "h2o/timeline.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h2o/engine_replay.h"
#include "h2o/report.h"
#include "h2o/scene.h"
#include "timeline_impl.h"
#include "timeline_state.h"

/* The timeline aims at this multiple of the scene's own bytes, and never
 * denies itself this many bytes of snapshots on a small scene. */
#define MEMORY_FACTOR      1.9
#define MIN_SNAPSHOT_BYTES (8.0 * 1024 * 1024)
/* The share of the snapshot memory that goes to the caches that evict:
 * seeking replays them, while the full cache's kept scores only set how
 * many weights a score read adds up. */
#define EVICTING_SHARE 0.9
/* The blocks of the engine that timeline_seek replays: a few steps at a
 * time, so that it holds little memory. */
#define SEEK_BLOCK_ROWS 8

/* The scene's own numbers: q, k, v, or the attention rows and v. */
static double scene_bytes(const struct scene *sc)
{
	const double cells = (double)sc->n * sc->dim * sizeof(double);
	double bytes = sc->v ? cells : 0.0;
	if (sc->mode == SCENE_VECTOR)
		bytes += 2 * cells;
	else
		bytes += (double)scene_attn_offset(sc->n) * sizeof(double);
	return bytes;
}

/* The snapshot intervals: every step while memory allows, then as few
 * snapshots as fit in their share of the budget. */
static void choose_intervals(struct timeline *tl, double fixed)
{
	const struct scene *sc = tl->sc;
	const double n = sc->n;
	double budget = MEMORY_FACTOR * scene_bytes(sc) - fixed;
	budget = budget > MIN_SNAPSHOT_BYTES ? budget : MIN_SNAPSHOT_BYTES;
	/* A snapshot of the caches that evict: B + 1 positions and scores
	 * each (fewer while they fill; the scene for one that grows). */
	const double caps = engine_caches_cap(sc, &tl->want, tl->mask);
	const double snap = caps * (sizeof(int) + sizeof(double)) + (POLICY_COUNT - 1) * 64;
	double every = ceil(n * snap / (budget * EVICTING_SHARE));
	every = every < 1 ? 1 : every > n ? n : every;
	/* The full cache's scores at steps k, 2k, ...: n^2 / (2k) numbers. */
	double full = ceil(n * n * sizeof(double) / 2 / (budget * (1 - EVICTING_SHARE)));
	full = full < every ? every : full > n ? n : full;
	tl->every = (int)every;
	tl->full_every = (int)(ceil(full / every) * every);
}

/* The step at which P evicted POS, or 0: a step past the build's end may
 * show, which callers treat as not (yet) evicted by the step they ask
 * about. */
static int evicted_at(const struct timeline *tl, enum policy_id p, int pos)
{
	return atomic_load_explicit(&tl->log[p].evicted_at[pos], memory_order_relaxed);
}

/* The position H2O promotes at step T if it is still kept, or -1. Tokens
 * come to their promotion in the order they came in (policy.h), so a
 * cursor over the positions finds it. */
static int promoted(struct timeline *tl, int t)
{
	int found = -1;
	for (; tl->promote_next < t; tl->promote_next++) {
		const int pos = tl->promote_next;
		const int at = policy_promoted_at(POLICY_H2O, &tl->b, pos);
		if (at > t)
			break;
		if (at == t && evicted_at(tl, POLICY_H2O, pos) == 0)
			found = pos;
	}
	return found;
}

static void summarise(struct timeline *tl, const struct step_record *rec)
{
	struct step_summary *s = &tl->sum[rec->step];
	for (int p = 0; p < POLICY_COUNT; p++) {
		const struct cache_record *r = &rec->c[p];
		struct cache_summary *cs = &s->c[p];
		struct policy_log *log = &tl->log[p];
		cs->m = r->m;
		cs->max = r->max;
		cs->sum = r->sum;
		cs->n_evicted = r->n_evicted;
		cs->first_evict = log->n_ev;
		for (int i = 0; i < r->n_evicted; i++) {
			struct eviction *ev = &log->ev[log->n_ev++];
			ev->pos = r->evicted[i];
			ev->step = rec->step;
			ev->score = r->evicted_scores[i];
			ev->weight = r->evicted_weights[i];
			ev->cutoff_pos = r->cutoff_pos;
			ev->cutoff_value = r->cutoff_value;
			atomic_store_explicit(&log->evicted_at[ev->pos], rec->step,
			                      memory_order_relaxed);
		}
		log->ev_until[rec->step] = log->n_ev;
	}
	s->promoted_pos = promoted(tl, rec->step);
}

/* Every allocation of the timeline's own goes through here, so that
 * timeline_memory can tell. */
static void *tl_alloc(struct timeline *tl, size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size);
	if (p)
		tl->bytes += (count ? count : 1) * size;
	return p;
}

static bool take_snapshots(struct timeline *tl, struct engine *e, int t)
{
	if (t % tl->every == 0) {
		const size_t size = engine_snapshot_size_of(e, tl->lite_mask);
		void *buf = tl_alloc(tl, size, 1);
		if (!buf)
			return false;
		engine_snapshot_of(e, tl->lite_mask, buf);
		tl->snap[t / tl->every] = buf;
	}
	if (t % tl->full_every == 0) {
		double *scores = tl_alloc(tl, (size_t)t, sizeof *scores);
		if (!scores)
			return false;
		if (t > 0) { /* at step 0 the full cache holds nothing */
			engine_sync_full(e);
			memcpy(scores, engine_scores(e, POLICY_FULL), (size_t)t * sizeof *scores);
		}
		tl->full_snap[t / tl->full_every] = scores;
	}
	return true;
}

/* The engine that runs the scene once for the build, with blocks of the
 * full cache as large as pay, and called off with the build; SOLO: on one
 * thread (a pool's builds keep every core busy already). */
static bool begin(struct timeline *tl, bool solo)
{
	tl->run = engine_new_rows(tl->sc, &tl->want, tl->plans, tl->mask, 0);
	if (!tl->run)
		return false;
	if (solo)
		engine_solo(tl->run);
	engine_lazy_full(tl->run);
	engine_cancel_on(tl->run, &tl->stop);
	return true;
}

/* Steps 1 .. n, each published (built) when its summary and the snapshots
 * after it are in; stops early when asked to (a step computed after that
 * is never published: the engine may have cut its work short). Frees the
 * builder's engine and sets the state. */
static void build(struct timeline *tl, bool solo)
{
	struct step_record rec;
	bool ok = begin(tl, solo);
	while (ok && !atomic_load_explicit(&tl->stop, memory_order_relaxed) &&
	       engine_step(tl->run, &rec) &&
	       !atomic_load_explicit(&tl->stop, memory_order_relaxed)) {
		summarise(tl, &rec);
		if (!take_snapshots(tl, tl->run, rec.step)) {
			ok = false;
			break;
		}
		atomic_store_explicit(&tl->built, rec.step, memory_order_release);
	}
	engine_free(tl->run);
	tl->run = NULL;
	atomic_store(&tl->state, ok ? BUILD_DONE : BUILD_FAILED);
}

static void *build_main(void *arg)
{
	build(arg, false);
	return NULL;
}

/* A timeline with everything allocated but the snapshots after step 0;
 * the engine that builds it comes with the build (begin). */
static struct timeline *prepare(const struct scene *sc, const struct budget *b,
                                struct engine_plans *plans, int every, int full_every,
                                unsigned shown)
{
	struct timeline *tl = calloc(1, sizeof *tl);
	if (!tl)
		return NULL;
	tl->bytes = sizeof *tl;
	tl->sc = sc;
	tl->want = *b;
	tl->b = policy_budget_of(sc, b);
	tl->plans = plans;
	tl->n = sc->n;
	atomic_init(&tl->built, 0);
	atomic_init(&tl->state, BUILD_RUNNING);
	atomic_init(&tl->stop, false);
	/* The policies shown, and those the screen always shows (report.h). */
	tl->mask = report_policies_run(shown);
	tl->lite_mask = tl->mask & ~ENGINE_POLICY(POLICY_FULL);
	const size_t n = (size_t)sc->n;
	tl->sum = tl_alloc(tl, n + 1, sizeof *tl->sum);
	bool ok = tl->sum != NULL;
	for (int p = 0; p < POLICY_COUNT && ok; p++) {
		struct policy_log *log = &tl->log[p];
		log->ev = tl_alloc(tl, p == POLICY_FULL ? 0 : n, sizeof *log->ev);
		log->ev_until = tl_alloc(tl, n + 1, sizeof *log->ev_until);
		/* Zero bytes are a zero atomic_int on every machine we build
		 * for; calloc gives them. */
		log->evicted_at = tl_alloc(tl, n, sizeof *log->evicted_at);
		ok = log->ev && log->ev_until && log->evicted_at;
	}
	if (ok) {
		tl->e = engine_new_rows(sc, b, plans, tl->mask, SEEK_BLOCK_ROWS);
		tl->lite = engine_new_rows(sc, b, plans, tl->lite_mask, 0);
		ok = tl->e && tl->lite;
	}
	if (!ok)
		goto fail;
	choose_intervals(tl, (double)tl->bytes + (double)engine_memory(tl->e) +
	                             (double)engine_memory(tl->lite));
	if (every > 0)
		tl->every = every < sc->n ? every : sc->n;
	if (full_every > 0 || every > 0) {
		const int f = full_every > 0 ? full_every : tl->full_every;
		tl->full_every = (f + tl->every - 1) / tl->every * tl->every;
	}
	tl->snap = tl_alloc(tl, n / (size_t)tl->every + 1, sizeof *tl->snap);
	tl->full_snap = tl_alloc(tl, n / (size_t)tl->full_every + 1, sizeof *tl->full_snap);
	if (!tl->snap || !tl->full_snap)
		goto fail;
	/* Step 0 is built before anyone looks: the caches that evict are
	 * empty, as they are in the engine that seeks. */
	if (!take_snapshots(tl, tl->lite, 0))
		goto fail;
	return tl;
fail:
	timeline_free(tl);
	return NULL;
}

double timeline_predict_memory(const struct scene *sc, const struct budget *b)
{
	return timeline_predict_memory_only(sc, b, ENGINE_ALL_POLICIES);
}

double timeline_predict_memory_only(const struct scene *sc, const struct budget *b, unsigned shown)
{
	const double n = sc->n;
	const unsigned mask = report_policies_run(shown);
	const unsigned lite_mask = mask & ~ENGINE_POLICY(POLICY_FULL);
	/* What prepare allocates before the snapshots: the summaries, each
	 * policy's evictions and indexes, and the two engines that seek. */
	double fixed = sizeof(struct timeline) + (n + 1) * sizeof(struct step_summary);
	for (int p = 0; p < POLICY_COUNT; p++)
		fixed += (p == POLICY_FULL ? 1 : n) * sizeof(struct eviction) +
		         (n + 1) * sizeof(int) + n * sizeof(atomic_int);
	fixed += engine_predict_memory(sc, b, mask, SEEK_BLOCK_ROWS) +
	         engine_predict_memory(sc, b, lite_mask, 0);
	struct timeline tl = {.sc = sc, .want = *b, .mask = mask};
	choose_intervals(&tl, fixed);
	/* The snapshots the intervals give: the caches that evict every
	 * `every` steps (at most B + 1 entries each, the scene for one that grows), the full cache's t
	 * scores every `full_every` steps. */
	const double caps = engine_caches_cap(sc, b, mask);
	const double snaps = floor(n / tl.every) + 1, full = floor(n / tl.full_every);
	double bytes = fixed + 2 * (snaps + 1) * sizeof(void *);
	bytes += snaps * (caps * (sizeof(int) + sizeof(double)) + (POLICY_COUNT - 1) * 64);
	bytes += tl.full_every * full * (full + 1) / 2 * sizeof(double);
	/* And the engine that builds it, while it does. */
	return bytes + engine_predict_memory(sc, b, mask, 0);
}

/* TL (NULL: out of memory) built on this thread; NULL if the build ran
 * out of memory. */
static struct timeline *build_here(struct timeline *tl)
{
	if (!tl)
		return NULL;
	build(tl, false);
	if (timeline_failed(tl)) {
		timeline_free(tl);
		return NULL;
	}
	return tl;
}

struct timeline *timeline_new(const struct scene *sc, const struct budget *b,
                              struct engine_plans *plans)
{
	return timeline_new_only(sc, b, plans, ENGINE_ALL_POLICIES);
}

struct timeline *timeline_new_only(const struct scene *sc, const struct budget *b,
                                   struct engine_plans *plans, unsigned shown)
{
	return build_here(prepare(sc, b, plans, 0, 0, shown));
}

struct timeline *timeline_new_every(const struct scene *sc, const struct budget *b, int every,
                                    int full_every)
{
	return build_here(prepare(sc, b, NULL, every, full_every, ENGINE_ALL_POLICIES));
}

struct timeline *timeline_start(const struct scene *sc, const struct budget *b)
{
	struct timeline *tl = prepare(sc, b, NULL, 0, 0, ENGINE_ALL_POLICIES);
	if (tl && pthread_create(&tl->thread, NULL, build_main, tl) == 0) {
		tl->threaded = true;
		return tl;
	}
	/* No thread to spare: built here and now, as timeline_new does. */
	return build_here(tl);
}

int timeline_built(const struct timeline *tl)
{
	return atomic_load_explicit(&tl->built, memory_order_acquire);
}

bool timeline_building(const struct timeline *tl)
{
	return atomic_load(&tl->state) == BUILD_RUNNING;
}

bool timeline_failed(const struct timeline *tl)
{
	return atomic_load(&tl->state) == BUILD_FAILED;
}

void timeline_free(struct timeline *tl)
{
	if (!tl)
		return;
	/* A build still going stops after its step; its thread is joined
	 * (a timeline from timeline_new has none). */
	atomic_store(&tl->stop, true);
	if (tl->threaded)
		pthread_join(tl->thread, NULL);
	engine_free(tl->run);
	if (tl->snap)
		for (int i = 0; i <= tl->n / tl->every; i++)
			free(tl->snap[i]);
	if (tl->full_snap)
		for (int i = 0; i <= tl->n / tl->full_every; i++)
			free(tl->full_snap[i]);
	free(tl->snap);
	free(tl->full_snap);
	engine_free(tl->e);
	engine_free(tl->lite);
	free(tl->sum);
	for (int p = 0; p < POLICY_COUNT; p++) {
		free(tl->log[p].ev);
		free(tl->log[p].ev_until);
		free(tl->log[p].evicted_at);
	}
	free(tl);
}

void timeline_intervals(const struct timeline *tl, int *every, int *full_every)
{
	*every = tl->every;
	*full_every = tl->full_every;
}

const struct scene *timeline_scene(const struct timeline *tl)
{
	return tl->sc;
}

const struct budget *timeline_budget(const struct timeline *tl)
{
	return &tl->want;
}

int timeline_steps(const struct timeline *tl)
{
	return tl->n;
}

const struct step_summary *timeline_summary(const struct timeline *tl, int t)
{
	return &tl->sum[t];
}

int timeline_eviction_count(const struct timeline *tl, enum policy_id p)
{
	return tl->log[p].ev_until[timeline_built(tl)];
}

const struct eviction *timeline_eviction(const struct timeline *tl, enum policy_id p, int i)
{
	return &tl->log[p].ev[i];
}

int timeline_evictions_until(const struct timeline *tl, enum policy_id p, int t)
{
	return tl->log[p].ev_until[t];
}

int timeline_evicted_at(const struct timeline *tl, enum policy_id p, int pos)
{
	const int at = evicted_at(tl, p, pos);
	return at <= timeline_built(tl) ? at : 0;
}

const struct eviction *timeline_eviction_of(const struct timeline *tl, enum policy_id p, int pos,
                                            int t)
{
	const int at = evicted_at(tl, p, pos);
	if (at == 0 || at > t)
		return NULL;
	const struct cache_summary *cs = &tl->sum[at].c[p];
	for (int i = 0; i < cs->n_evicted; i++) {
		const struct eviction *ev = &tl->log[p].ev[cs->first_evict + i];
		if (ev->pos == pos)
			return ev;
	}
	return NULL;
}

double timeline_weight(const struct timeline *tl, enum policy_id p, int s, int j)
{
	if (s < 1 || s > tl->n || j < 0 || j > s - 1)
		return -1.0;
	const int at = evicted_at(tl, p, j);
	if (at != 0 && at < s)
		return -1.0;
	const struct cache_summary *cs = &tl->sum[s].c[p];
	return engine_weight(engine_logit(tl->sc, s - 1, j), cs->max, cs->sum);
}

enum region timeline_region(const struct timeline *tl, enum policy_id p, int t, int pos)
{
	if (pos < 0 || pos >= t)
		return REGION_NONE;
	const int at = evicted_at(tl, p, pos);
	if (at != 0 && at <= t)
		return REGION_EVICTED;
	return policies[p]->region(&tl->b, t, pos) == POLICY_REGION_RECENT ? REGION_RECENT
	                                                                   : REGION_OLD;
}

size_t timeline_memory(const struct timeline *tl)
{
	return tl->bytes + engine_memory(tl->e) + engine_memory(tl->lite);
}

struct timeline_pool {
	int count;
	struct timeline **tls;
	bool *taken;   /* [count]: a thread has taken the timeline up */
	int next;      /* the lowest index that may not be taken */
	int preferred; /* taken up next, or -1 */
	bool solo;     /* the builds' engines keep to their own thread */
	int threads;   /* started */
	pthread_t *thread;
	pthread_mutex_t lock;
};

/* The timeline a pool's thread builds next, or -1 when none is left. */
static int pool_take(struct timeline_pool *pool)
{
	pthread_mutex_lock(&pool->lock);
	int i = pool->preferred;
	pool->preferred = -1;
	if (i < 0 || pool->taken[i]) {
		while (pool->next < pool->count && pool->taken[pool->next])
			pool->next++;
		i = pool->next < pool->count ? pool->next : -1;
	}
	if (i >= 0)
		pool->taken[i] = true;
	pthread_mutex_unlock(&pool->lock);
	return i;
}

static void *pool_main(void *arg)
{
	struct timeline_pool *pool = arg;
	for (int i; (i = pool_take(pool)) >= 0;) {
		struct timeline *tl = pool->tls[i];
		if (atomic_load(&tl->stop))
			continue;
		build(tl, pool->solo);
	}
	return NULL;
}

static int online_cores(void)
{
	const long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

struct timeline_pool *timeline_pool_start(const struct scene *scenes, int count,
                                          const struct budget *b, struct engine_plans *plans,
                                          int first)
{
	return timeline_pool_start_only(scenes, count, b, plans, first, ENGINE_ALL_POLICIES);
}

struct timeline_pool *timeline_pool_start_only(const struct scene *scenes, int count,
                                               const struct budget *b, struct engine_plans *plans,
                                               int first, unsigned shown)
{
	struct timeline_pool *pool = calloc(1, sizeof *pool);
	if (!pool)
		return NULL;
	if (pthread_mutex_init(&pool->lock, NULL) != 0) {
		free(pool);
		return NULL;
	}
	pool->count = count;
	pool->preferred = first >= 0 && first < count ? first : -1;
	pool->tls = calloc((size_t)count, sizeof *pool->tls);
	pool->taken = calloc((size_t)count, sizeof *pool->taken);
	const int cores = online_cores(), want = count < cores ? count : cores;
	pool->thread = calloc((size_t)want, sizeof *pool->thread);
	bool ok = pool->tls && pool->taken && pool->thread;
	for (int i = 0; ok && i < count; i++)
		ok = (pool->tls[i] = prepare(&scenes[i], b, plans, 0, 0, shown)) != NULL;
	/* One build may use its engine's second thread; several fill the
	 * cores between them. */
	pool->solo = want > 1;
	for (int i = 0; ok && i < want; i++)
		if (pthread_create(&pool->thread[i], NULL, pool_main, pool) == 0)
			pool->threads++;
	if (ok && pool->threads == 0)
		pool_main(pool); /* no thread to spare: built here and now */
	if (!ok) {
		timeline_pool_free(pool);
		return NULL;
	}
	return pool;
}

struct timeline *timeline_pool_get(const struct timeline_pool *pool, int i)
{
	return pool->tls[i];
}

void timeline_pool_prefer(struct timeline_pool *pool, int i)
{
	pthread_mutex_lock(&pool->lock);
	if (i >= 0 && i < pool->count && !pool->taken[i])
		pool->preferred = i;
	pthread_mutex_unlock(&pool->lock);
}

void timeline_pool_free(struct timeline_pool *pool)
{
	if (!pool)
		return;
	for (int i = 0; pool->tls && i < pool->count; i++)
		if (pool->tls[i])
			atomic_store(&pool->tls[i]->stop, true);
	for (int i = 0; i < pool->threads; i++)
		pthread_join(pool->thread[i], NULL);
	for (int i = 0; pool->tls && i < pool->count; i++)
		timeline_free(pool->tls[i]);
	pthread_mutex_destroy(&pool->lock);
	free(pool->tls);
	free(pool->taken);
	free(pool->thread);
	free(pool);
}
