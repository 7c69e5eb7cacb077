/*
 * engine: design §2, one step at a time, for every policy's cache.
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
 * into its own step state, so that their records stay as they were) whose
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
 *
 * This file makes and frees engines and steps them; the caches that evict,
 * the full cache, the figures, snapshots and the second thread have files
 * of their own (the list is in engine_impl.h).
 */
#include "h2o/engine.h"

#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"
#include "h2o/engine_replay.h"
#include "h2o/heads.h"
#include "h2o/plan.h"
#include "h2o/scene.h"

/* Multiply-adds of one cache that evicts, per step, from which a step of
 * every policy gives half of them to the helper. */
#define STEP_SPLIT_WORK 8192L

/* What a policy that does not run shows: nothing. */
static const int no_positions[1];
static const double no_scores[1];

/* How many query heads share a cache of policy P of the view SC
 * (heads_cache_group): 1 for a scene of its own. */
static int cache_group_of(const struct scene *sc, const struct budget *b, enum policy_id p)
{
	return sc->parent ? heads_cache_group(sc->parent, &b->settings, p) : 1;
}

struct engine *engine_new_only(const struct scene *sc, const struct budget *b, unsigned policies)
{
	return engine_new_rows(sc, b, NULL, policies, 0);
}

struct engine *engine_new_rows(const struct scene *sc, const struct budget *b,
                               struct engine_plans *plans, unsigned policies, int block_rows)
{
	struct engine *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->sc = sc;
	e->want = *b;
	e->b = policy_budget_of(sc, b);
	e->mask = policies & ENGINE_ALL_POLICIES;
	int cap = engine_cache_cap(sc, b);
	for (int p = 0; p < POLICY_COUNT; p++)
		if (p != POLICY_FULL && runs(e, p) && engine_policy_cap(sc, b, p) > cap)
			cap = engine_policy_cap(sc, b, p);
	bool ok = e->mask != 0;
	if (ok && runs(e, POLICY_FULL))
		ok = full_init(&e->f, sc, block_rows);
	e->ahead = cache_ahead_of(sc, cap);
	for (int p = 0; p < POLICY_COUNT && ok; p++)
		if (p != POLICY_FULL && runs(e, p))
			ok = cache_init(&e->c[p], engine_policy_cap(sc, b, p), e->ahead, sc,
			                cache_group_of(sc, b, (enum policy_id)p)) &&
			     cache_init_rule(&e->c[p], (enum policy_id)p, sc);
	/* A layer-wide rule of a head view follows its layer's plan: PLANS,
	 * shared by every head, or the engine's own. It is made (or
	 * found made) at the first step, by the thread that steps. */
	for (int p = 0; p < POLICY_COUNT && ok; p++)
		if (p != POLICY_FULL && runs(e, p) && sc->parent &&
		    engine_plan_needed(sc->parent, (enum policy_id)p))
			e->plan_wanted |= ENGINE_POLICY(p);
	if (ok && e->plan_wanted && !plans) {
		e->own_plans = engine_plans_new(sc->parent, b);
		ok = e->own_plans != NULL;
	}
	e->plans = plans ? plans : e->own_plans;
	if (!ok) {
		engine_free(e);
		return NULL;
	}
	return e;
}

/* A cache never holds more than budget + interval tokens (or the prompt),
 * nor more than the scene has: a huge budget is not trusted with memory. */
int engine_cache_cap(const struct scene *sc, const struct budget *b)
{
	const struct policy_budget pb = policy_budget_of(sc, b);
	long cap = (long)b->heavy + b->recent + policy_interval(&pb);
	cap = cap > b->prompt ? cap : b->prompt;
	return (int)(cap < sc->n ? cap : sc->n);
}

int engine_policy_cap(const struct scene *sc, const struct budget *b, enum policy_id p)
{
	if (policies[p]->grows)
		return sc->n;
	/* A policy whose caches differ by layer (pyramidkv-win) holds up to
	 * its capacity, the largest layer's, and appends one before it
	 * evicts. */
	const struct policy_budget pb = policy_budget_of(sc, b);
	const int cap = engine_cache_cap(sc, b), own = policy_capacity(p, &pb);
	if (own < 0 || own + 1 <= cap)
		return cap;
	return own + 1 < sc->n ? own + 1 : sc->n;
}

