/*
 * plan: a layer-wide policy's decisions, once per layer (see plan.h).
 *
 * A plan runs the layer's cache the plain way: the positions every key/value
 * head shares, each kv head's key rows in tiles (kernel_put_key's layout,
 * slots reused as positions go), and at each step every query head's
 * logits (kernel_slot_logits: engine_logit's sums), its softmax
 * (kernel_softmax_scores: the engine's exp and order), the mean of the
 * heads' weights summed in head order from 0.0 and divided by their
 * number, the scores that add it, and the policy's rule on those means. So
 * each head's weight is the one its own engine computes, bit for bit.
 *
 * A per_kv_head policy (AdaKV) decides at the prompt's end, when every kv
 * head still holds the whole prompt: its plan computes each query head's
 * observation window as the engines do, runs the rule once for all the
 * layer's kv heads, and keeps each kv head's evictions as its part; its
 * matched form (adakv-win) then holds each head's share in each engine.
 */
#include "h2o/plan.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"
#include "h2o/heads.h"
#include "h2o/scene.h"

struct engine_plans {
	const struct scene *sc;
	struct budget want;     /* the user's choice */
	struct policy_budget b; /* as the rules read it */
	int layers;
	struct layer_plan **plan; /* [layers * POLICY_COUNT] */
	pthread_mutex_t *lock;    /* [layers]: a layer's plans are made once */
};

bool engine_plan_needed(const struct scene *sc, enum policy_id p)
{
	if (p == POLICY_FULL)
		return false;
	if (policies[p]->per_kv_head)
		return heads_kv_count(sc) > 1;
	return policies[p]->layer_wide && heads_per_layer(sc) > 1;
}

struct engine_plans *engine_plans_new(const struct scene *sc, const struct budget *b)
{
	struct engine_plans *ps = calloc(1, sizeof *ps);
	if (!ps)
		return NULL;
	ps->sc = sc;
	ps->want = *b;
	ps->b = policy_budget_of(sc, b);
	ps->layers = sc->layers > 1 ? sc->layers : 1;
	ps->plan = calloc((size_t)ps->layers * POLICY_COUNT, sizeof *ps->plan);
	ps->lock = calloc((size_t)ps->layers, sizeof *ps->lock);
	int locks = 0;
	while (ps->plan && ps->lock && locks < ps->layers &&
	       pthread_mutex_init(&ps->lock[locks], NULL) == 0)
		locks++;
	if (locks < ps->layers) {
		for (int l = 0; l < locks; l++)
			pthread_mutex_destroy(&ps->lock[l]);
		free(ps->lock);
		free(ps->plan);
		free(ps);
		return NULL;
	}
	return ps;
}

static void plan_free(struct layer_plan *pl)
{
	if (!pl)
		return;
	free(pl->ev_start);
	free(pl->ev_pos);
	free(pl->ev_w);
	free(pl->ev_score);
	free(pl->cut_pos);
	free(pl->cut_w);
	free(pl);
}

void engine_plans_free(struct engine_plans *ps)
{
	if (!ps)
		return;
	for (int i = 0; i < ps->layers * POLICY_COUNT; i++)
		plan_free(ps->plan[i]);
	for (int l = 0; l < ps->layers; l++)
		pthread_mutex_destroy(&ps->lock[l]);
	free(ps->lock);
	free(ps->plan);
	free(ps);
}

/* The layer's cache while a plan is made. */
struct layer_run {
	int cap, len, heads, kv, group, dim, tiles;
	int *pos, *slot, *free_slot, n_free, hi;
	double *score, *prev, *mean, *x, *logit, *scratch;
	double **keys; /* [kv]: cap slots in tiles */
	unsigned char *gone;
};

static void run_free(struct layer_run *r)
{
	free(r->pos);
	free(r->slot);
	free(r->free_slot);
	free(r->score);
	free(r->prev);
	free(r->mean);
	free(r->x);
	free(r->logit);
	free(r->scratch);
	for (int i = 0; r->keys && i < r->kv; i++)
		free(r->keys[i]);
	free(r->keys);
	free(r->gone);
}

