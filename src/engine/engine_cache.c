/*
 * engine_cache: the caches that evict (see engine.c's header), stepped;
 * engine_cache_init.c makes and frees them.
 *
 * Each holds its positions, their scores and, for vector scenes, its own
 * copies of their key rows in slots; each step writes its own state in a
 * ring, so the records of the steps computed ahead stay as they were.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"
#include "h2o/heads.h"
#include "h2o/scene.h"

/* Steps ahead whose rows a step asks memory for (prefetch_rows). */
#define PREFETCH_STEPS 16

/* ---- stepping ---------------------------------------------------------- */

/* The L2 norm of the DIM numbers at K: their squares summed in index order
 * from 0.0, and its square root (policy_cache.key_norm). */
static double key_norm(const double *k, int dim)
{
	double s = 0.0;
	for (int i = 0; i < dim; i++)
		s += k[i] * k[i];
	return sqrt(s);
}

/*
 * The logits of P's query in LA against every used slot of C, where the key
 * of P has just been put into slot S: from the lookahead when it holds P
 * (after filling in slot S for P and the queries after it), else from a new
 * batch of lookahead that starts at P.
 */
static const double *lookahead_row(const struct scene *sc, const struct cache *c,
                                   struct lookahead *la, int p, int s)
{
	const size_t dim = (size_t)sc->dim;
	const int r = p - la->first;
	if (la->count > 0 && r >= 0 && r < la->count) {
		double l8[KERNEL_LANES];
		kernel_key_logits8(la->qt, sc->dim, sc->k + (size_t)p * dim, sc->scale, l8);
		for (int i = r; i < la->count; i++)
			la->logit[(size_t)i * la->stride + (size_t)s] = l8[i];
		return la->logit + (size_t)r * la->stride;
	}
	la->first = p;
	la->count = min_int(KERNEL_LANES, sc->n - p);
	for (int i = 0; i < KERNEL_LANES; i++) {
		if (i < la->count)
			kernel_put_key(la->qt, i, la->q + (size_t)(p + i) * dim, sc->dim);
		else /* zeros: those lanes' logits go unread */
			for (size_t j = 0; j < dim; j++)
				la->qt[j * KERNEL_LANES + (size_t)i] = 0.0;
	}
	kernel_rows_logits8(c->keys, c->hi, sc->dim, la->qt, sc->scale, la->logit, la->stride);
	return la->logit;
}

/* Query head I's logits of step P over F's positions into X. */
static void head_logits(const struct scene *sc, struct cache *c, int i, int p, int slot,
                        const struct step_state *f, double *x)
{
	if (sc->mode == SCENE_VECTOR) {
		const double *logit = lookahead_row(sc, c, &c->la[i], p, slot);
		for (int j = 0; j < f->len; j++)
			x[j] = logit[c->slot[j]];
	} else {
		const double *a = c->attn[i] + scene_attn_offset(p);
		for (int j = 0; j < f->len; j++)
			x[j] = log(a[f->pos[j]]);
	}
}

/*
 * Design §2 "Grouped scores": every query head of the group computes its
 * softmax over the positions held (the view's own into F's weights), and
 * each score adds the mean of their weights, summed over the group's heads
 * in order from 0.0 and divided by the group's size.
 */
static void group_softmax_scores(const struct scene *sc, struct cache *c, int p, int slot,
                                 const struct step_state *prev, struct step_state *f)
{
	const int len = f->len, g = c->group;
	double *mean = f->gw;
	for (int j = 0; j < len; j++)
		mean[j] = 0.0;
	for (int i = 0; i < g; i++) {
		double *x = i == c->own ? f->w_own : c->gw + (size_t)i * (size_t)c->cap;
		double max, sum;
		head_logits(sc, c, i, p, slot, f, x);
		/* The scores it writes are the head's own: overwritten below. */
		kernel_softmax_scores(x, len, &max, &sum, prev->kscore, f->score);
		if (i == c->own) {
			f->max = max;
			f->sum = sum;
		}
		for (int j = 0; j < len; j++)
			mean[j] += x[j];
	}
	for (int j = 0; j < len; j++)
		mean[j] /= g;
	for (int j = 0; j < len - 1; j++)
		f->score[j] = prev->kscore[j] + mean[j];
	f->score[len - 1] = 0.0 + mean[len - 1];
}