double engine_caches_cap(const struct scene *sc, const struct budget *b, unsigned mask)
{
	const double cap = engine_cache_cap(sc, b);
	double caps = 0;
	for (int p = 0; p < POLICY_COUNT; p++)
		if (p != POLICY_FULL && (mask & ENGINE_POLICY(p)))
			caps += policies[p]->grows ? (cap + sc->n) / 2
			                           : engine_policy_cap(sc, b, (enum policy_id)p);
	return caps;
}

struct engine *engine_new(const struct scene *sc, const struct budget *b)
{
	return engine_new_only(sc, b, ENGINE_ALL_POLICIES);
}

void engine_solo(struct engine *e)
{
	e->h.off = true;
}

void engine_share_off(struct engine *e)
{
	e->no_share = true;
}

void engine_cancel_on(struct engine *e, const atomic_bool *stop)
{
	e->cancel = stop;
}

void engine_free(struct engine *e)
{
	if (!e)
		return;
	pool_stop(&e->h);
	for (int p = 0; p < POLICY_COUNT; p++)
		cache_done(&e->c[p]);
	full_done(&e->f);
	engine_plans_free(e->own_plans);
	free(e);
}

const char *engine_policy_refused(const struct scene *scene, enum policy_id p)
{
	if (scene->mode == SCENE_ATTENTION && policy_reads_keys(p))
		return "an attention scene, which has no keys for it to read";
	if (scene->model_path && policy_reads_queries(p) && !scene->q_pre)
		return "a model scene loaded without its queries before RoPE, which it reads "
		       "(choose it with --policies when the scene loads)";
	return NULL;
}

unsigned engine_policies_for(const struct scene *scene, unsigned mask)
{
	mask = mask ? mask & ENGINE_ALL_POLICIES : ENGINE_ALL_POLICIES;
	for (int p = 0; p < POLICY_COUNT; p++)
		if (engine_policy_refused(scene, (enum policy_id)p))
			mask &= ~ENGINE_POLICY(p);
	return mask;
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
	return p == POLICY_FULL ? e->f.len : state_of(&e->c[p], e->t)->klen;
}

const int *engine_positions(const struct engine *e, enum policy_id p)
{
	if (!runs(e, p))
		return no_positions;
	return p == POLICY_FULL ? e->f.iota : state_kept(state_of(&e->c[p], e->t));
}

const double *engine_scores(const struct engine *e, enum policy_id p)
{
	if (!runs(e, p))
		return no_scores;
	return p == POLICY_FULL ? e->f.score : state_kept_scores(state_of(&e->c[p], e->t));
}

/* Steps from .. from + count - 1 of the caches that evict, in two parts
 * (order[part][0 .. n[part] - 1], policy order), each cache all its steps
 * in order, then (OUTPUTS) their outputs. The caches do not depend on
 * each other but through shared steps (SHARE): a step of a cache copies
 * the weights of the full cache or of a cache before it in its part. */
struct run_job {
	struct engine *e;
	int order[2][POLICY_COUNT], n[2];
	int from, count;
	bool outputs, share;
	/* Steps may be the full cache's (may_alias). */
	bool alias;
};

/* Whether the caches that evict A and B held the same positions after step
 * S - 1: the same length and the same positions, the ends compared
 * first. */
static bool same_positions(const struct engine *e, int a, int b, int s)
{
	const struct step_state *x = state_of(&e->c[a], s - 1), *y = state_of(&e->c[b], s - 1);
	const int n = x->klen;
	if (n != y->klen)
		return false;
	if (n == 0)
		return true;
	const int *xp = state_kept(x), *yp = state_kept(y);
	return xp[0] == yp[0] && xp[n - 1] == yp[n - 1] &&
	       memcmp(xp, yp, (size_t)n * sizeof *xp) == 0;
}

