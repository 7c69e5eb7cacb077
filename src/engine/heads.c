/*
 * heads: one query head of a layered, grouped scene as a scene of its own.
 */
#include "h2o/heads.h"

#include "h2o/pool.h"
#include "h2o/engine_replay.h"
#include "h2o/plan.h"

#include <math.h>
#include <stdlib.h>

int heads_count(const struct scene *sc)
{
	const int layers = sc->layers > 1 ? sc->layers : 1;
	return layers * (sc->heads > 1 ? sc->heads : 1);
}

int heads_per_layer(const struct scene *sc)
{
	return sc->heads > 1 ? sc->heads : 1;
}

int heads_group(const struct scene *sc)
{
	const int kv = sc->kv_heads > 0 ? sc->kv_heads : heads_per_layer(sc);
	return heads_per_layer(sc) / kv;
}

int heads_cache_group(const struct scene *sc, const struct policy_settings *set, enum policy_id p)
{
	if (p == POLICY_PYRAMIDKV && set->p[p].granularity == POLICY_GRANULARITY_QUERY_HEAD)
		return 1;
	return heads_group(sc);
}

int heads_kv_count(const struct scene *sc)
{
	return heads_per_layer(sc) / heads_group(sc);
}

void heads_view(const struct scene *sc, int i, struct scene *view)
{
	const int per = heads_per_layer(sc), group = heads_group(sc);
	const int layer = i / per, h = i % per;
	const int kv = layer * (per / group) + h / group;
	*view = *sc;
	view->layers = 1;
	view->heads = 1;
	view->kv_heads = 1;
	view->head_names = NULL;
	view->parent = sc;
	view->view_layer = layer;
	view->view_head = h;
	const size_t block = (size_t)sc->n * (size_t)sc->dim;
	if (sc->q)
		view->q = sc->q + (size_t)i * block;
	if (sc->q_pre)
		view->q_pre = sc->q_pre + (size_t)i * block;
	if (sc->k)
		view->k = sc->k + (size_t)kv * block;
	if (sc->v)
		view->v = sc->v + (size_t)kv * block;
	if (sc->attn)
		view->attn = sc->attn + (size_t)i * scene_attn_offset(sc->n);
}

const struct scene *heads_root(const struct scene *view)
{
	return view->parent ? view->parent : view;
}

const char *heads_name(const struct scene *sc, int h)
{
	return sc->head_names && sc->head_names[h] ? sc->head_names[h] : "";
}

int heads_run_init(struct heads_run *run, const struct scene *sc, const struct budget *b)
{
	return heads_run_init_only(run, sc, b, ENGINE_ALL_POLICIES);
}

int heads_run_init_only(struct heads_run *run, const struct scene *sc, const struct budget *b,
                        unsigned policies)
{
	return heads_run_init_range(run, sc, b, policies, 0, heads_count(sc));
}

int heads_run_init_range(struct heads_run *run, const struct scene *sc, const struct budget *b,
                         unsigned policies, int first, int count)
{
	*run = (struct heads_run){.b = *b};
	/* One plan per layer for all its heads' engines (plan.h). */
	run->plans = engine_plans_new(sc, b);
	if (!run->plans)
		return -1;
	run->views = calloc((size_t)count, sizeof *run->views);
	run->e = calloc((size_t)count, sizeof *run->e);
	run->rec = calloc((size_t)count, sizeof *run->rec);
	run->h = calloc(1, sizeof *run->h);
	if (!run->views || !run->e || !run->rec || !run->h) {
		heads_run_done(run);
		return -1;
	}
	for (int h = 0; h < count; h++) {
		heads_view(sc, first + h, &run->views[h]);
		run->e[h] = engine_new_rows(&run->views[h], &run->b, run->plans, policies, 0);
		run->count = h + 1;
		if (!run->e[h]) {
			heads_run_done(run);
			return -1;
		}
		/* Several heads share the two cores among them (heads_run_step),
		 * not each engine with a thread of its own. */
		if (count > 1)
			engine_solo(run->e[h]);
	}
	return 0;
}

void heads_run_done(struct heads_run *run)
{
	if (run->h)
		pool_stop(run->h);
	free(run->h);
	for (int h = 0; run->e && h < run->count; h++)
		engine_free(run->e[h]);
	free(run->views);
	free(run->e);
	free(run->rec);
	engine_plans_free(run->plans);
	*run = (struct heads_run){0};
}

/* Heads FROM .. TO - 1 of a run, one step each. */
static void step_heads(struct heads_run *run, int from, int to)
{
	for (int h = from; h < to; h++)
		engine_step(run->e[h], &run->rec[h]);
}

/* Half the heads on each of two threads: the engines are independent. */
static void step_part(void *arg, int part)
{
	struct heads_run *run = arg;
	const int half = run->count / 2;
	step_heads(run, part ? half : 0, part ? run->count : half);
}

bool heads_run_step(struct heads_run *run)
{
	const int t = engine_step_count(run->e[0]);
	if (run->count > 1)
		pool_run_two(run->h, step_part, run);
	else
		step_heads(run, 0, run->count);
	return engine_step_count(run->e[0]) > t;
}

void heads_run_add(const struct heads_run *run, int first, int count, enum policy_id p,
                   struct heads_sum *sum)
{
	const int dim = run->views[first].dim;
	const int group = heads_cache_group(heads_root(&run->views[first]), &run->b.settings, p);
	if (sum->heads == 0)
		sum->has_out = run->rec[first].c[p].m.has_out;
	for (int h = first; h < first + count; h++) {
		const struct cache_record *r = &run->rec[h].c[p],
		                          *full = &run->rec[h].c[POLICY_FULL];
		/* A kv head's cache is counted once, by its group's first
		 * query head; a cache per query head (query_head) each time. */
		if (run->views[h].view_head % group == 0) {
			sum->tokens += r->m.tokens;
			sum->kv += r->m.kv;
			sum->overlap_h2o += r->m.overlap_h2o;
		}
		sum->recall += r->m.attn_recall;
		for (int k = 0; r->out && k < dim; k++) {
			const double a = r->out[k], f = full->out[k];
			sum->diff += (a - f) * (a - f);
			sum->aa += a * a;
			sum->ff += f * f;
			sum->af += a * f;
		}
	}
	sum->heads += count;
}

void heads_sum_metrics(const struct heads_sum *sum, struct step_metrics *total)
{
	*total = (struct step_metrics){.has_out = sum->has_out,
	                               .tokens = sum->tokens,
	                               .kv = sum->kv,
	                               .overlap_h2o = sum->overlap_h2o};
	total->attn_recall = sum->recall / sum->heads;
	total->out_err = sqrt(sum->diff);
	if (sum->aa == 0.0 || sum->ff == 0.0)
		total->out_cos = sum->aa == sum->ff ? 1.0 : 0.0;
	else
		total->out_cos = sum->af / (sqrt(sum->aa) * sqrt(sum->ff));
}

void heads_run_total_of(const struct heads_run *run, int first, int count, enum policy_id p,
                        struct step_metrics *total)
{
	struct heads_sum sum = {0};
	heads_run_add(run, first, count, p, &sum);
	heads_sum_metrics(&sum, total);
}

void heads_run_total(const struct heads_run *run, enum policy_id p, struct step_metrics *total)
{
	heads_run_total_of(run, 0, run->count, p, total);
}