void cache_window_row(const double *q, const double *k, const double *attn, size_t dim,
                      double scale, const int *pos, int len, int w, double *o, double *x,
                      const double *prev, double *score)
{
	for (int j = 0; j < len; j++)
		o[j] = 0.0;
	for (int t = len - w; t < len; t++) {
		double max, sum;
		for (int j = 0; j <= t; j++) {
			if (q) {
				const double *qr = q + (size_t)t * dim,
				             *kr = k + (size_t)pos[j] * dim;
				double d = 0.0;
				for (size_t i = 0; i < dim; i++)
					d += qr[i] * kr[i];
				x[j] = scale * d;
			} else {
				x[j] = log(attn[scene_attn_offset(t) + (size_t)pos[j]]);
			}
		}
		kernel_softmax_scores(x, t + 1, &max, &sum, prev, score);
		for (int j = 0; j <= t; j++)
			o[j] += x[j];
	}
	for (int j = 0; j < len; j++)
		o[j] /= w;
}

/* At the prompt's end (F holds positions 0 .. P - 1): each query head I of
 * the group's observation window (cache_window_row) into row I of C->obs
 * (policy_cache.observed). */
static void observe_window(const struct scene *sc, struct cache *c, const struct step_state *f,
                           int w)
{
	const bool vector = sc->mode == SCENE_VECTOR;
	for (int i = 0; i < c->group; i++)
		cache_window_row(vector ? c->la[i].q : NULL, sc->k, vector ? NULL : c->attn[i],
		                 (size_t)sc->dim, sc->scale, f->pos, f->len, w,
		                 c->obs + (size_t)i * (size_t)f->len, c->orow, c->ozero,
		                 c->orow + c->cap);
}

/* Mark in C's gone what PLAN evicts at step S from F's positions (its part
 * PART's), and say what they lost to. */