/* Whether cache I held every position before step S, as the full cache
 * does (ascending distinct positions below S - 1, S - 1 of them), and the
 * full cache's weights of step S are there to copy: it runs, its block
 * holds the step, and it has one query head per key/value head (a grouped
 * cache's scores add its group's mean weights, which the full cache does
 * not compute). */
static bool follows_full(const struct engine *e, int i, int s)
{
	return runs(e, POLICY_FULL) && e->c[i].group == 1 && full_holds(&e->f, s - 1) &&
	       state_of(&e->c[i], s - 1)->klen == s - 1;
}

/* The lead of cache order[part][k] at step S (cache_step): the full cache,
 * or the first cache before it in its part that computed step S itself,
 * held the same positions and weighs the same query heads; else -1. */
static int lead_of(const struct run_job *job, int part, int k, int s)
{
	const struct engine *e = job->e;
	const int i = job->order[part][k];
	if (!job->share)
		return -1;
	if (follows_full(e, i, s))
		return POLICY_FULL;
	for (int j = 0; j < k; j++) {
		const int l = job->order[part][j];
		if (state_of(&e->c[l], s)->lead < 0 && e->c[l].group == e->c[i].group &&
		    same_positions(e, i, l, s))
			return l;
	}
	return -1;
}

/* Whether cache I's step S, led by LEAD, is the full cache's (engine_cache.c,
 * "Steps of the full cache"): it holds every position and copies the full
 * cache's weights, and its rule evicts nothing from then on, being one
 * that grows after the prompt, past it. The job's steps are all in the
 * full cache's block and its scores are kept step by step (not lazy), so
 * a step's record can read them. */
static bool may_alias(const struct run_job *job, int i, int s, int lead)
{
	const struct engine *e = job->e;
	return job->alias && lead == POLICY_FULL && policies[i]->grows &&
	       (e->b.prompt < 1 || s > e->b.prompt);
}

static void run_part(void *arg, int part)
{
	const struct run_job *job = arg;
	struct engine *e = job->e;
	for (int k = 0; k < job->n[part]; k++) {
		const int i = job->order[part][k];
		struct cache *c = &e->c[i];
		if (job->outputs)
			cache_outputs_begin(c, job->from, job->count);
		for (int s = job->from; s < job->from + job->count; s++) {
			const int lead = lead_of(job, part, k, s);
			cache_step(e, (enum policy_id)i, c, s, lead, may_alias(job, i, s, lead));
		}
		if (job->outputs)
			cache_outputs_end(e, c, job->count);
	}
}

/* The caches that evict into JOB's parts, in policy order: with TWO, in
 * two parts of about equal work, where caches that held the same positions
 * before the job's first step go together (so that they share it); else
 * all in the first. How many there are. */
static int split_caches(const struct engine *e, struct run_job *job, bool two)
{
	int count = 0, part_of[POLICY_COUNT];
	double load[2] = {0, 0};
	const int s = job->from;
	for (int i = 0; i < POLICY_COUNT; i++) {
		if (i == POLICY_FULL || !runs(e, i))
			continue;
		count++;
		int part = load[1] < load[0];
		double work = 1.0;
		if (job->share && follows_full(e, i, s)) {
			work = 0.25; /* copies */
		} else if (job->share) {
			for (int l = 0; l < i; l++)
				if (l != POLICY_FULL && runs(e, l) &&
				    e->c[l].group == e->c[i].group && same_positions(e, i, l, s)) {
					part = part_of[l];
					work = 0.25;
					break;
				}
		}
		part = two ? part : 0;
		part_of[i] = part;
		load[part] += work;
		job->order[part][job->n[part]++] = i;
	}
	return count;
}

/* The plans the layer-wide caches follow, got at the first step; false
 * when memory ran out making one (the engine then goes no further). */
static bool plans_ready(struct engine *e)
{
	for (int p = 0; p < POLICY_COUNT && e->plan_wanted; p++) {
		if (!(e->plan_wanted & ENGINE_POLICY(p)))
			continue;
		e->c[p].plan = engine_plan_get(e->plans, e->sc->view_layer, (enum policy_id)p);
		if (!e->c[p].plan)
			return false;
		e->plan_wanted &= ~ENGINE_POLICY(p);
	}
	return true;
}