static bool run_init(struct layer_run *r, const struct scene *sc, const struct budget *b)
{
	*r = (struct layer_run){0};
	r->cap = engine_cache_cap(sc, b);
	r->heads = heads_per_layer(sc);
	r->kv = heads_kv_count(sc);
	r->group = heads_group(sc);
	r->dim = sc->dim;
	r->tiles = (r->cap + KERNEL_LANES - 1) / KERNEL_LANES;
	const size_t cap = (size_t)r->cap, slots = (size_t)r->tiles * KERNEL_LANES;
	r->pos = malloc(cap * sizeof *r->pos);
	r->slot = malloc(cap * sizeof *r->slot);
	r->free_slot = malloc(cap * sizeof *r->free_slot);
	r->score = malloc(cap * sizeof *r->score);
	r->prev = malloc(cap * sizeof *r->prev);
	r->mean = malloc(cap * sizeof *r->mean);
	r->x = malloc(cap * sizeof *r->x);
	r->logit = malloc(slots * sizeof *r->logit);
	r->scratch = malloc(cap * sizeof *r->scratch);
	r->gone = malloc(cap);
	bool ok = r->pos && r->slot && r->free_slot && r->score && r->prev && r->mean && r->x &&
	          r->logit && r->scratch && r->gone;
	if (ok && sc->mode == SCENE_VECTOR) {
		r->keys = calloc((size_t)r->kv, sizeof *r->keys);
		ok = r->keys != NULL;
		for (int i = 0; ok && i < r->kv; i++) {
			/* Unused slots stay zero: their logits go unread. */
			r->keys[i] = calloc(slots * (size_t)r->dim, sizeof **r->keys);
			ok = r->keys[i] != NULL;
		}
	}
	for (int i = 0; ok && i < r->cap; i++)
		r->free_slot[i] = r->cap - 1 - i;
	r->n_free = r->cap;
	if (!ok)
		run_free(r);
	return ok;
}

/* Query head H of layer L at position P: its weights over the run's
 * positions into r->x. */
static void head_weights(const struct scene *sc, struct layer_run *r, int l, int h, int p)
{
	const size_t n = (size_t)sc->n, dim = (size_t)sc->dim;
	const size_t qh = (size_t)l * (size_t)r->heads + (size_t)h;
	if (sc->mode == SCENE_VECTOR) {
		const double *q = sc->q + (qh * n + (size_t)p) * dim;
		const int ntiles = (r->hi + KERNEL_LANES - 1) / KERNEL_LANES;
		kernel_slot_logits(r->keys[h / r->group], ntiles, sc->dim, q, sc->scale, r->logit);
		for (int j = 0; j < r->len; j++)
			r->x[j] = r->logit[r->slot[j]];
	} else {
		const double *a = sc->attn + qh * scene_attn_offset(sc->n) + scene_attn_offset(p);
		for (int j = 0; j < r->len; j++)
			r->x[j] = log(a[r->pos[j]]);
	}
	double max, sum;
	kernel_softmax_scores(r->x, r->len, &max, &sum, r->prev, r->scratch);
}