static void follow_plan(const struct layer_plan *plan, int part, int s, const struct step_state *f,
                        unsigned char *gone, int *cut)
{
	const int *start = plan->ev_start + (size_t)part * (size_t)(plan->n + 2);
	const int from = start[s], to = start[s + 1];
	*cut = -1;
	for (int j = 0, k = from; j < f->len; j++) {
		while (k < to && plan->ev_pos[k] < f->pos[j])
			k++;
		if (k < to && plan->ev_pos[k] == f->pos[j])
			gone[j] = 1;
		if (f->pos[j] == plan->cut_pos[s])
			*cut = j;
	}
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
 * Shared steps: a cache that attends at step S the very positions another
 * attends (LEAD: a cache stepped to S before it, or the full cache) has the
 * same logits, so the same weights, max and sum, bit for bit: they are
 * copied, and only the scores, which add them to the cache's own, are its
 * own. Its lookaheads miss the keys of this step, so they are dropped:
 * the next step it computes starts them again from its key slots.
 */
static void copy_lead(const struct engine *e, struct cache *c, int lead, int s,
                      const struct step_state *prev, struct step_state *f)
{
	const int len = f->len;
	const double *w, *gw = NULL;
	if (lead == POLICY_FULL) {
		const int row = s - 1 - e->f.first;
		w = e->f.w + (size_t)row * (size_t)e->sc->n;
		f->max = e->f.max[row];
		f->sum = e->f.sum[row];
	} else {
		const struct step_state *l = state_of(&e->c[lead], s);
		w = l->w;
		gw = l->gw;
		f->max = l->max;
		f->sum = l->sum;
	}
	f->w = w;
	if (f->gw)
		memcpy(f->gw, gw, (size_t)len * sizeof *f->gw);
	const double *kw = f->gw ? f->gw : f->w;
	kernel_sum(f->score, prev->kscore, kw, len - 1);
	f->score[len - 1] = 0.0 + kw[len - 1];
	for (int i = 0; c->la && i < c->group; i++)
		c->la[i].count = 0;
}

/*
 * Steps of the full cache: a cache that holds every position, as the full
 * cache does, and whose rule will never evict again (a policy that grows,
 * past the prompt) is the full cache in all but name. Its step takes the
 * full cache's weights, as a shared step does, and its positions and
 * scores too: they would be the same numbers (the scores add the same
 * weights in the same order, 0.0 + w for the newest), so they are
 * neither copied nor summed, which on a long scene is most of what such a
 * cache costs. The state points at the full cache's (alias_pos,
 * alias_score), which hold this step's while its record lives (until the
 * next step, engine.h's promise for every record; a cache's own arrays
 * stayed valid a few steps longer, which nothing relies on);
 * cache_unalias writes them into the cache's own arrays when a step that
 * is not the full cache's follows.
 */
static void alias_full(const struct engine *e, struct cache *c, int s, struct step_state *f)
{
	const int row = s - 1 - e->f.first;
	f->w = e->f.w + (size_t)row * (size_t)e->sc->n;
	f->max = e->f.max[row];
	f->sum = e->f.sum[row];
	f->alias_pos = e->f.iota;
	f->alias_score = e->f.score;
	f->klen = f->len;
	f->n_ev = 0;
	f->cutoff_pos = -1;
	f->cutoff_value = 0.0;
	if (c->brow >= 0) {
		c->uk[f->len - 1] = c->ub + c->brow;
		c->brow++;
	}
	for (int i = 0; c->la && i < c->group; i++)
		c->la[i].count = 0;
}

void cache_unalias(const struct engine *e, struct cache *c, int t)
{
	struct step_state *f = state_of(c, t);
	if (!f->alias_pos)
		return;
	/* The full cache's scores are step T's, all of them added. */
	assert(e->f.len == t && (!e->f.lazy || e->f.added == e->f.len));
	memcpy(f->kpos, e->f.iota, (size_t)f->klen * sizeof *f->kpos);
	memcpy(f->kscore, e->f.score, (size_t)f->klen * sizeof *f->kscore);
	f->alias_pos = NULL;
	f->alias_score = NULL;
}

/*
 * Spec §2 for cache ID at step S (position p = S - 1), into step S's state
 * from the cache in step S - 1's: append p, the softmax of this step's logits
 * over the positions held, the scores, and eviction by the policy; in a
 * batch with outputs (cache_outputs_begin), this step's row of its weights. The
 * output itself is cache_outputs_end's.
 */
void cache_step(const struct engine *e, enum policy_id id, struct cache *c, int s, int lead,
                bool alias)
{
	const struct scene *sc = e->sc;
	const struct step_state *prev = state_of(c, s - 1);
	struct step_state *f = state_of(c, s);
	const int p = s - 1, n = prev->klen;
	f->alias_pos = NULL;
	f->alias_score = NULL;
	if (!alias) {
		memcpy(f->pos, prev->kpos, (size_t)n * sizeof *f->pos);
		f->pos[n] = p;
	}
	f->len = n + 1;
	double *w = f->w_own;
	f->w = w;
	const size_t dim = (size_t)sc->dim;
	int slot = -1;
	if (sc->mode == SCENE_VECTOR) {
		slot = c->free_slot[--c->n_free];
		c->slot[n] = slot;
		c->hi = slot >= c->hi ? slot + 1 : c->hi;
		memcpy(c->keys + (size_t)slot * dim, sc->k + (size_t)p * dim,
		       dim * sizeof *c->keys);
		if (policy_reads_keys(id))
			c->slot_norm[slot] = key_norm(sc->k + (size_t)p * dim, sc->dim);
		if (c->memo)
			c->memo->fresh[slot] = 1;
		if (p + PREFETCH_STEPS + KERNEL_LANES < sc->n)
			prefetch_rows(sc, p + PREFETCH_STEPS);
	}
	f->lead = lead;
	if (alias) {
		alias_full(e, c, s, f);
		return;
	}
	if (lead >= 0) {
		copy_lead(e, c, lead, s, prev, f);
	} else if (c->group > 1) {
		group_softmax_scores(sc, c, p, slot, prev, f);
	} else {
		head_logits(sc, c, 0, p, slot, f, w);
		kernel_softmax_scores(w, f->len, &f->max, &f->sum, prev->kscore, f->score);
	}
	if (c->brow >= 0) {
		/* This step's row of the batch's weights; a step that copied
		 * its lead's may not need one (cache_outputs_end). */
		c->uk[n] = c->ub + c->brow;
		double *row = c->wt + (size_t)c->brow * c->wstride;
		if (lead < 0) {
			memset(row, 0, (size_t)c->nu * sizeof *row);
			for (int j = 0; j < f->len; j++)
				row[c->uk[j]] = w[j];
		}
		c->brow++;
	}

	/* Step 6: mark (nothing before the prompt's end; at it, the rule
	 * once over the whole prompt; after it, at every step the interval
	 * compresses), then what stays, run by run, into the state's cache,
	 * and what goes into its evictions. The rule weighs the group's mean
	 * weights (design §2); a layer-wide one follows its plan. */
	const struct policy *pol = policies[id];
	const double *kw = f->gw ? f->gw : f->w;
	/* A plan with a part per key/value head: this view's part. */
	const int part =
	        c->plan && c->plan->parts > 1 ? sc->view_head / heads_group(sc->parent) : 0;
	/* A per_kv_head rule that holds its share (adakv-win) follows the
	 * plan at the prompt's end only; after it each head's rule is its own. */
	if (c->plan && (!pol->per_kv_head || pol->grows || s == e->b.prompt)) {
		int cut = -1;
		memset(c->gone, 0, (size_t)f->len);
		follow_plan(c->plan, part, s, f, c->gone, &cut);
		f->cutoff_pos = cut >= 0 ? f->pos[cut] : -1;
		f->cutoff_value = c->plan->cut_w[s];
	} else {
		/* The held keys' norms, for a rule that reads the keys. */
		const double *norm = NULL;
		if (policy_reads_keys(id) && c->slot) {
			for (int j = 0; j < f->len; j++)
				c->key_norm[j] = c->slot_norm[c->slot[j]];
			norm = c->key_norm;
		}
		struct policy_cache view = {.len = f->len,
		                            .pos = f->pos,
		                            .score = f->score,
		                            .w = kw,
		                            .key_norm = norm,
		                            .rank = c->rank,
		                            .layer = sc->view_layer,
		                            .kv_heads = 1,
		                            .order = c->order};
		view.kv_head = sc->parent ? sc->view_head / c->group : 0;
		if (pol->by_keys && c->anchor) {
			view.keys = c->keys;
			view.key_slot = c->slot;
			view.dim = sc->dim;
			view.anchor = c->anchor;
			view.memo = c->memo;
		}
		if (pol->by_queries && c->qrows && view.keys) {
			view.queries = c->qrows;
			view.heads = c->group;
			view.seen = s;
			view.values = sc->v;
			view.scale = sc->scale;
			view.work = c->work;
			view.rope = sc->q_pre ? &c->rope : NULL;
		}
		view.window = policy_run_window(id, &e->b, s);
		if (view.window > 0) {
			observe_window(sc, c, f, view.window);
			view.observed = c->obs;
			view.heads = c->group;
		}
		const int cut = policy_run(id, &e->b, s, &view, c->gone, &f->cutoff_value);
		f->cutoff_pos = cut >= 0 ? f->pos[cut] : -1;
	}
	if (!memchr(c->gone, 1, (size_t)f->len)) {
		/* Nothing evicted: what it attended is the cache. */
		int *pos = f->kpos;
		double *score = f->kscore;
		f->kpos = f->pos;
		f->kscore = f->score;
		f->pos = pos;
		f->score = score;
		f->klen = f->len;
		f->n_ev = 0;
		return;
	}
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
			f->ev_w[n_ev] = c->plan && c->plan->ev_w
			                        ? c->plan->ev_w[c->plan->ev_start[s] + n_ev]
			                        : kw[j];
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
 * the cache before S0 and the positions appended since. cache_outputs_begin
 * comes before the steps (which then write their rows of weights), and
 * cache_outputs_end after them.
 */
void cache_outputs_begin(struct cache *c, int s0, int count)
{
	c->out_first = s0;
	if (count == 1)
		return;
	const struct step_state *prev = state_of(c, s0 - 1);
	const int len = prev->klen;
	const int *kept = state_kept(prev);
	for (int j = 0; j < len; j++) {
		c->u_pos[j] = kept[j];
		c->uk[j] = j;
	}
	for (int k = 0; k < count; k++)
		c->u_pos[len + k] = s0 - 1 + k;
	c->ub = len;
	c->nu = len + count;
	c->brow = 0;
}

/* Row R of C's batch of COUNT steps, for a step that copied its weights
 * (cache_step wrote none): its weights at the batch's positions, found by
 * merging its ascending positions with theirs; and zeros for the rows past
 * COUNT. */
static void batch_row(struct cache *c, int r, int count)
{
	double *row = c->wt + (size_t)r * c->wstride;
	memset(row, 0, (size_t)c->nu * sizeof *row);
	if (r >= count)
		return;
	const struct step_state *f = state_of(c, c->out_first + r);
	const int *pos = state_attended(f);
	for (int j = 0, u = 0; j < f->len; j++) {
		while (c->u_pos[u] < pos[j])
			u++;
		row[u] = f->w[j];
	}
}

/* Step S's output in C's state LEAD's: the full cache's row, or the
 * output of a cache whose batch is C's. */
static const double *lead_out(const struct engine *e, int lead, int s)
{
	const size_t dim = (size_t)e->sc->dim;
	if (lead == POLICY_FULL)
		return e->f.out + (size_t)(s - 1 - e->f.first) * dim;
	const struct cache *l = &e->c[lead];
	return l->out + (size_t)(s - l->out_first) * dim;
}

void cache_outputs_end(const struct engine *e, struct cache *c, int count)
{
	const struct scene *sc = e->sc;
	bool led = true;
	for (int r = 0; r < count && led; r++)
		led = state_of(c, c->out_first + r)->lead >= 0;
	if (led) {
		c->brow = -1;
		for (int r = 0; r < count; r++)
			memcpy(c->out + (size_t)r * (size_t)sc->dim,
			       lead_out(e, state_of(c, c->out_first + r)->lead, c->out_first + r),
			       (size_t)sc->dim * sizeof *c->out);
		return;
	}
	if (count == 1) {
		const struct step_state *f = state_of(c, c->out_first);
		kernel_gather_out(f->w, state_attended(f), f->len, sc->v, sc->dim, c->out);
		return;
	}
	c->brow = -1;
	for (int r = 0; r < AHEAD; r++)
		if (r >= count || state_of(c, c->out_first + r)->lead >= 0)
			batch_row(c, r, count);
	kernel_batch_out(c->wt, c->wstride, c->u_pos, c->nu, sc->v, sc->dim, c->out);
}

void cache_record_of(const struct scene *sc, const struct cache *c, int s, bool output,
                     struct cache_record *r)
{
	const struct step_state *f = state_of(c, s);
	*r = (struct cache_record){
	        .n_attended = f->len,
	        .attended = state_attended(f),
	        .attn = f->w,
	        .group_attn = f->gw ? f->gw : f->w,
	        .scores = state_scores(f),
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

/* Make C hold LEN entries at step T (from a blob: any alignment), their
 * keys in slots 0 .. len - 1. */
void cache_restore(const struct engine *e, struct cache *c, int t, int len, const void *pos,
                   const void *score)
{
	struct step_state *f = state_of(c, t);
	f->klen = len;
	f->alias_pos = NULL;
	f->alias_score = NULL;
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
		c->slot_norm[c->slot[i]] =
		        key_norm(sc->k + (size_t)f->kpos[i] * (size_t)sc->dim, sc->dim);
	}
	c->hi = len;
}
