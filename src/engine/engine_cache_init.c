/*
 * engine_cache_init: the caches that evict, made and freed: their slots,
 * the ring of step states, a grouped head's view of its group's query
 * heads, and a rule's own state (engine_cache.c steps them).
 */
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"
#include "h2o/heads.h"
#include "h2o/scene.h"

void cache_done(struct cache *c)
{
	for (int i = 0; c->ring && i < c->ring_len; i++) {
		struct step_state *f = &c->ring[i];
		free(f->pos);
		free(f->score);
		free(f->w_own);
		free(f->ev_pos);
		free(f->ev_score);
		free(f->ev_w);
		free(f->kpos);
		free(f->kscore);
		free(f->gw);
	}
	free(c->ring);
	free(c->gone);
	free(c->out);
	free(c->u_pos);
	free(c->uk);
	free(c->wt);
	free(c->slot);
	free(c->free_slot);
	free(c->keys);
	free(c->slot_norm);
	free(c->key_norm);
	free(c->obs);
	free(c->orow);
	free(c->ozero);
	free(c->rank);
	free(c->order);
	free(c->anchor);
	free(c->qrows);
	free(c->work);
	free(c->memo);
	free(c->memo_block);
	free(c->memo_ints);
	for (int i = 0; c->la && i < c->group; i++) {
		free(c->la[i].qt);
		free(c->la[i].logit);
	}
	free(c->la);
	free(c->attn);
	free(c->gw);
}

/* Slots, from slot 0 up, all free. */
void cache_reset_slots(struct cache *c)
{
	c->n_free = c->cap;
	for (int i = 0; i < c->cap; i++)
		c->free_slot[i] = c->cap - 1 - i;
	c->hi = 0;
	for (int i = 0; i < c->group; i++)
		c->la[i].count = 0;
	if (c->memo)
		memset(c->memo->fresh, 1, (size_t)c->memo->slots);
}

static bool state_init(struct step_state *f, size_t cap, bool grouped)
{
	f->gw = grouped ? malloc(cap * sizeof *f->gw) : NULL;
	if (grouped && !f->gw)
		return false;
	f->pos = malloc(cap * sizeof *f->pos);
	f->score = malloc(cap * sizeof *f->score);
	f->w = f->w_own = malloc(cap * sizeof *f->w_own);
	f->ev_pos = malloc(cap * sizeof *f->ev_pos);
	f->ev_score = malloc(cap * sizeof *f->ev_score);
	f->ev_w = malloc(cap * sizeof *f->ev_w);
	f->kpos = malloc(cap * sizeof *f->kpos);
	f->kscore = malloc(cap * sizeof *f->kscore);
	f->klen = 0;
	return f->pos && f->score && f->w_own && f->ev_pos && f->ev_score && f->ev_w && f->kpos &&
	       f->kscore;
}

int cache_ahead_of(const struct scene *sc, int cap)
{
	return sc->v && cap <= AHEAD_MAX_CAP ? AHEAD : 1;
}

/* Query head I of SC's group: its flat index in the parent scene. */
static size_t group_head(const struct scene *sc, int own, int i)
{
	const int per = heads_per_layer(sc->parent);
	return (size_t)sc->view_layer * (size_t)per + (size_t)(sc->view_head - own + i);
}

bool cache_init(struct cache *c, int cap, int ahead_steps, const struct scene *sc, int sharing)
{
	const size_t n = (size_t)cap, dim = (size_t)sc->dim, ahead = (size_t)ahead_steps;
	c->cap = cap;
	c->brow = -1;
	/* The query heads that share the cache, the view's own at OWN. */
	c->group = sc->parent && sharing > 1 ? sharing : 1;
	c->own = c->group > 1 ? sc->view_head % c->group : 0;
	const size_t group = (size_t)c->group;
	c->ring_len = (int)ahead + 1;
	c->ring = calloc(ahead + 1, sizeof *c->ring);
	bool ok = c->ring != NULL;
	for (size_t i = 0; ok && i <= ahead; i++)
		ok = state_init(&c->ring[i], n, group > 1);
	c->gone = malloc(n);
	c->out = malloc(AHEAD * dim * sizeof *c->out);
	ok = ok && c->gone && c->out;
	if (ok && group > 1) {
		c->gw = malloc(group * n * sizeof *c->gw);
		ok = c->gw != NULL;
	}
	if (ok && ahead > 1) {
		c->u_pos = malloc((n + ahead) * sizeof *c->u_pos);
		c->uk = malloc(n * sizeof *c->uk);
		c->wstride = n + ahead;
		c->wt = malloc(c->wstride * AHEAD * sizeof *c->wt);
		ok = c->u_pos && c->uk && c->wt;
	}
	if (ok && sc->mode == SCENE_ATTENTION) {
		c->attn = calloc(group, sizeof *c->attn);
		ok = c->attn != NULL;
		for (size_t i = 0; ok && i < group; i++)
			c->attn[i] = group > 1 ? sc->parent->attn + group_head(sc, c->own, (int)i) *
			                                                    scene_attn_offset(sc->n)
			                       : sc->attn;
	}
	if (ok && sc->mode == SCENE_VECTOR) {
		c->slot = malloc(n * sizeof *c->slot);
		c->free_slot = malloc(n * sizeof *c->free_slot);
		c->keys = malloc(n * dim * sizeof *c->keys);
		c->slot_norm = malloc(n * sizeof *c->slot_norm);
		c->key_norm = malloc(n * sizeof *c->key_norm);
		c->la = calloc(group, sizeof *c->la);
		ok = c->slot && c->free_slot && c->keys && c->slot_norm && c->key_norm && c->la;
		for (size_t i = 0; ok && i < group; i++) {
			struct lookahead *la = &c->la[i];
			la->q = group > 1 ? sc->parent->q + group_head(sc, c->own, (int)i) *
			                                            (size_t)sc->n * dim
			                  : sc->q;
			la->qt = calloc(KERNEL_LANES * dim, sizeof *la->qt);
			la->stride = n;
			la->logit = malloc(n * KERNEL_LANES * sizeof *la->logit);
			ok = la->qt && la->logit;
		}
		if (ok)
			cache_reset_slots(c);
	}
	return ok;
}