/*
 * One step; FIGURES: the outputs and figures too (a replay skips them).
 * The caches that evict compute the steps after e->live in batches: with
 * outputs, as many steps as their rings hold (AHEAD), handed out one by
 * one by the calls that follow; else one step.
 */
static bool step(struct engine *e, struct step_record *rec, bool figures)
{
	const struct scene *sc = e->sc;
	if (e->t >= sc->n || !plans_ready(e))
		return false;
	const int s = e->t + 1;
	if (e->live < s) {
		struct run_job job = {.e = e, .from = s, .count = 1};
		job.outputs = figures && sc->v;
		job.share = !e->no_share;
		int evicting = 0;
		for (int i = 0; i < POLICY_COUNT; i++)
			evicting += i != POLICY_FULL && runs(e, i);
		/* Ahead only when stepping on from the last step handed out:
		 * a step after a jump or a replay (a seek) is likely alone. */
		if (evicting > 0 && job.outputs && e->streak == e->t)
			job.count = min_int(e->ahead, sc->n - e->t);
		/* The full cache's block first, for the caches that copy its
		 * weights. */
		if (job.share && evicting > 0 && runs(e, POLICY_FULL))
			full_reach(e, s - 1);
		/* Steps that are the full cache's need all of the job's in its
		 * block; a cache whose last step was one and whose next may
		 * not be gets its positions and scores written out first, while
		 * the full cache's scores are still those of step s - 1. */
		job.alias = job.share && runs(e, POLICY_FULL) && !e->f.lazy &&
		            full_holds(&e->f, s - 1) && full_holds(&e->f, s - 2 + job.count);
		for (int i = 0; !job.alias && i < POLICY_COUNT; i++)
			if (i != POLICY_FULL && runs(e, i) &&
			    state_of(&e->c[i], s - 1)->alias_pos) {
				engine_sync_full(e);
				cache_unalias(e, &e->c[i], s - 1);
			}
		/* The caches that evict do not depend on each other: with
		 * the full cache beside them (a run over the whole scene,
		 * where the helper is around), half of them on the helper
		 * when they are large enough. */
		const long cap = engine_cache_cap(sc, &e->want);
		const bool two = runs(e, POLICY_FULL) && evicting >= 2 &&
		                 job.count * cap * sc->dim >= STEP_SPLIT_WORK;
		split_caches(e, &job, two);
		if (two)
			pool_run_two(&e->h, run_part, &job);
		else
			run_part(&job, 0);
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
	 * after every cache has stepped; a step that copied its weights
	 * copies its lead's figures of them, measured first. */
	const struct cache_record *full = runs(e, POLICY_FULL) ? &rec->c[POLICY_FULL] : NULL;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < POLICY_COUNT; i++) {
			if (!runs(e, i))
				continue;
			const int lead = i == POLICY_FULL ? -1 : state_of(&e->c[i], s)->lead;
			if ((lead >= 0) != (pass == 1))
				continue;
			const struct cache_record *same = lead >= 0 ? &rec->c[lead] : NULL;
			/* Neither evicted: both keep what they attended. */
			const bool kept = same && rec->c[i].n_evicted == 0 && same->n_evicted == 0;
			figures_measure(e, (enum policy_id)i, &rec->c[i], full, same, kept);
		}
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
	if (t <= e->t || !plans_ready(e))
		return;
	e->streak = -1;
	const long cap = engine_cache_cap(e->sc, &e->want);
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
	/* No shared steps: each cache runs all its steps before the next
	 * one starts, past what its ring of steps keeps. */
	struct run_job job = {.e = e, .from = e->t + 1, .count = t - e->t};
	split_caches(e, &job, true);
	pool_run_two(&e->h, run_part, &job);
	e->t = e->live = t;
}

/* The bytes of a cache's policy_memo (engine_cache_init.c's memo_init). */
static size_t memo_bytes(size_t dim, size_t group, size_t cap)
{
	const size_t slots = memo_slots(cap);
	return sizeof(struct policy_memo) +
	       POLICY_MEMO_DOUBLES(dim, group, slots) * sizeof(double) + group * sizeof(int) +
	       slots;
}