static struct layer_plan *plan_make(const struct engine_plans *ps, int l, enum policy_id id)
{
	const struct scene *sc = ps->sc;
	const int n = sc->n;
	struct layer_plan *pl = calloc(1, sizeof *pl);
	struct layer_run r;
	if (!pl)
		return NULL;
	if (!run_init(&r, sc, &ps->want)) {
		free(pl);
		return NULL;
	}
	pl->n = n;
	pl->parts = 1;
	pl->ev_start = calloc((size_t)n + 2, sizeof *pl->ev_start);
	pl->ev_pos = malloc((size_t)n * sizeof *pl->ev_pos);
	pl->ev_w = malloc((size_t)n * sizeof *pl->ev_w);
	pl->ev_score = malloc((size_t)n * sizeof *pl->ev_score);
	pl->cut_pos = malloc(((size_t)n + 2) * sizeof *pl->cut_pos);
	pl->cut_w = calloc((size_t)n + 2, sizeof *pl->cut_w);
	if (!pl->ev_start || !pl->ev_pos || !pl->ev_w || !pl->ev_score || !pl->cut_pos ||
	    !pl->cut_w) {
		run_free(&r);
		plan_free(pl);
		return NULL;
	}
	const size_t dim = (size_t)sc->dim;
	int n_ev = 0;
	for (int s = 1; s <= n; s++) {
		const int p = s - 1;
		pl->ev_start[s] = n_ev;
		pl->cut_pos[s] = -1;
		/* Append p: its key in every kv head's tiles. */
		r.pos[r.len] = p;
		if (r.keys) {
			const int slot = r.free_slot[--r.n_free];
			r.slot[r.len] = slot;
			r.hi = slot >= r.hi ? slot + 1 : r.hi;
			for (int g = 0; g < r.kv; g++) {
				const size_t kb = (size_t)l * (size_t)r.kv + (size_t)g;
				kernel_put_key(r.keys[g], slot,
				               sc->k + (kb * (size_t)n + (size_t)p) * dim, sc->dim);
			}
		}
		r.prev[r.len] = 0.0;
		r.len++;
		for (int j = 0; j < r.len; j++)
			r.mean[j] = 0.0;
		for (int h = 0; h < r.heads; h++) {
			head_weights(sc, &r, l, h, p);
			for (int j = 0; j < r.len; j++)
				r.mean[j] += r.x[j];
		}
		for (int j = 0; j < r.len; j++)
			r.mean[j] /= r.heads;
		for (int j = 0; j < r.len - 1; j++)
			r.score[j] = r.prev[j] + r.mean[j];
		r.score[r.len - 1] = 0.0 + r.mean[r.len - 1];
		const struct policy_cache view = {
		        .len = r.len, .pos = r.pos, .score = r.score, .w = r.mean, .layer = l};
		double value;
		const int cut = policy_run(id, &ps->b, s, &view, r.gone, &value);
		if (cut >= 0) {
			pl->cut_pos[s] = r.pos[cut];
			pl->cut_w[s] = value;
		}
		int kept = 0;
		for (int j = 0; j < r.len; j++) {
			if (r.gone[j]) {
				pl->ev_pos[n_ev] = r.pos[j];
				pl->ev_w[n_ev] = r.mean[j];
				pl->ev_score[n_ev] = r.score[j];
				n_ev++;
				if (r.keys)
					r.free_slot[r.n_free++] = r.slot[j];
				continue;
			}
			r.pos[kept] = r.pos[j];
			r.prev[kept] = r.score[j];
			if (r.keys)
				r.slot[kept] = r.slot[j];
			kept++;
		}
		r.len = kept;
	}
	pl->ev_start[n + 1] = n_ev;
	run_free(&r);
	return pl;
}

/* Query head H of layer L's observation window at the prompt's end
 * (cache_window_row over the positions POS, 0 .. LEN - 1), into O: what
 * each head's engine computes for its own group, bit for bit. */
static void window_row(const struct scene *sc, int l, int h, const int *pos, int len, int w,
                       double *o, double *x, const double *zero, double *scratch)
{
	const int heads = heads_per_layer(sc), group = heads_group(sc);
	const size_t n = (size_t)sc->n, dim = (size_t)sc->dim;
	const size_t qh = (size_t)l * (size_t)heads + (size_t)h;
	const size_t kb = (size_t)l * (size_t)(heads / group) + (size_t)(h / group);
	if (sc->mode == SCENE_VECTOR)
		cache_window_row(sc->q + qh * n * dim, sc->k + kb * n * dim, NULL, dim, sc->scale,
		                 pos, len, w, o, x, zero, scratch);
	else
		cache_window_row(NULL, NULL, sc->attn + qh * scene_attn_offset(sc->n), dim,
		                 sc->scale, pos, len, w, o, x, zero, scratch);
}

/*
 * The plan of a per_kv_head policy (AdaKV) for layer L: nothing goes
 * before the prompt's end; at step P the rule sees the prompt (positions
 * 0 .. P - 1, held alike by every kv head) with the observation windows of
 * all the layer's query heads, and marks each kv head's evictions, which
 * become that head's part (plan_hold_part). After it the plan evicts
 * nothing: a policy that holds its share (adakv-win) runs its rule in each
 * engine, on that kv head's own positions (engine_cache.c).
 */
static void plan_hold_part(const struct engine_plans *ps, int g, const unsigned char *prompt_gone,
                           struct layer_plan *pl, int *held, unsigned char *gone, int *k)
{
	const int n = pl->n, prompt = ps->b.prompt;
	int *start = pl->ev_start + (size_t)g * ((size_t)n + 2);
	int len = 0;
	for (int s = 0; s <= n + 1; s++) {
		start[s] = *k;
		if (s < 1 || s > n)
			continue;
		held[len++] = s - 1;
		if (s != prompt || !prompt_gone)
			continue;
		/* The prompt's end: the layer's choice, this head's part. */
		for (int j = 0; j < len; j++)
			gone[j] = prompt_gone[(size_t)g * (size_t)prompt + (size_t)j];
		int kept = 0;
		for (int j = 0; j < len; j++) {
			if (gone[j])
				pl->ev_pos[(*k)++] = held[j];
			else
				held[kept++] = held[j];
		}
		len = kept;
	}
}