/* C's policy_memo for HEADS query heads, every slot fresh
 * (cache_reset_slots). */
static bool memo_init(struct cache *c, const struct scene *sc, int heads)
{
	const size_t n = memo_slots((size_t)c->cap);
	const int slots = (int)n;
	c->memo = calloc(1, sizeof *c->memo);
	c->memo_block = calloc(POLICY_MEMO_DOUBLES(sc->dim, heads, slots), sizeof(double));
	c->memo_ints = calloc((size_t)heads + (n + sizeof(int) - 1) / sizeof(int), sizeof(int));
	if (!c->memo || !c->memo_block || !c->memo_ints)
		return false;
	struct policy_memo *mo = c->memo;
	mo->slots = slots;
	mo->next = c->memo_ints;
	mo->fresh = (unsigned char *)(c->memo_ints + heads);
	mo->tiles = c->memo_block;
	mo->rows = mo->tiles + n * (size_t)sc->dim;
	mo->ring = mo->rows + n * (size_t)sc->dim;
	mo->qtiles = mo->ring + n * (size_t)heads * POLICY_QUERIES_READ;
	mo->vnorm = mo->qtiles + (size_t)heads * POLICY_QUERIES_READ * (size_t)sc->dim;
	mo->mean = mo->vnorm + n;
	mo->var = mo->mean + n;
	memset(mo->fresh, 1, n);
	return true;
}

bool cache_init_rule(struct cache *c, enum policy_id id, const struct scene *sc)
{
	const struct policy *pol = policies[id];
	const size_t n = (size_t)c->cap;
	if (pol->by_keys && c->keys) {
		c->anchor = malloc((size_t)sc->dim * sizeof *c->anchor);
		if (!c->anchor)
			return false;
		/* What the rule keeps by slot; Expected Attention keeps none
		 * on a model scene, whose statistics RoPE turns. */
		if (c->slot && !(pol->by_queries && sc->q_pre) &&
		    !memo_init(c, sc, pol->by_queries ? c->group : 0))
			return false;
	}
	if (pol->by_queries && c->la) {
		const size_t dim = (size_t)sc->dim;
		c->qrows = malloc((size_t)c->group * sizeof *c->qrows);
		c->work = malloc(POLICY_WORK_DOUBLES(dim, n) * sizeof *c->work);
		if (!c->qrows || !c->work)
			return false;
		/* A model scene's queries before RoPE (a vector scene has no
		 * other): as the lookahead's rows, of q_pre. */
		const struct scene *root = sc->parent ? sc->parent : sc;
		for (int i = 0; i < c->group; i++)
			c->qrows[i] =
			        root->q_pre ? root->q_pre + (c->la[i].q - root->q) : c->la[i].q;
		if (sc->q_pre)
			c->rope = (struct policy_rope){.neox = sc->rope_neox,
			                               .scale = sc->rope_scale,
			                               .freq = sc->rope_freq,
			                               .div = sc->rope_div};
	}
	if (pol->observe_window > 0) {
		c->obs = malloc((size_t)c->group * n * sizeof *c->obs);
		c->orow = malloc(2 * n * sizeof *c->orow);
		c->ozero = calloc(n, sizeof *c->ozero);
		if (!c->obs || !c->orow || !c->ozero)
			return false;
	}
	if (pol->ranks_own) {
		c->rank = malloc(n * sizeof *c->rank);
		if (!c->rank)
			return false;
	}
	if (pol->per_kv_head) {
		c->order = malloc(n * sizeof *c->order);
		if (!c->order)
			return false;
	}
	return true;
}