/* The bytes of an engine of SC running the policies of MASK, with a full
 * cache of blocks of ROWS steps and caches that evict of CAP entries and
 * rings of STATES steps: what its init functions allocate. */
static size_t memory_of(const struct scene *sc, const struct budget *b, unsigned mask, size_t rows,
                        size_t states)
{
	const size_t n = (size_t)sc->n, dim = (size_t)sc->dim;
	size_t bytes = sizeof(struct engine);
	if (mask & ENGINE_POLICY(POLICY_FULL)) {
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
		if (i == POLICY_FULL || !(mask & ENGINE_POLICY(i)))
			continue;
		const size_t cap = (size_t)engine_policy_cap(sc, b, (enum policy_id)i);
		const struct policy *pol = policies[i];
		/* The query heads sharing its cache (1: a copy per query head). */
		const size_t group = (size_t)cache_group_of(sc, b, (enum policy_id)i);
		/* The rule's own: observed weights, a row and its scores,
		 * zeros; its ranks. */
		if (pol->observe_window > 0)
			bytes += (group + 3) * cap * sizeof(double);
		if (pol->ranks_own)
			bytes += cap * sizeof(double);
		if (pol->per_kv_head)
			bytes += cap * sizeof(int);
		/* Its anchor, and what it keeps by slot (vector scenes; the
		 * rule reads the keys from their slots). */
		if (pol->by_keys && sc->mode == SCENE_VECTOR)
			bytes += dim * sizeof(double) +
			         (pol->by_queries && sc->q_pre
			                  ? 0
			                  : memo_bytes(dim, pol->by_queries ? group : 0, cap));
		/* Its query rows' pointers and room (vector scenes). */
		if (pol->by_queries && sc->mode == SCENE_VECTOR)
			bytes += group * sizeof(double *) +
			         POLICY_WORK_DOUBLES(dim, cap) * sizeof(double);
		/* Step states; marks; outputs; a batch's positions and weights. */
		bytes += states * (sizeof(struct step_state) +
		                   cap * (3 * sizeof(int) + 5 * sizeof(double))) +
		         cap + AHEAD * dim * sizeof(double);
		if (states > 2) /* u_pos, uk, wt */
			bytes += (cap + AHEAD) * (sizeof(int) + AHEAD * sizeof(double)) +
			         cap * sizeof(int);
		/* Slots, free slots, key rows, the lookahead's logits and
		 * queries. */
		/* A grouped cache: each step's mean weights, the other heads'
		 * weights, and a lookahead per head of the group. */
		if (group > 1)
			bytes += (states + group) * cap * sizeof(double);
		if (sc->mode == SCENE_VECTOR) /* and the key norms */
			bytes += cap * 2 * sizeof(int) + 2 * cap * sizeof(double) +
			         (cap * dim + group * (cap * KERNEL_LANES + KERNEL_LANES * dim)) *
			                 sizeof(double);
	}
	return bytes;
}

size_t engine_memory(const struct engine *e)
{
	size_t states = 0;
	for (int i = 0; i < POLICY_COUNT; i++)
		if (i != POLICY_FULL && runs(e, i))
			states = (size_t)e->c[i].ring_len;
	return memory_of(e->sc, &e->want, e->mask, (size_t)e->f.rows, states);
}

double engine_predict_memory(const struct scene *sc, const struct budget *b, unsigned policies,
                             int block_rows)
{
	int cap = engine_cache_cap(sc, b);
	for (int p = 0; p < POLICY_COUNT; p++)
		if (p != POLICY_FULL && (policies & ENGINE_POLICY(p)) &&
		    engine_policy_cap(sc, b, p) > cap)
			cap = engine_policy_cap(sc, b, p);
	const int ahead = cache_ahead_of(sc, cap);
	const int rows = policies & ENGINE_POLICY(POLICY_FULL) ? full_rows_of(sc, block_rows) : 0;
	return (double)memory_of(sc, b, policies & ENGINE_ALL_POLICIES, (size_t)rows,
	                         (size_t)ahead + 1);
}