static struct layer_plan *plan_make_kv(const struct engine_plans *ps, int l, enum policy_id id)
{
	const struct scene *sc = ps->sc;
	const int n = sc->n, prompt = ps->b.prompt, kv = heads_kv_count(sc);
	const int heads = heads_per_layer(sc);
	const size_t parts = (size_t)kv * ((size_t)n + 2), len = (size_t)prompt;
	struct layer_plan *pl = calloc(1, sizeof *pl);
	if (!pl)
		return NULL;
	pl->n = n;
	pl->parts = kv;
	pl->ev_start = calloc(parts, sizeof *pl->ev_start);
	/* A position goes at most once from each head's cache. */
	pl->ev_pos = malloc(((size_t)n * (size_t)kv + 1) * sizeof *pl->ev_pos);
	pl->cut_pos = malloc(((size_t)n + 2) * sizeof *pl->cut_pos);
	pl->cut_w = calloc((size_t)n + 2, sizeof *pl->cut_w);
	if (!pl->ev_start || !pl->ev_pos || !pl->cut_pos || !pl->cut_w) {
		plan_free(pl);
		return NULL;
	}
	for (int s = 0; s <= n + 1; s++)
		pl->cut_pos[s] = -1;
	const struct policy_budget *b = &ps->b;
	/* Nothing to evict at the prompt's end, but for the authors' AdaKV
	 * split, which cuts a prompt of exactly B too (policy_ada_select). */
	const bool authors = b->set.p[id].alloc == POLICY_ALLOC_AUTHORS;
	const bool cuts = !(prompt < 1 || prompt < b->heavy + b->recent ||
	                    (prompt == b->heavy + b->recent && !authors));
	if (!cuts)
		return pl;
	const size_t rows = cuts ? len : 1;
	const int w = cuts ? policy_run_window(id, b, prompt) : 0;
	int *pos = malloc(rows * sizeof *pos);
	int *order = malloc(rows * (size_t)kv * sizeof *order);
	double *obs = malloc(rows * (size_t)heads * sizeof *obs);
	double *rank = malloc(rows * (size_t)kv * sizeof *rank);
	double *x = malloc(rows * sizeof *x), *zero = calloc(rows, sizeof *zero);
	double *scratch = malloc(rows * sizeof *scratch);
	unsigned char *gone = calloc(rows * (size_t)kv + (size_t)n, 1);
	int *held = malloc(((size_t)n + 1) * sizeof *held);
	const bool ok = pos && order && obs && rank && x && zero && scratch && gone && held;
	if (ok && cuts) {
		for (int j = 0; j < prompt; j++)
			pos[j] = j;
		for (int h = 0; h < heads; h++)
			window_row(sc, l, h, pos, prompt, w, obs + (size_t)h * len, x, zero,
			           scratch);
		struct policy_cache view = {.len = prompt,
		                            .pos = pos,
		                            .observed = obs,
		                            .heads = heads,
		                            .window = w,
		                            .rank = rank,
		                            .layer = l,
		                            .kv_heads = kv,
		                            .order = order};
		double value;
		const int cut = policy_run(id, b, prompt, &view, gone, &value);
		if (cut >= 0) {
			pl->cut_pos[prompt] = cut % prompt;
			pl->cut_w[prompt] = value;
		}
	}
	if (ok) {
		int k = 0;
		for (int g = 0; g < kv; g++)
			plan_hold_part(ps, g, cuts ? gone : NULL, pl, held,
			               gone + rows * (size_t)kv, &k);
	}
	free(pos);
	free(order);
	free(obs);
	free(rank);
	free(x);
	free(zero);
	free(scratch);
	free(gone);
	free(held);
	if (!ok) {
		plan_free(pl);
		return NULL;
	}
	return pl;
}

const struct layer_plan *engine_plan_get(struct engine_plans *ps, int layer, enum policy_id p)
{
	pthread_mutex_lock(&ps->lock[layer]);
	struct layer_plan **slot = &ps->plan[(size_t)layer * POLICY_COUNT + (size_t)p];
	if (!*slot)
		*slot = policies[p]->per_kv_head ? plan_make_kv(ps, layer, p)
		                                 : plan_make(ps, layer, p);
	const struct layer_plan *pl = *slot;
	pthread_mutex_unlock(&ps->lock[layer]);
	return pl;
}
